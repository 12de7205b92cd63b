"""``vqabench marinelife-data``: check attribute files and QA JSONL, export a release in Hub layout."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "marinelife-data",
        help="MarineLife-16K data: check attributes and QA records, export a release to a Hub-layout folder",
        description=(
            "Work with MarineLife-16K's data outside the LLM pipeline: check an expert attribute file "
            "(CSV or JSONL, one row per video), validate QA records against the paper's JSONL schema, "
            "write the bundled sample as a work folder, or export a work folder (<work>/release/) to a "
            "folder in Hugging Face Hub layout (configs qa and videos as Parquet with the videos embedded, "
            "and a dataset card), checked with load_dataset."
        ),
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    check = actions.add_parser(
        "check-attributes",
        help="read an attribute file and report videos, collections, camera kinds and question types",
        description="Read an attribute file (video_id, collection, video_file, the 13 attributes, optional "
        "caption). A missing column, unknown collection, empty required attribute or (with --video-root) "
        "missing video file is an error naming the file and row.",
    )
    check.add_argument(
        "attributes", nargs="?", type=Path, help="CSV or JSONL file (default: the bundled sample)"
    )
    check.add_argument("--video-root", type=Path, help="folder holding <collection>/<video_file>")
    check.set_defaults(func=_check_attributes)

    validate = actions.add_parser(
        "validate-qa",
        help="validate QA JSONL records; with --attributes also their answers and conditional types",
        description="Check every record against the appendix's schema: ids and sequential indices, question "
        "texts, four options A-D with the answer letter on the right text, prompts, open-ended records "
        "without options, mandatory types per video, conditional types only where their attribute exists. "
        "Prints one line per violation (question id, field, problem); exit code 1 if there are any.",
    )
    validate.add_argument("qa", type=Path, help="QA JSONL file")
    validate.add_argument("--attributes", type=Path, help="attribute file of the videos (CSV or JSONL)")
    validate.set_defaults(func=_validate)

    sample = actions.add_parser(
        "sample-work",
        help="write the bundled sample's ground-truth release as a work folder",
        description="Write <work>/release/ (videos.jsonl, qa.jsonl, meta.json) from the bundled sample, split "
        "by video with the paper's proportions; the videos stay in the installed package.",
    )
    sample.add_argument("work_dir", type=Path, help="work folder to write")
    sample.set_defaults(func=_sample_work)

    export = actions.add_parser(
        "export",
        help="export a work folder's release to a Hub-layout folder (Parquet + card)",
        description="Build the qa and videos configs from <work>/release/, write data/<config>/<split>-*.parquet "
        "(videos embedded once, in 'videos') and a README.md card (YAML configs with qa as default, "
        "dataset_info, terms, attribute and dimension tables, statistics), then load every config back "
        "with load_dataset to check it. An existing folder is replaced atomically, and only if an earlier export wrote it (or it is empty); never the work folder, a folder holding it, or the current directory.",
    )
    export.add_argument("work_dir", type=Path, help="work folder (see marinelife16k.workfolder)")
    export.add_argument(
        "out_dir",
        type=Path,
        help="folder to write: new, empty, or one an earlier export wrote (then replaced)",
    )
    export.add_argument("--repo-id", default=None, help="Hub repo named in the card's loading example")
    export.add_argument(
        "--max-shard-mb", type=int, default=500, help="largest Parquet shard, in MB (default 500)"
    )
    export.add_argument(
        "--cache-dir", type=Path, help="datasets cache for the build (default <work>/.cache/datasets)"
    )
    export.set_defaults(func=_export)


def _check_attributes(args: argparse.Namespace) -> int:
    from marinelife16k.annotations import read_annotations
    from marinelife16k.questions import applicable_types
    from marinelife16k.sample import sample_attributes_path, sample_video_root

    path = args.attributes or sample_attributes_path()
    video_root = args.video_root or (None if args.attributes else sample_video_root())
    rows = read_annotations(path, video_root=video_root)
    types = Counter(t for row in rows for t in applicable_types(row))
    print(f"{path}: {len(rows)} videos" + (f", all found under {video_root}" if video_root else ""))
    print(f"  collections: {dict(Counter(r['collection'] for r in rows))}")
    print(f"  camera kinds: {dict(Counter(r['camera_kind'] for r in rows))}")
    print(f"  with a caption: {sum(bool(r['caption']) for r in rows)}")
    print(f"  questions per type: {dict(types)} (total {sum(types.values())})")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from builders.files.jsonio import read_jsonl
    from marinelife16k.annotations import read_annotations
    from marinelife16k.schema import validate_records

    records = read_jsonl(args.qa)
    videos = read_annotations(args.attributes) if args.attributes else None
    problems = validate_records(records, videos)
    for problem in problems:
        print(problem)
    print(f"{args.qa}: {len(records)} records, {len(problems)} violation(s)")
    return 1 if problems else 0


def _sample_work(args: argparse.Namespace) -> int:
    from marinelife16k.sample import write_sample_work_folder

    work = write_sample_work_folder(args.work_dir)
    print(f"wrote {work / 'release'}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from marinelife16k.card import DEFAULT_REPO_ID
    from marinelife16k.export import export_release

    result = export_release(
        args.work_dir,
        args.out_dir,
        repo_id=args.repo_id or DEFAULT_REPO_ID,
        cache_dir=args.cache_dir,
        max_shard_bytes=args.max_shard_mb * 1024 * 1024,
    )
    sizes = "; ".join(
        f"{name}: " + ", ".join(f"{split} {len(ds)}" for split, ds in dd.items())
        for name, dd in result.configs.items()
    )
    print(f"wrote {result.folder} ({sizes}); load_dataset check passed")
    return 0
