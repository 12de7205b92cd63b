"""Rebuild the bundled BoLD-format sample offline from its recorded replies (``bqa build --sample --replay``).

``bqa/sample/llm_settings.json`` holds the LLM settings and build options the replies were recorded
with (written by ``python -m bqa.sample.record_replies``); ``bqa/sample/replies.jsonl`` the replies.
The LLM cache key covers model, endpoint, sampling, prompt versions and the frames' bytes, so a
replay must use exactly these settings: then every request is found and nothing is sent.
The replies come from the scripted test responder (:mod:`builders.testing.bqa_responder`), not from a
model: the sample exists to exercise the tooling offline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bqa.sample
from bqa.sample import sample_root
from builders.bqa_pipeline.runner import BuildOptions
from builders.frame_spec import FrameSpec
from builders.llm import LLMClient, LLMSettings

SAMPLE_DIR = Path(bqa.sample.__file__).resolve().parent
REPLIES_FILE, SETTINGS_FILE = "replies.jsonl", "llm_settings.json"
SAMPLE_NOTE = "bundled BoLD-format sample (synthetic clips)"
SCRIPTED_NOTE = (
    SAMPLE_NOTE + "; questions, filter verdicts and answers from a scripted test responder, not from a model"
)


@dataclass(frozen=True)
class SampleRecording:
    """What ``llm_settings.json`` says: the LLM settings, the build options and the responder's settings."""

    settings: LLMSettings
    seed: int
    frames: FrameSpec
    limit: int | None
    responder: dict[str, Any]

    def options(self, **overrides: Any) -> BuildOptions:
        values = {"bold_root": sample_root(), "seed": self.seed, "frames": self.frames, "limit": self.limit,
                  "source_note": SCRIPTED_NOTE, **overrides}  # fmt: skip
        return BuildOptions(**values)

    def to_json(self) -> dict[str, Any]:
        return {
            "note": "Settings with which bqa/sample/replies.jsonl was recorded, from the scripted test responder "
            "(builders/testing/bqa_responder.py), not from a model. `vqabench bqa build --sample --replay` "
            "rebuilds the sample release from them with no network.",
            "llm": self.settings.model_dump(
                include={
                    "model",
                    "base_url",
                    "api_key_env",
                    "temperature",
                    "seed",
                    "max_tokens",
                    "extra_body",
                }
            ),  # fmt: skip
            "build": {"seed": self.seed, "frames": self.frames.to_json(), "limit": self.limit},
            "responder": self.responder,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SampleRecording:
        build = data["build"]
        return cls(
            settings=LLMSettings(**data["llm"], progress=False),
            seed=int(build["seed"]),
            frames=FrameSpec.from_json(build["frames"]),
            limit=build.get("limit"),
            responder=dict(data.get("responder") or {}),
        )


def load_recording(sample_dir: str | Path = SAMPLE_DIR) -> SampleRecording:
    path = Path(sample_dir) / SETTINGS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no recorded settings at {path}; run 'python -m bqa.sample.record_replies'")
    try:
        return SampleRecording.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{path}: malformed recorded settings ({type(err).__name__}: {err})") from None


def replay_client(sample_dir: str | Path = SAMPLE_DIR) -> LLMClient:
    """A client that answers from the sample's recorded replies only (a miss is an error, nothing is sent)."""
    return LLMClient(load_recording(sample_dir).settings, replies_path=Path(sample_dir) / REPLIES_FILE)
