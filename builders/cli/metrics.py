"""``vqabench metrics``: where the project's ``evaluate`` metric modules are installed."""

from __future__ import annotations

import argparse

from builders import metric_names, metric_path, metrics_dir


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metrics",
        help="where the evaluate metric modules are (to evaluate.load them by path)",
        description="The project's metrics ('vqabench metrics list') are evaluate modules shipped with the "
        "package, each a folder with the module and its metric card. Load one by its folder: in Python "
        "evaluate.load(builders.metric_path('bqa_accuracy')), or pass evaluate.load the folder that "
        "'vqabench metrics path bqa_accuracy' prints. From a source checkout the same folders are "
        "./metrics/<name>.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    path = actions.add_parser(
        "path",
        help="print the folder of one metric, or the folder holding them all",
        description="Print the folder of metric NAME (pass it to evaluate.load), or without NAME the metrics "
        "root. An unknown NAME is an error listing the known ones.",
    )
    path.add_argument("name", nargs="?", metavar="NAME", help="metric name, e.g. bqa_accuracy or judge")
    path.set_defaults(func=_path)
    listing = actions.add_parser(
        "list",
        help="print every metric's name and folder",
        description="Print one line per metric: its name, a tab, its folder.",
    )
    listing.set_defaults(func=_list)


def _path(args: argparse.Namespace) -> int:
    print(metric_path(args.name) if args.name else metrics_dir())
    return 0


def _list(args: argparse.Namespace) -> int:
    for name in metric_names():
        print(f"{name}\t{metric_path(name)}")
    return 0
