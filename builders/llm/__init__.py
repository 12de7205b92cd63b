"""LLM access for every generation step and judge: one OpenAI-compatible client, cached and validated.

Public API (see each module for details), re-exported here and resolved on first use, so importing
the package (or its argparse-only :mod:`builders.llm.cli`) does not load openai or pydantic:

- :class:`LLMSettings` (endpoint, model, *name* of the key variable, concurrency, retries, sampling);
  :func:`add_llm_arguments` (every setting a ``--llm-*`` flag; :mod:`builders.llm.cli`) /
  :func:`settings_from_args` / :func:`client_from_args` for CLIs.
- Messages: :func:`system_message`, :func:`user_message` (text + image data URLs),
  :func:`assistant_message` (frames -> data URLs: :func:`builders.video.sampler.frames_to_data_urls`).
- :class:`LLMRequest` -> :class:`LLMClient` ``.run()`` / ``await .arun()`` -> :class:`LLMResult`
  (its :class:`Status` says what became of the request);
  :class:`UsageSummary` in ``client.usage``.
- Structured replies: :func:`gemini_safe_schema`, :func:`parse_json_reply`, :class:`ReplyError`.
- Recorded replies: :class:`ReplyCache`, :func:`export_replies`, :func:`import_replies`,
  :func:`load_replies`.
- ``mode="batch"`` (``--llm-mode batch``): the misses of the cache answered by OpenAI-format batch
  rounds (:mod:`builders.llm.batch`; files :mod:`builders.llm.batch_files`, journal
  :mod:`builders.llm.batch_store`).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CachedReply": "builders.llm.cache",
    "ReplyCache": "builders.llm.cache",
    "cache_key": "builders.llm.cache",
    "export_replies": "builders.llm.cache",
    "import_replies": "builders.llm.cache",
    "load_replies": "builders.llm.cache",
    "read_replies": "builders.llm.cache",
    "add_llm_arguments": "builders.llm.cli",
    "client_from_args": "builders.llm.cli",
    "settings_from_args": "builders.llm.cli",
    "llm_setting_overrides": "builders.llm.cli",
    "MODES": "builders.llm.client",
    "LLMClient": "builders.llm.client",
    "LLMRequest": "builders.llm.client",
    "LLMResult": "builders.llm.client",
    "Mode": "builders.llm.client",
    "ReplayMissError": "builders.llm.client",
    "Status": "builders.llm.client",
    "Message": "builders.llm.messages",
    "assistant_message": "builders.llm.messages",
    "system_message": "builders.llm.messages",
    "user_message": "builders.llm.messages",
    "Recording": "builders.llm.recording",
    "ReplyError": "builders.llm.schema",
    "ReplySchema": "builders.llm.schema",
    "gemini_safe_schema": "builders.llm.schema",
    "parse_json_reply": "builders.llm.schema",
    "validate_json_schema": "builders.llm.schema",
    "LLMSettings": "builders.llm.settings",
    "TokenUsage": "builders.llm.usage",
    "UsageSummary": "builders.llm.usage",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    # Lazy for start-up speed: the client module imports openai (about 0.4 s).
    if name not in _EXPORTS:
        raise AttributeError(f"module 'builders.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # resolved once
    return value
