"""Recorded replies and the settings they were recorded under: what rebuilds a run offline.

A recording is two files in one folder: ``<name>_replies.jsonl`` (an exported reply cache, with
``stable=True`` so re-recording gives the same bytes) and ``<name>_settings.json``::

    {"note": "...", "llm": <LLMSettings.cache_identity()>, "options": {...}}

``llm`` holds the settings that enter every cache key (never a key, never the key's variable) and
``options`` whatever else shaped the requests (frames, seeds, styles...). A replay under the same
settings and options computes the same keys and finds every reply; a miss is an error and nothing
is sent (:class:`~builders.llm.client.ReplayMissError`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.jsonio import read_json_object, write_json_atomic
from builders.llm.client import LLMClient
from builders.llm.settings import CACHE_IDENTITY_FIELDS, LLMSettings


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
        """The recording ``name`` in ``folder``; a missing or malformed file is an error naming it."""
        path = Path(folder) / f"{name}_settings.json"
        data = read_json_object(path)
        try:
            llm = {key: data["llm"][key] for key in CACHE_IDENTITY_FIELDS}
            # Replay sends nothing, so no key is needed (and none was recorded).
            settings = LLMSettings(**llm, api_key_env=None, progress=False)
            recording = cls(Path(folder), name, settings, dict(data["options"]), str(data.get("note", "")))
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path}: not a recorded-settings file ({type(err).__name__}: {err})") from None
        if not recording.replies_path.is_file():
            raise FileNotFoundError(f"no recorded replies at {recording.replies_path} (settings: {path})")
        return recording

    def replay_client(self) -> LLMClient:
        """A client answering from the recorded replies only: a miss is an error and nothing is sent."""
        return LLMClient(self.settings, replies_path=self.replies_path)
