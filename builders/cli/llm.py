"""``vqabench llm``: inspect the LLM reply cache, move recorded replies in and out, check an endpoint."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from builders.llm.cli import add_llm_arguments, settings_from_args

# The cache and client modules (sqlite, openai) load inside the handlers: lazy for start-up speed.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "llm",
        help="LLM reply cache and recorded replies (stats, export, import, endpoint check)",
        description=(
            "Every LLM call of the pipelines and judges goes through one client with an on-disk SQLite "
            "reply cache. These commands show what a cache holds, export its replies as JSONL (what a "
            "release ships so it can be rebuilt offline in replay mode), import such a file, and check "
            "that an endpoint answers."
        ),
    )
    commands = parser.add_subparsers(title="llm commands", metavar="ACTION", required=True)

    stats = commands.add_parser(
        "cache-stats",
        help="replies, tokens, reported models and prompt versions in a cache",
        description="Summarise a reply cache: row count, recorded tokens, replies per model and per prompt.",
    )
    stats.add_argument("cache", help="SQLite reply cache file")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    stats.set_defaults(func=_cache_stats)

    export = commands.add_parser(
        "export-replies",
        help="write a cache's replies to JSONL (sorted, no secrets)",
        description="Write every cached reply to a JSONL file, one row each, sorted by key. The file holds "
        "replies and their metadata only (no request messages, no credentials).",
    )
    export.add_argument("cache", help="SQLite reply cache file")
    export.add_argument("--out", required=True, help="JSONL file to write")
    export.add_argument(
        "--stable",
        action="store_true",
        help="blank creation times and durations, so re-recording the same replies gives the same bytes",
    )
    export.set_defaults(func=_export)

    imp = commands.add_parser(
        "import-replies",
        help="add recorded replies (JSONL) to a cache",
        description="Insert the replies of a JSONL file (from export-replies) into a cache, replacing rows "
        "with the same key. The cache is created if missing.",
    )
    imp.add_argument("replies", help="JSONL file of recorded replies")
    imp.add_argument("cache", help="SQLite reply cache file")
    imp.set_defaults(func=_import)

    check = commands.add_parser(
        "check",
        help="send one tiny request to the configured endpoint",
        description="Send one short, uncached request and print the model id the server reports, the "
        "reply and the time taken. Uses the --llm-* options or VQABENCH_LLM_* variables.",
    )
    add_llm_arguments(check, cache=False)
    check.set_defaults(func=_check)


def _cache_stats(args: argparse.Namespace) -> int:
    from builders.llm.cache import ReplyCache

    if not Path(args.cache).is_file():
        raise FileNotFoundError(f"no reply cache at {args.cache}")
    with ReplyCache(args.cache) as cache:
        stats = cache.stats()
    if args.json:
        print(json.dumps(stats, indent=2, sort_keys=True))
        return 0
    print(f"{stats['path']}: {stats['replies']} replies, tokens in {stats['prompt_tokens']:,} / "
          f"out {stats['completion_tokens']:,}")  # fmt: skip
    for title, counts in (("models (as reported)", stats["models"]), ("prompts", stats["prompts"])):
        print(f"{title}:")
        for name, count in counts.items():
            print(f"  {name}: {count}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from builders.llm.cache import export_replies

    count = export_replies(args.cache, args.out, stable=args.stable)
    print(f"wrote {count} replies to {args.out}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from builders.llm.cache import import_replies

    count = import_replies(args.replies, args.cache)
    print(f"imported {count} replies into {args.cache}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from builders.files.redact import redact_url
    from builders.llm import LLMClient, LLMRequest, user_message

    settings = settings_from_args(args).model_copy(update={"progress": False})
    url = redact_url(settings.base_url)
    request = LLMRequest([user_message("Reply with the single word: ready")])
    started = time.perf_counter()
    with LLMClient(settings) as client:
        result = client.run_one(request)
    if not result.ok:
        raise RuntimeError(f"{url} ({settings.model}) did not answer: {result.error}")
    print(f"{url}: model {result.model_reported or settings.model} answered "
          f"{result.value.strip()[:80]!r} in {time.perf_counter() - started:.2f} s")  # fmt: skip
    return 0
