"""The ``--llm-*`` command-line options shared by every command that calls an LLM, and the settings
and client they give.

Argparse only at import time: a command module can add these options without loading openai or
pydantic, so ``vqabench --help`` prints at once. The settings and client modules load when a
handler asks for them (lazy for start-up speed).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from builders.llm.client import LLMClient
    from builders.llm.settings import LLMSettings


def add_llm_arguments(parser: argparse.ArgumentParser, cache: bool = True) -> None:
    """Add the shared ``--llm-*`` options to a pipeline's (or judge's) CLI parser.

    Pair with :func:`settings_from_args` / :func:`client_from_args`. Options left unset fall back to
    ``VQABENCH_LLM_*`` environment variables. ``cache=False`` leaves out the cache options
    (``--llm-cache``, ``--llm-mode``, ``--llm-replies``).
    """
    group = parser.add_argument_group("LLM", "endpoint and cache (defaults from VQABENCH_LLM_* variables)")
    group.add_argument("--llm-model", help="model id, e.g. gemini-2.5-flash (env VQABENCH_LLM_MODEL)")
    group.add_argument("--llm-base-url", help="OpenAI-compatible base URL (env VQABENCH_LLM_BASE_URL)")
    group.add_argument(
        "--llm-api-key-env",
        help="NAME of the variable holding the API key, not the key (env VQABENCH_LLM_API_KEY_ENV)",
    )
    group.add_argument("--llm-concurrency", type=int, help="requests in flight at once")
    if not cache:
        return
    group.add_argument("--llm-cache", help="SQLite reply cache; reruns never repeat a call that succeeded")
    group.add_argument(
        "--llm-mode",
        choices=("normal", "refresh", "replay"),
        default="normal",
        help="normal: use and fill the cache; refresh: call again and overwrite; "
        "replay: cache or recorded replies only, a miss is an error",
    )
    group.add_argument("--llm-replies", help="recorded replies (JSONL) to replay from, instead of a cache")


def settings_from_args(args: argparse.Namespace) -> LLMSettings:
    """Settings from :func:`add_llm_arguments` options, falling back to the environment."""
    from builders.llm.settings import LLMSettings  # lazy for start-up speed (pydantic)

    return LLMSettings.from_env(
        model=args.llm_model,
        base_url=args.llm_base_url,
        api_key_env=args.llm_api_key_env,
        max_concurrency=args.llm_concurrency,
    )


def client_from_args(
    args: argparse.Namespace, default_cache: str | Path | None = None, *, progress: bool | None = None
) -> LLMClient:
    """An :class:`~builders.llm.LLMClient` from :func:`add_llm_arguments` options (``--llm-cache``
    defaults to ``default_cache``, e.g. ``<work dir>/llm-cache.sqlite``). ``progress=False`` silences
    the client's own bar, for callers that show a bar per step."""
    from builders.llm.client import LLMClient  # lazy for start-up speed (openai)

    settings = settings_from_args(args)
    if progress is not None:
        settings = settings.model_copy(update={"progress": progress})
    if args.llm_replies:
        return LLMClient(settings, replies_path=args.llm_replies)
    return LLMClient(settings, cache_path=args.llm_cache or default_cache, mode=args.llm_mode)
