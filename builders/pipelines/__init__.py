"""Regeneration pipelines (the design's builder scripts): raw sources -> LLM steps -> a release."""
