"""Files: atomic writes of files and folders (with the one ownership check), JSON and JSONL with
errors naming file and line, and the redaction of credentials from what is written or logged.

The lowest layer: depends on nothing else in the project.
"""
