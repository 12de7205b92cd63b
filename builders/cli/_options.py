"""Argument helpers shared by the dataset commands (``vqabench bqa``, ``vqabench marinelife``).

Argparse only: every command's ``--help`` builds these parsers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.files.arguments import existing_folder
from builders.options.numbers import POSITIVE_INT


def add_export_arguments(parser: argparse.ArgumentParser, repo_help: str) -> None:
    """``WORK_DIR OUT_DIR --repo-id --max-shard-mb --cache-dir`` of an ``export`` action."""
    parser.add_argument(
        "work_dir", type=existing_folder, help="work folder holding release/ (written by 'build')"
    )
    parser.add_argument(
        "out_dir",
        type=Path,
        help="folder to write: new, empty, or one an earlier export wrote (then replaced)",
    )
    parser.add_argument("--repo-id", default=None, help=repo_help)
    parser.add_argument(
        "--max-shard-mb", type=POSITIVE_INT, default=500, help="largest Parquet shard, in MB (default 500)"
    )
    parser.add_argument(
        "--cache-dir", type=Path, help="datasets cache for the build (default <work>/.cache/datasets)"
    )


def add_build_export_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, repo_help: str
) -> None:
    """``--export OUT_DIR --repo-id`` of a ``build`` action: export the release once it is complete."""
    parser.add_argument(
        "--export", type=Path, metavar="OUT_DIR", help="then export the release to a Hub-layout folder"
    )
    parser.add_argument("--repo-id", help=repo_help)


def export_repo_id(given: str | None, benchmark: str, card_default: str) -> str:
    """The repo id an export's card names: ``--repo-id``, else the configured one
    (:mod:`builders.hub.repo_ids`), else the card's default (MarineLife-16K's is a placeholder)."""
    from builders.hub.repo_ids import configured_repo_id

    return given or configured_repo_id(benchmark) or card_default
