"""``vqabench llm``: inspect the LLM reply cache, move recorded replies in and out, check an endpoint."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from builders.llm.cli import add_llm_arguments, settings_from_args

#: Left in ``llm batch write``'s folder: it writes request files only into a folder of its own.
BATCH_MARKER = ".vqabench-batch-requests"

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

    _register_batch(commands)

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


def _register_batch(commands: argparse._SubParsersAction) -> None:
    batch = commands.add_parser(
        "batch",
        help="OpenAI-format batch files for offline engines (vLLM run_batch), and the batches of a run",
        description="A command run with --llm-mode batch answers what its reply cache lacks with OpenAI-format "
        "batches, round by round. 'write' runs such a command up to its next round and writes that round's "
        "request files instead of submitting them; an engine that reads the format (python -m "
        "vllm.entrypoints.openai.run_batch -i FILE -o RESULTS.jsonl --model M) answers them; 'read' keeps the "
        "results (each line checked as a reply when the command runs again). 'cancel' cancels a run's batches.",
    )
    actions = batch.add_subparsers(title="batch commands", metavar="ACTION", required=True)
    write = actions.add_parser(
        "write",
        help="run a vqabench LLM command up to its next round and write that round's batch files",
        description="Example: vqabench llm batch write requests/ -- bqa evaluate --data D --split test --out "
        "P.jsonl --llm-model M --llm-base-url U. Writes requests/shard-001.jsonl (OpenAI batch request lines, "
        "custom_id = reply-cache key). Rerun the same line after 'llm batch read' for the next round; it "
        "finishes the command once every reply is in.",
    )
    write.add_argument("out_dir", type=Path, help="folder to write the round's batch files to")
    write.add_argument(
        "command", nargs=argparse.REMAINDER, help="-- then the vqabench command and its options"
    )
    write.set_defaults(func=_batch_write)
    read = actions.add_parser(
        "read",
        help="keep an offline engine's results (OpenAI batch output lines) for the command's next run",
        description="Check each line of RESULTS (the documented output shape, a custom_id that was written) "
        "and keep it in the batch folder; the command, run again, checks each reply as a synchronous one "
        "(JSON, schema, the item it names, size) before it enters the reply cache.",
    )
    read.add_argument("results", nargs="+", type=Path, help="output JSONL file(s) of the engine")
    read.add_argument("--batches", type=Path, required=True,
                      help="the run's batch folder (<work>/llm-cache-batches, named by 'write')")  # fmt: skip
    read.set_defaults(func=_batch_read)
    cancel = actions.add_parser("cancel", help="cancel the batches a run left running at the provider")
    cancel.add_argument("--batches", type=Path, required=True, help="the run's batch folder")
    add_llm_arguments(cancel, cache=False)
    cancel.set_defaults(func=_batch_cancel)


def _batch_write(args: argparse.Namespace) -> int:
    import builders.cli
    import builders.llm.cli as llm_cli
    from builders.llm.batch import BatchPending

    command = [a for a in args.command if a != "--"] if args.command[:1] == ["--"] else list(args.command)
    if not command:
        raise ValueError("give the command after --, e.g. vqabench llm batch write OUT -- bqa evaluate ...")
    from builders.files.folders import claim_folder

    llm_cli.WRITE_TO = claim_folder(args.out_dir, marker=BATCH_MARKER)
    try:
        status = builders.cli.main([*command, "--llm-mode", "batch"])
    except BatchPending as pending:
        print(pending)
        return 0
    finally:
        llm_cli.WRITE_TO = None
    if status == 0:
        print("nothing left to ask: the command finished from the reply cache")
    return status


def _batch_read(args: argparse.Namespace) -> int:
    from builders.llm.batch import BatchMode
    from builders.llm.batch_store import BatchStore

    if not args.batches.is_dir():
        raise FileNotFoundError(f"no batch folder at {args.batches}")
    mode = BatchMode(BatchStore.open(args.batches))
    for path in args.results:
        kept, refused = mode.read_file(path)
        print(f"{path}: kept {kept} result line(s)" + (f", refused {refused}" if refused else ""))
    return 0


def _batch_cancel(args: argparse.Namespace) -> int:
    from builders.llm.batch import api
    from builders.llm.batch_store import BatchStore
    from builders.llm.client import LLMClient

    store = BatchStore.open(args.batches)
    running = [s for s in store.outstanding() if s.batch_id is not None]
    with LLMClient(settings_from_args(args)) as client:
        sdk = api(client)
        for shard in running:
            batch = sdk.batches.cancel(str(shard.batch_id))
            print(f"{batch.id}: {batch.status}")
    if not running:
        print(f"{args.batches}: no batch left running")
    return 0
