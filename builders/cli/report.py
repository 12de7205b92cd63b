"""``vqabench report``: Markdown + PNG + JSON reports over model predictions on a dataset split."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.files.arguments import existing_file, named_existing_file
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

    bqa = kinds.add_parser(
        "bqa",
        help="BQA: accuracy by difficulty, error rates by gender/age/ethnicity, emotion-group confusion",
        description=(
            'BQA report. Predictions: JSONL lines {"id", "raw_output" (or "prediction"), "rationale"?}; '
            "the reference answers, choices, difficulty and demographics come from the dataset split. "
            "Sections: the paper's table (Table 1 on the test split, Table 4 on validation: rows are models, "
            "#F, Easy/Hard/Total, a model's CoT run beside its plain run - paired by the model they asked for - "
            "and a Human row with --human), Easy/Hard/Total accuracy with 95% intervals, error rate by gender, "
            "age and ethnicity with a chi-square test (Figure 4), emotion groups of wrong answers with Others "
            "(Figure 6), and rationale leakage when rationales are given. Runs of the multimodal_cot style are "
            "marked answer-leaking (their rationale saw the correct answer)."
        ),
        epilog="Example: vqabench report bqa --data hub/BQA --split test --predictions gpt4o=gpt4o.jsonl "
        "--predictions gemini=gemini.jsonl --out reports/bqa-test",
    )
    _common(bqa, "clips (items)")
    bqa.add_argument(
        "--predictions",
        action="append",
        required=True,
        type=named_existing_file,
        metavar="NAME=FILE",
        help=_PREDICTIONS_HELP,
    )
    bqa.add_argument(
        "--human",
        type=Path,
        metavar="METRICS_JSON",
        help="a BQA human study's result on the same split (the metrics.json 'vqabench human-study score' "
        "writes): the Human row of the paper's table",
    )
    bqa.add_argument(
        "--group-mapping",
        help="emotion-group mapping (JSON/YAML file) if the release used another than its own / the default",
    )
    bqa.set_defaults(func=_bqa)

    marine = kinds.add_parser(
        "marinelife",
        help="MarineLife-16K: per-dimension accuracy (0-100) and judge scores by static/moving camera",
        description=(
            'MarineLife-16K report. Predictions: JSONL lines {"question_id", "raw_output"} joined to the qa '
            "config's rows; replies to open-ended questions may be present and are left to the judge. "
            "Judge results (already computed by the judge metric; this command calls no LLM): a JSON file "
            '{"<model>": {"oemu": <result>, "caption": <result>}} where a result has score, criteria, n, '
            "n_failed and by_camera {static|moving: {score, criteria, n}}. Sections: accuracy per dimension with "
            "intervals, Table 3 and the caption table (BEH/AH/ECF for static and moving camera) in the paper's "
            "layout (model groups, Backbone, Average rows from --models), judge scores by camera."
        ),
        epilog="Example: vqabench report marinelife --data hub/MarineLife-16K --predictions qwen=qwen.jsonl "
        "--judge-results judge.json --out reports/marine-test",
    )
    _common(marine, "videos")
    marine.add_argument(
        "--predictions",
        action="append",
        default=[],
        type=named_existing_file,
        metavar="NAME=FILE",
        help=_PREDICTIONS_HELP,
    )
    marine.add_argument(
        "--judge-results",
        action="append",
        default=[],
        type=existing_file,
        metavar="FILE",
        help="judge results JSON (repeatable)",
    )
    marine.add_argument(
        "--models",
        type=existing_file,
        metavar="FILE",
        help="CSV with a header row and columns name,group,backbone: each model's group and backbone, for "
        "Table 3 and the caption table in the paper's layout (group rows, a Backbone column, an Average row "
        "per group, the moving-minus-static difference of the caption averages); names as in --predictions "
        "and the judge results",
    )
    marine.set_defaults(func=_marinelife)


def _print_done(report) -> None:
    print(
        f"wrote {report.markdown}, {report.metrics_file.name} and {len(report.figures)} figure(s) in {report.folder}"
    )


def _bqa(args: argparse.Namespace) -> int:
    from builders.hub.source import required_data_from_args
    from builders.hub.subset import selection_from_args
    from builders.report import named_paths, write_bqa_report
    from builders.report.inputs import select_models

    answer_parser = _checked_parser(args)
    report = write_bqa_report(
        required_data_from_args(args),
        args.split,
        select_models(named_paths(args.predictions, "--predictions"), args.model),
        args.out,
        allow_missing=args.allow_missing,
        group_mapping=args.group_mapping,
        allow_mixed=args.allow_mixed,
        answer_parser=answer_parser,
        human=args.human,
        videos=selection_from_args(args),
    )
    for name, m in report.metrics["models"].items():
        r = m["metrics"]
        line = (
            f"{name}: accuracy {r['accuracy']:.3f} (Easy {r['accuracy_easy']:.3f}, Hard {r['accuracy_hard']:.3f}) "
            f"on {r['n']} items; {r['n_unparsed']} unparsed"
            if r["n_easy"] and r["n_hard"]
            else f"{name}: accuracy {r['accuracy']:.3f} on {r['n']} items; {r['n_unparsed']} unparsed"
        )
        if m["answer_leaking"]:
            line += f" [ANSWER-LEAKING: {m['style'] or 'the rationale saw the answer'}]"
        print(line)
    _print_changes(report.metrics["models"], "parser_change")
    _print_done(report)
    return 0


def _marinelife(args: argparse.Namespace) -> int:
    from builders.hub.source import required_data_from_args
    from builders.hub.subset import selection_from_args
    from builders.report import named_paths, write_marinelife_report
    from builders.report.inputs import select_models

    answer_parser = _checked_parser(args)
    report = write_marinelife_report(
        required_data_from_args(args),
        args.split,
        select_models(named_paths(args.predictions, "--predictions"), args.model),
        args.out,
        judge_results=args.judge_results,
        allow_missing=args.allow_missing,
        allow_mixed=args.allow_mixed,
        answer_parser=answer_parser,
        models=args.models,
        videos=selection_from_args(args),
    )
    for name, m in report.metrics["models"].items():
        if "accuracy" in m:
            print(
                f"{name}: overall multiple-choice accuracy {m['accuracy']['overall']:.1f} on {m['accuracy']['n']['overall']} questions"
            )
    _print_changes(report.metrics["models"], "parser_change")
    _print_done(report)
    return 0
