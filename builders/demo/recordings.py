"""The demo's bundled recordings: scripted-baseline answers and scripted-judge scores, with their settings.

A recording is two files next to a dataset's sample: ``<name>_replies.jsonl`` (the exported reply
cache, exported with ``stable=True``) and ``<name>_settings.json`` (the LLM settings that make up the cache
keys, never a key, plus the options the requests depend on: frames, styles, splits, rubrics). The
replies come from :mod:`builders.scripted.baseline_responder`, not from a model. A replay with the
same settings and options computes the same keys and finds every reply; nothing is sent.

Recorded with ``python -m builders.testing.samples.record_bqa_baseline`` and ``python -m builders.testing.samples.record_marinelife_baseline``
(:func:`builders.testing.recorder.recording_session`), which run the same evaluation functions as the
demo against a local scripted server reached under a fixed, never-resolving base URL.
"""

from __future__ import annotations

from pathlib import Path

import bqa.sample
import marinelife16k.sample
from builders.llm import Recording

BQA_SAMPLE_DIR = Path(bqa.sample.__file__).resolve().parent
MARINE_SAMPLE_DIR = Path(marinelife16k.sample.__file__).resolve().parent
BASELINE, JUDGE = "baseline", "judge"
SCRIPTED_NOTE = "scripted baseline, not a real model"


def bqa_baseline() -> Recording:
    return Recording.read(BQA_SAMPLE_DIR, BASELINE)


def marine_baseline() -> Recording:
    return Recording.read(MARINE_SAMPLE_DIR, BASELINE)


def marine_judge() -> Recording:
    return Recording.read(MARINE_SAMPLE_DIR, JUDGE)
