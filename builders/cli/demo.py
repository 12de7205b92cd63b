"""``vqabench demo``: rebuild both bundled samples offline, score a scripted baseline, print the tables."""

from __future__ import annotations

import argparse
from pathlib import Path

# The modules doing the work load inside the handlers: lazy for start-up speed.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="offline tour: rebuild both bundled samples, export and load them, score a scripted baseline, "
        "print the paper-style tables, write reports",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "One command, no network, no API key, under a minute:\n"
            "  1. BQA: rebuild the bundled sample from its recorded LLM replies, export it in Hub layout,\n"
            "     load it back with load_dataset\n"
            "  2. MarineLife-16K: the same (configs qa and videos)\n"
            "  3. sample uniform frames from the loaded datasets (PyAV, no torch); contact sheets\n"
            "  4. replay a SCRIPTED BASELINE (recorded replies of a rule-based responder, not a real model)\n"
            "     through the evaluation runners: BQA in both prompt styles, every MarineLife-16K question\n"
            "  5. score with every metric (evaluate.load on metrics/): BQA Easy/Hard/Total, bias breakdowns,\n"
            "     leakage, Self-BLEU; MarineLife-16K per-dimension accuracy, OEMU and BEH/AH/ECF by camera\n"
            "     (judge replies replayed too), on the test split and on all splits pooled\n"
            "  6. write reports (report.md, metrics.json, PNGs) and OUT/summary.md\n"
            "Prints the tables, where everything is and what to run next."
        ),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("vqabench-demo"),
        help="output folder (default ./vqabench-demo); must be new, empty or a previous demo's, whose outputs "
        "are replaced",
    )
    parser.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    from builders.demo.run import run_demo

    run_demo(args.out)
    return 0
