"""``vqabench push``: publish an exported dataset folder to a Hub dataset repo as one commit (or PR), tagged."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.files.arguments import existing_folder

# The modules doing the work load inside the handlers: lazy for start-up speed.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "push",
        help="validate an exported folder and publish it to a Hub dataset repo (one commit or PR, tagged)",
        description=(
            "Check FOLDER the way the Hub will read it (load_dataset round trip, card YAML with exactly one "
            "default config, no *.py or __pycache__ anywhere, regular files only - no links -, split sizes as "
            "the card says and as the shards hold), then, in one commit onto main (or a pull request with "
            "--create-pr), upload every file and delete the repo's data files this release no longer has; the "
            "commit names the revision it starts from, so a push landing in between makes the Hub refuse it. "
            "Then download that revision, compare every file with the folder's (sha256) and load it again, and "
            "only then tag it with --tag. Prints the commit, the deletions, the verification and how to load "
            "that revision. The token comes from HF_TOKEN or 'hf auth login' and is never printed; HF_ENDPOINT "
            "selects another Hub. Before anything changes, the repo must be reachable, writable and exist (or "
            "use --create-repo), and the tag free - or, for a rerun after an interruption, already on a "
            "revision holding exactly this folder (then checked again and reported done). If the verification "
            "or tagging fails after the commit landed, the error names the commit. A release built from a "
            "bundled sample is refused unless --allow-sample."
        ),
        epilog="Example: vqabench push hub/BQA naist-nlp/BQA --create-pr --tag v1.1 --dry-run",
    )
    parser.add_argument("folder", type=existing_folder, help="exported Hub-layout folder (README.md + data/)")
    parser.add_argument("repo_id", help="dataset repo, <namespace>/<name>")
    parser.add_argument(
        "--create-pr", action="store_true", help="open a pull request instead of committing to main"
    )
    parser.add_argument(
        "--tag",
        help="tag the new commit, e.g. v1.1 (must not exist yet, unless it holds exactly this folder)",
    )
    parser.add_argument("--message", help="commit message (default: 'Release <tag>' or 'Upload <folder>')")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and print the operations, the deletions included (read from the repo, which is not "
        "changed); offline (HF_HUB_OFFLINE=1, no connection) only the local checks, exit status 0 if they "
        "pass; exit status 1 when the Hub answers that the repo cannot be read",
    )
    parser.add_argument(
        "--create-repo",
        action="store_true",
        help="create the dataset repo if it does not exist; private unless --public",
    )
    parser.add_argument("--public", action="store_true", help="with --create-repo: make the new repo public")
    parser.add_argument(
        "--cache-dir", type=Path, help="datasets cache for the check (default: a temporary one)"
    )
    parser.add_argument(
        "--allow-sample",
        action="store_true",
        help="push a release built from a bundled sample or scripted replies (its card says so); refused otherwise",
    )
    parser.set_defaults(func=_push)


def _push(args: argparse.Namespace) -> int:
    import logging

    from builders.hub.publish import PushError, plan_push, push, with_remote

    if not args.verbose:  # one INFO line per HTTP request drowns the summary; -v shows them
        for name in ("httpx2", "httpx"):
            logging.getLogger(name).setLevel(logging.WARNING)
    if args.public and not args.create_repo:
        raise ValueError("--public only applies with --create-repo")
    plan = plan_push(
        args.folder,
        args.repo_id,
        commit_message=args.message,
        create_pr=args.create_pr,
        tag=args.tag,
        create_repo=args.create_repo,
        private=not args.public,
        cache_dir=args.cache_dir,
        allow_sample=args.allow_sample,
    )
    if args.dry_run:
        try:
            plan = with_remote(plan)  # reads the repo's file list to show the deletions
        except PushError as err:
            print(plan.describe())
            if err.unreachable:  # every local check passed; only the Hub's side is unknown
                reason = str(err).removesuffix(" (nothing was pushed)")
                print(
                    "dry run: nothing was sent; the folder passed every local check. Not checked against the "
                    f"Hub, which was not reached: {reason}. The push itself checks the repo's access and lists "
                    "the deletions."
                )
                return 0
            print(
                f"dry run: nothing was sent; the repo's files could not be read, so the deletions are unknown: {err}"
            )
            return 1
        print(plan.describe())
        print("dry run: nothing was sent")
        return 0
    print(plan.describe())
    print(push(plan).describe())
    return 0
