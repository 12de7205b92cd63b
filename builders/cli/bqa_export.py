"""``vqabench bqa-data``: check a BoLD source, report a release's statistics, export it in Hub layout."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bqa-data",
        help="BQA data: check a BoLD source, release statistics, export to a Hub-layout folder",
        description=(
            "Work with BQA's data outside the LLM pipeline: check that a BoLD root (annotations/train.csv, "
            "annotations/val.csv, videos/...) reads cleanly, print the statistics of a built release "
            "(<work>/release/), or export that release to a folder in Hugging Face Hub layout (Parquet "
            "shards with the clips embedded and a dataset card), checked with load_dataset."
        ),
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    check = actions.add_parser(
        "check-source",
        help="read a BoLD root and report rows, films, answers and missing clips",
        description="Read BoLD's headerless annotation CSVs, decode every row and look for every clip. A "
        "malformed row is an error naming file, line and column.",
    )
    check.add_argument("root", nargs="?", type=Path, help="BoLD root (default: the bundled sample)")
    check.add_argument(
        "--skip-missing", action="store_true", help="list rows whose clip is missing instead of failing"
    )
    check.add_argument(
        "--codes", type=Path, help="JSON/YAML demographic code tables (default: bqa.vocabulary's)"
    )
    check.set_defaults(func=_check_source)

    stats = actions.add_parser(
        "stats",
        help="statistics of a work folder's release (sizes, Easy/Hard, groups, demographics, Self-BLEU)",
        description="Check a work folder's release and print its statistics as JSON.",
    )
    stats.add_argument("work_dir", type=Path, help="work folder written by the BQA pipeline")
    stats.add_argument("--no-self-bleu", action="store_true", help="skip the Self-BLEU of the questions")
    stats.set_defaults(func=_stats)

    export = actions.add_parser(
        "export",
        help="export a work folder's release to a Hub-layout folder (Parquet + card)",
        description="Build the release with the BQA builder, write data/default/<split>-*.parquet with the "
        "clips embedded and a README.md card (YAML configs, dataset_info, statistics, limitations), then "
        "load the folder back with load_dataset to check it. An existing folder is replaced atomically, and only if an earlier export wrote it (or it is empty); never the work folder, a folder holding it, or the current directory.",
    )
    export.add_argument("work_dir", type=Path, help="work folder written by the BQA pipeline")
    export.add_argument(
        "out_dir",
        type=Path,
        help="folder to write: new, empty, or one an earlier export wrote (then replaced)",
    )
    export.add_argument(
        "--repo-id", default=None, help="Hub repo named in the card's examples (default: naist-nlp/BQA)"
    )
    export.add_argument("--no-self-bleu", action="store_true", help="skip the Self-BLEU of the questions")
    export.add_argument(
        "--max-shard-mb", type=int, default=500, help="largest Parquet shard, in MB (default 500)"
    )
    export.add_argument(
        "--cache-dir", type=Path, help="datasets cache for the build (default <work>/.cache/datasets)"
    )
    export.set_defaults(func=_export)


def _check_source(args: argparse.Namespace) -> int:
    from bqa.bold import read_bold
    from bqa.sample import sample_root
    from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES, load_demographic_codes

    codes = load_demographic_codes(args.codes) if args.codes else DEFAULT_DEMOGRAPHIC_CODES
    source = read_bold(args.root or sample_root(), codes=codes, skip_missing=args.skip_missing)
    rows = source.annotations
    print(f"{source.root}: {len(rows)} usable rows, {len({a.film_id for a in rows})} films")
    for split, n in sorted(Counter(a.bold_split for a in rows).items()):
        print(f"  {split}: {n} rows")
    if source.missing:
        print(f"{len(source.missing)} row(s) left out, clip missing:")
        print(source.missing_report(), end="")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from bqa.stats import release_stats
    from bqa.workfolder import read_release

    release = read_release(args.work_dir)
    stats = release_stats(release.splits, release.meta, self_bleu=not args.no_self_bleu)
    print(json.dumps(stats.to_json(), indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    from bqa.card import DEFAULT_REPO_ID
    from bqa.export import export_release

    result = export_release(
        args.work_dir,
        args.out_dir,
        repo_id=args.repo_id or DEFAULT_REPO_ID,
        self_bleu=not args.no_self_bleu,
        cache_dir=args.cache_dir,
        max_shard_bytes=args.max_shard_mb * 1024 * 1024,
    )
    sizes = ", ".join(f"{split} {len(ds)}" for split, ds in result.dataset.items())
    print(f"wrote {result.folder} ({sizes}); load_dataset check passed")
    return 0
