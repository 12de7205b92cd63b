"""Resumable runs: step records in a work folder, the work-folder binding, the LLM step loop."""
