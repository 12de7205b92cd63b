"""``vqabench leaderboard``: a benchmark's leaderboard (Markdown + PNG) from eval results or the Hub."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from builders.cli._benchmarks import add_benchmark_argument
from builders.files.arguments import existing_folder

# The modules doing the work load inside the handlers: lazy for start-up speed.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="rank models per task of a benchmark from .eval_results files or the Hub's leaderboard API",
        description=(
            "Write OUT/report.md (one ranking per task of the benchmark's eval.yaml, with the 95% interval "
            "and n where a result's notes carry them, and whether it is on the model repo's main or still "
            "in a pull request), OUT/metrics.json and PNG bar charts. Results come from a folder of model "
            "folders (--from ROOT: ROOT/<namespace>/<name>/.eval_results/*.yaml) or from the Hub "
            "(--hub: HfApi.get_dataset_leaderboard, every submitted result; HF_ENDPOINT selects another Hub)."
        ),
        epilog="Example: vqabench leaderboard bqa --from results/ --out leaderboard/bqa",
    )
    add_benchmark_argument(parser, "which benchmark")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--from", dest="root", type=existing_folder, help="folder of model folders with .eval_results/"
    )
    source.add_argument("--hub", action="store_true", help="read the Hub's leaderboard for the dataset")
    parser.add_argument(
        "--dataset-id",
        help="benchmark dataset repo (default: $VQABENCH_BQA_REPO_ID / $VQABENCH_MARINELIFE16K_REPO_ID, else "
        "the card's: naist-nlp/BQA for BQA; MarineLife-16K has none until set)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md, metrics.json, PNGs")
    parser.add_argument(
        "--allow-mixed",
        action="store_true",
        help="rank together results scored on different videos (a named subset and the whole split, or two "
        "subsets, as their notes record) instead of refusing; they are marked",
    )
    parser.set_defaults(func=_leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    import logging

    from builders.cli._benchmarks import dataset_id, registry
    from builders.report.leaderboard import rows_from_folder, rows_from_hub, write_leaderboard

    if not args.verbose:
        for name in ("httpx2", "httpx"):
            logging.getLogger(name).setLevel(logging.WARNING)
    published = registry()[args.benchmark].published()
    chosen = dataset_id(published, args.dataset_id)
    repo = chosen.repo_id
    if args.hub:
        from builders.hub.publish import resolve_endpoint

        endpoint = resolve_endpoint()
        rows = rows_from_hub(repo, endpoint=endpoint, default_task=published.eval_yaml.tasks[0].id)
        source = f"the Hub's leaderboard at {endpoint}"
    else:
        rows = rows_from_folder(args.root, repo)
        source = f"the eval results under {args.root}"
    report = write_leaderboard(
        published.eval_yaml,
        repo,
        rows,
        args.out,
        source=source,
        dataset_id_from=f"from {chosen.source}",
        allow_mixed=args.allow_mixed,
    )
    for problem in report.metrics["skipped"]:
        print(f"skipped {problem}", file=sys.stderr)
    for task in published.eval_yaml.tasks:
        ranked = report.metrics["tasks"][task.id]
        if ranked:
            best = ranked[0]
            print(f"{task.id}: {len(ranked)} model(s); first {best['model_id']} {best['value']:g}")
    print(f"wrote {report.markdown} and {len(report.figures)} figure(s)")
    return 0
