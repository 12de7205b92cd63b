"""Maintainer-side engine: video frames, LLM access, pipelines, Hub export and publishing."""
