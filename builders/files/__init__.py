"""Files: atomic writes of files and folders, JSON and JSONL with errors naming file and line.

The lowest layer: depends on nothing else in the project.
"""
