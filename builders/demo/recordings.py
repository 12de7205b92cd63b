"""The demo's bundled recordings: scripted-baseline answers and scripted-judge scores, with their settings.

A recording is two files next to a dataset's sample: ``<name>_replies.jsonl`` (the exported reply
cache, exported with ``stable=True``) and ``<name>_settings.json`` (the LLM settings that make up the cache
keys, never a key, plus the options the requests depend on: frames, styles, splits, rubrics). The
replies come from :mod:`builders.testing.baseline_responder`, not from a model. A replay with the
same settings and options computes the same keys and finds every reply; nothing is sent.

Recorded with ``python -m bqa.sample.record_baseline`` and ``python -m marinelife16k.sample.record_baseline``,
which run the same evaluation functions as the demo (:mod:`builders.demo.evaluation`) against a
local :class:`~builders.testing.chat_server.ChatServer` reached under a fixed, never-resolving base
URL (``http://<name>.invalid/v1``, through :meth:`ChatServer.as_http_proxy`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bqa.sample
import marinelife16k.sample
from builders.jsonio import write_json_atomic
from builders.llm import LLMClient, LLMSettings, export_replies

BQA_SAMPLE_DIR = Path(bqa.sample.__file__).resolve().parent
MARINE_SAMPLE_DIR = Path(marinelife16k.sample.__file__).resolve().parent
BASELINE, JUDGE = "baseline", "judge"
SCRIPTED_NOTE = "scripted baseline, not a real model"


@dataclass(frozen=True)
class Recording:
    """Replies recorded under ``settings`` and ``options``, stored as ``<folder>/<name>_*``."""

    folder: Path
    name: str
    settings: LLMSettings
    options: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def replies_path(self) -> Path:
        return Path(self.folder) / f"{self.name}_replies.jsonl"

    @property
    def settings_path(self) -> Path:
        return Path(self.folder) / f"{self.name}_settings.json"

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "llm": self.settings.cache_identity(), "options": self.options}

    def write_settings(self) -> Path:
        return write_json_atomic(self.settings_path, self.to_json())

    @classmethod
    def read(cls, folder: str | Path, name: str) -> Recording:
        path = Path(folder) / f"{name}_settings.json"
        if not path.is_file():
            raise FileNotFoundError(f"no recorded settings at {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            settings = LLMSettings(**data["llm"], api_key_env=None, progress=False)
            recording = cls(Path(folder), name, settings, dict(data["options"]), str(data.get("note", "")))
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path}: not a recorded-settings file ({type(err).__name__}: {err})") from None
        if not recording.replies_path.is_file():
            raise FileNotFoundError(f"no recorded replies at {recording.replies_path} (settings: {path})")
        return recording

    def replay_client(self) -> LLMClient:
        """A client answering from the recorded replies only: a miss is an error and nothing is sent."""
        return LLMClient(self.settings, replies_path=self.replies_path)


def bqa_baseline() -> Recording:
    return Recording.read(BQA_SAMPLE_DIR, BASELINE)


def marine_baseline() -> Recording:
    return Recording.read(MARINE_SAMPLE_DIR, BASELINE)


def marine_judge() -> Recording:
    return Recording.read(MARINE_SAMPLE_DIR, JUDGE)


@contextmanager
def recording_session(
    recording: Recording, handler: Callable[[Mapping[str, Any]], Any], cache_path: str | Path, reported: str
) -> Iterator[LLMClient]:
    """A live client under ``recording``'s settings whose requests reach a local scripted server
    (``handler``, reporting model ``reported``) through :meth:`ChatServer.as_http_proxy`; on a clean
    exit the cache is exported to the recording's replies file (``export_replies(..., stable=True)``) and its
    settings written. A handler error fails the recording."""
    from builders.testing.chat_server import ChatServer

    with ChatServer(model=reported) as server, server.as_http_proxy():
        server.handler = handler
        with LLMClient(recording.settings, cache_path=cache_path) as client:
            yield client
        if server.errors:
            raise RuntimeError(f"the scripted responder failed: {server.errors[:3]}")
        if not server.chat_requests:
            raise RuntimeError("nothing was recorded: no request reached the scripted server")
    Path(recording.folder).mkdir(parents=True, exist_ok=True)
    export_replies(cache_path, recording.replies_path, stable=True)
    recording.write_settings()
