"""``vqabench``: one command line for researchers and maintainers.

Each subcommand lives in its own module under :mod:`builders.cli` and exposes
``register(subparsers)``; it sets ``func`` on its parser, called with the parsed namespace.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vqabench",
        description=(
            "Tooling for the BQA (body-language emotion QA) and MarineLife-16K (marine video QA and "
            "captioning) benchmarks: sample frames, rebuild the datasets from raw sources with an LLM, "
            "export and publish them to the Hugging Face Hub, score model predictions, write reports."
        ),
        epilog="Run 'vqabench demo' first: it rebuilds both bundled samples offline and scores them.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    # One INFO line per HTTP request would bury the progress: those loggers speak only with -v.
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
        logging.getLogger(name).setLevel(logging.NOTSET if args.verbose else logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        # Expected user-facing failures: one clear line, no traceback (use -v to see it).
        if args.verbose:
            raise
        print(f"vqabench: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
