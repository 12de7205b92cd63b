"""``vqabench report``: Markdown + PNG + JSON reports over model predictions on a dataset split."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from builders.cli._benchmarks import registry
from builders.cli._entry import Benchmark
from builders.files.arguments import named_existing_file
from builders.hub.source import add_data_arguments
from builders.hub.subset import add_subset_arguments

_PREDICTIONS_HELP = (
    "a model's predictions, NAME=FILE (JSONL, or an lmms-eval sample log / VLMEvalKit xlsx/tsv result "
    "of the integrations' tasks; repeat the option to compare models side by side; a bare FILE is "
    "named after its stem)"
)


def _common(parser: argparse.ArgumentParser, videos: str) -> None:
    add_data_arguments(parser, "the dataset the predictions answer (its reference answers are joined by id)")
    parser.add_argument("--split", default="test", help="split to score (default: test)")
    add_subset_arguments(parser, videos)
    parser.add_argument(
        "--out", type=Path, required=True, help="report folder (report.md, metrics.json, *.png)"
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="score items without a prediction as unparsed (wrong) instead of failing; they are listed",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="read only the lines of predictions NAME that answer for MODEL (as asked: provenance.model_asked, "
        "or as named: model); a file holding several models' replies is refused without it",
    )
    parser.add_argument(
        "--allow-mixed",
        action="store_true",
        help="lay side by side runs whose recorded frame spec, prompt version, parser version or videos "
        "(a named subset, or the whole split) differ (marked as mixed in the report) instead of refusing",
    )
    parser.add_argument(
        "--parser",
        metavar="NAME@VERSION",
        help="answer parser version that reads the raw replies (default: the current one; e.g. "
        "vqabench-choice@2 scores as before version 3; an unknown one is refused, naming those "
        "registered). Nothing is asked of the model again: the report re-reads each file and, per "
        "model, counts the items this version reads differently from the version the run recorded "
        "(right->wrong, wrong->right, parsed->unparsed ...), in its 'Answer parser change' section "
        "and on the terminal",
    )

    parser.add_argument(
        "--paper",
        action="store_true",
        help="put each run whose model maps to one of the paper's models beside the paper's table (BQA: "
        "Table 1 on test, Table 4 on validation; MarineLife-16K: Table 3 and the caption table): the paper's "
        "cell, the difference, both 95%% intervals, a two-proportion test where both n are known and a "
        "verdict per cell (consistent / differs / no n: rough only / flagged), in report.md, metrics.json "
        "and on the terminal",
    )
    parser.add_argument(
        "--as",
        dest="paper_as",
        action="append",
        default=[],
        metavar="NAME=ROW|FILE",
        help="run NAME is the paper's row ROW, as printed (e.g. 'VideoLLaMA2 (FT)') or a model, or a JSON file "
        "{NAME: ROW, ...} of such pairs: compared with it under --paper, and its frames may be the row's #F beside runs of other rows (BQA: 1 fps for API "
        "models, 16 frames for open ones) without --allow-mixed; without it a run maps by its name or the "
        "model id it recorded",
    )


def _paper_request(args: argparse.Namespace) -> dict:
    """``paper=`` for the report when ``--paper`` or ``--as`` is given (``--as`` alone maps runs to the
    paper's rows for its table's design, e.g. the ``#F`` of a fine-tuned run, without comparing)."""
    if not args.paper and not args.paper_as:
        return {}
    from builders.report.paper_comparison import PaperRequest

    pairs: dict[str, str] = {}
    for item in args.paper_as:
        name, sep, row = item.partition("=")
        if not sep:  # a mapping file: {"NAME": "ROW", ...}
            from builders.files.jsonio import read_json_object

            if not Path(item).is_file():
                raise ValueError(f"--as {item!r}: neither NAME=ROW nor a JSON file of such pairs")
            mapping = read_json_object(item)
            bad = [k for k, v in mapping.items() if not isinstance(v, str) or not v.strip()]
            if bad:
                raise ValueError(
                    f"--as {item}: {', '.join(bad)}: expected a paper row (text) for each run name"
                )
            pairs.update({k.strip(): v.strip() for k, v in mapping.items()})
        elif not name.strip() or not row.strip():
            raise ValueError(
                f"--as {item!r}: expected NAME=ROW (a run's name and a row of the paper's table)"
            )
        else:
            pairs[name.strip()] = row.strip()
    return {"paper": PaperRequest(pairs, compare=args.paper)}


def _checked_parser(args: argparse.Namespace) -> str | None:
    """``--parser`` as given, refused before any file is read when no such version is registered."""
    if args.parser is not None:
        from builders.scoring.answer_parsing import get_parser

        get_parser(args.parser)  # ValueError naming the registered versions
    return args.parser


def _print_changes(models: dict, key: str) -> None:
    from builders.report.parser_change import describe

    for name, model in models.items():
        if model.get(key):
            print(describe(name, model[key]))


# The modules doing the work load inside the handlers: lazy for start-up speed.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a Markdown report (tables, PNG plots, metrics.json) over model predictions",
        description=(
            "Score one or more models' predictions on a dataset split with the project's metrics and write "
            "OUT/report.md with tables (one column per model), PNG plots (grouped bars with 95% Wilson "
            "intervals and the n behind each bar, heatmaps), paired tests between models (exact McNemar; sign "
            "test on judge scores) and OUT/metrics.json with every number and how each run was made (tool "
            "version, dataset revision, frames, prompt, parser, model). Raw replies are parsed again with the "
            "shared answer parser. Predictions: the format of builders/report/predictions.schema.json "
            "(README, 'Predictions files')."
        ),
    )
    kinds = parser.add_subparsers(title="benchmarks", metavar="BENCHMARK", required=True)
    for entry in registry().values():
        verb = entry.report
        sub = kinds.add_parser(entry.key, help=verb.help, description=verb.description, epilog=verb.epilog)
        _common(sub, entry.videos)
        sub.add_argument(
            "--predictions",
            action="append",
            default=[],
            type=named_existing_file,
            metavar="NAME=FILE",
            help=_PREDICTIONS_HELP,
        )
        if verb.arguments is not None:
            verb.arguments(sub)
        sub.set_defaults(func=partial(_report, entry))


def _report(entry: Benchmark, args: argparse.Namespace) -> int:
    """The one report flow: the parser version checked before any file is read, the models selected, the
    entry's report written and summarised, the parser changes and the files written printed."""
    from builders.hub.source import required_data_from_args
    from builders.hub.subset import selection_from_args
    from builders.report import named_paths
    from builders.report.inputs import select_models

    answer_parser = _checked_parser(args)
    paper = _paper_request(args)
    report = entry.report.run(
        args,
        required_data_from_args(args),
        select_models(named_paths(args.predictions, "--predictions"), args.model),
        allow_missing=args.allow_missing,
        allow_mixed=args.allow_mixed,
        answer_parser=answer_parser,
        videos=selection_from_args(args),
        **paper,
    )
    _print_changes(report.metrics["models"], "parser_change")
    if args.paper:
        from builders.report.paper_comparison import terminal_lines

        for table in report.metrics["paper"]:
            print("\n".join(terminal_lines(table)))
    print(
        f"wrote {report.markdown}, {report.metrics_file.name} and {len(report.figures)} figure(s) in {report.folder}"
    )
    return 0
