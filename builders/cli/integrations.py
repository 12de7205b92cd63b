"""``vqabench integrations``: where the lmms-eval tasks and the VLMEvalKit datasets are shipped."""

from __future__ import annotations

import argparse
from pathlib import Path

HARNESSES = ("lmms-eval", "vlmevalkit")
DATASETS = ("bqa", "marinelife16k")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "integrations",
        help="the lmms-eval task folder and VLMEvalKit datasets shipped in this package",
        description="Run BQA and MarineLife-16K inside lmms-eval or VLMEvalKit, scored by this project's "
        "parser, metrics and judge (the same numbers as 'vqabench report' on the same replies).",
    )
    commands = parser.add_subparsers(dest="integrations_command", required=True, metavar="COMMAND")
    path = commands.add_parser(
        "path",
        help="print the folder of one harness's integration (lmms-eval: for --include_path)",
        description="Print the shipped folder. lmms-eval with --data: write a copy of its task folder "
        "into --out whose dataset templates name your local Hub-layout folders, and print that copy: "
        "lmms-eval --include_path $(vqabench integrations path lmms-eval --data bqa=DIR --out T) --tasks bqa",
    )
    path.add_argument("harness", choices=HARNESSES)
    path.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help=f"a dataset ({', '.join(DATASETS)}) and its Hub-layout folder; repeat for both",
    )
    path.add_argument("--out", type=Path, help="where to write the configured task folder (with --data)")
    path.set_defaults(func=_path)


def _path(args: argparse.Namespace) -> int:
    from builders.integrations import FOLDERS
    from builders.integrations.lmms_eval.configure import configure_lmms_eval

    folder = FOLDERS[args.harness]
    if not args.data:
        if args.out is not None:
            raise ValueError("--out needs --data (the shipped folder is printed as it is)")
        print(folder)
        return 0
    if args.harness != "lmms-eval":
        raise ValueError(
            "--data configures the lmms-eval tasks; VLMEvalKit datasets take data=DIR (see the README)"
        )
    if args.out is None:
        raise ValueError("--data needs --out: the folder to write the configured tasks into")
    data: dict[str, Path] = {}
    for spec in args.data:
        name, sep, where = spec.partition("=")
        if not sep or name not in DATASETS or not where:
            raise ValueError(f"--data {spec!r}: expected NAME=DIR with NAME one of {list(DATASETS)}")
        data[name] = Path(where)
    print(configure_lmms_eval(folder, args.out, data))
    return 0
