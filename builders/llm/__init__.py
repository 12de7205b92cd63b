"""LLM access for every generation step and judge: one OpenAI-compatible client, cached and validated.

Public API (see each module for details):

- :class:`LLMSettings` (endpoint, model, *name* of the key variable, concurrency, retries, sampling);
  :func:`add_llm_arguments` / :func:`settings_from_args` / :func:`client_from_args` for CLIs.
- Messages: :func:`system_message`, :func:`user_message` (text + image data URLs),
  :func:`assistant_message` (frames -> data URLs: :func:`builders.video.sampler.frames_to_data_urls`).
- :class:`LLMRequest` -> :class:`LLMClient` ``.run()`` / ``await .arun()`` -> :class:`LLMResult`;
  :class:`UsageSummary` in ``client.usage``.
- Structured replies: :func:`gemini_safe_schema`, :func:`parse_json_reply`, :class:`ReplyError`.
- Recorded replies: :class:`ReplyCache`, :func:`export_replies`, :func:`import_replies`,
  :func:`load_replies`.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from builders.llm.cache import (
    CachedReply,
    ReplyCache,
    cache_key,
    export_replies,
    import_replies,
    load_replies,
    read_replies,
)
from builders.llm.client import MODES, LLMClient, LLMRequest, LLMResult, Mode, ReplayMissError
from builders.llm.messages import Message, assistant_message, system_message, user_message
from builders.llm.recording import Recording
from builders.llm.schema import (
    ReplyError,
    ReplySchema,
    gemini_safe_schema,
    parse_json_reply,
    validate_json_schema,
)
from builders.llm.settings import LLMSettings, add_llm_arguments, settings_from_args
from builders.llm.usage import TokenUsage, UsageSummary

WORST_CASE_NOTICE_SECONDS = 300.0  # a hanging endpoint may hold each item this long: say so first


def warn_if_slow(settings: LLMSettings) -> None:
    """Log, before anything is sent, how long a hanging endpoint can hold each item, when that is long."""
    if settings.worst_case_seconds() > WORST_CASE_NOTICE_SECONDS:
        logging.getLogger("builders.llm").warning("%s", settings.worst_case_note())


def client_from_args(
    args: argparse.Namespace, default_cache: str | Path | None = None, *, progress: bool | None = None
) -> LLMClient:
    """An :class:`LLMClient` from :func:`add_llm_arguments` options (``--llm-cache`` defaults to
    ``default_cache``, e.g. ``<work dir>/llm-cache.sqlite``). ``progress=False`` silences the
    client's own bar, for callers that show a bar per step."""
    settings = settings_from_args(args)
    if progress is not None:
        settings = settings.model_copy(update={"progress": progress})
    warn_if_slow(settings)
    if args.llm_replies:
        return LLMClient(settings, replies_path=args.llm_replies)
    return LLMClient(settings, cache_path=args.llm_cache or default_cache, mode=args.llm_mode)


__all__ = [
    "MODES",
    "Recording",
    "CachedReply",
    "LLMClient",
    "LLMRequest",
    "LLMResult",
    "LLMSettings",
    "Message",
    "Mode",
    "ReplayMissError",
    "ReplyCache",
    "warn_if_slow",
    "ReplyError",
    "ReplySchema",
    "TokenUsage",
    "UsageSummary",
    "add_llm_arguments",
    "assistant_message",
    "cache_key",
    "client_from_args",
    "export_replies",
    "gemini_safe_schema",
    "import_replies",
    "load_replies",
    "parse_json_reply",
    "read_replies",
    "settings_from_args",
    "system_message",
    "user_message",
    "validate_json_schema",
]
