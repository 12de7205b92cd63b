"""Scripted stand-ins for the LLMs the project talks to, shipped so that ``vqabench serve`` works from a wheel.

No model anywhere: each responder is a deterministic function of the request (a hash of its text and
frames), so the same request always gets the same reply. :mod:`.bqa_responder` plays the BQA
pipeline's generator and filter, :mod:`.marinelife_responder` the MarineLife-16K caption engine and QA
generation, :mod:`.baseline_responder` a baseline VideoLLM and a judge; :mod:`.served` puts them behind
one handler and :mod:`.server` serves it on 127.0.0.1. Request readers: :mod:`.chat_requests`;
schema-valid and invalid values: :mod:`.schema_examples`. The test doubles (``builders.testing``, not
shipped) and the sample-recording scripts use the same responders. Like a test double, nothing here
imports what it stands in front of (pipelines, runners): ``tests/test_layering.py``.
"""
