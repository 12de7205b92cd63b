"""Rebuild the bundled BoLD-format sample offline from its recorded replies (``bqa build --sample --replay``).

The recording ``pipeline`` in ``bqa/sample/`` (:class:`builders.llm.Recording`:
``pipeline_replies.jsonl`` + ``pipeline_settings.json``, written by ``python -m builders.testing.samples.record_bqa_pipeline``)
holds the replies and the LLM settings and build options they were recorded with. The LLM cache key
covers model, endpoint, sampling, prompt versions and the frames' bytes, so a replay must use exactly
these settings: then every request is found and nothing is sent. The replies come from the scripted
test responder (:mod:`builders.scripted.bqa_responder`), not from a model: the sample exists to
exercise the tooling offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bqa.sample
from bqa.sample import sample_root
from builders.llm import LLMClient, Recording
from builders.pipelines.bqa.runner import BuildOptions
from builders.video.frame_spec import FrameSpec

SAMPLE_DIR = Path(bqa.sample.__file__).resolve().parent
PIPELINE = "pipeline"
SAMPLE_NOTE = "bundled BoLD-format sample (synthetic clips)"
SCRIPTED_NOTE = (
    SAMPLE_NOTE + "; questions, filter verdicts and answers from a scripted test responder, not from a model"
)


def build_options(recording: Recording, **overrides: Any) -> BuildOptions:
    """The build options a recording's replies answer: its seed, frames and row limit."""
    recorded = recording.options
    values = {"bold_root": sample_root(), "seed": int(recorded["seed"]), "limit": recorded.get("limit"),
              "frames": FrameSpec.from_json(recorded["frames"]), "source_note": SCRIPTED_NOTE, **overrides}  # fmt: skip
    return BuildOptions(**values)


def load_recording(sample_dir: str | Path = SAMPLE_DIR) -> Recording:
    return Recording.read(sample_dir, PIPELINE)


def replay_client(sample_dir: str | Path = SAMPLE_DIR) -> LLMClient:
    """A client that answers from the sample's recorded replies only (a miss is an error, nothing is sent)."""
    return load_recording(sample_dir).replay_client()
