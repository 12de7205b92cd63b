"""``vqabench human-study``: human baselines as the papers ran them (``make`` a study, ``score`` it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.cli._benchmarks import add_benchmark_argument, registry
from builders.files.arguments import existing_file, existing_folder
from builders.hub.source import add_data_arguments
from builders.options.numbers import POSITIVE_INT


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "human-study",
        help="human baselines: draw a study with a static rating page per rater (make); score the answers (score)",
        description=(
            "Run the papers' human studies: BQA's 'Human (Rand100)' row (people answer the questions) and "
            "MarineLife-16K's judge validation (experts rate a model's open-ended answers with the judge's "
            "rubric). 'make' draws the items and writes one folder per rater with a page that works opened "
            "from disk, without network or server; 'score' reads the answer files the pages export."
        ),
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    make = actions.add_parser(
        "make",
        help="draw a study from a split and write one static rating folder per rater",
        description=(
            "Draw SIZE items from a split with SEED, at random (--draw random, the default and both papers' "
            "draw) or stratified proportionally by difficulty (BQA, Easy/Hard) or by question type "
            "(MarineLife-16K open-ended questions) (--draw stratified), assign each item to K raters "
            "(balanced round robin) and write OUT/study.json (the draw, reproducible) and "
            "OUT/raters/<rater>/{index.html, study.json, clips/} (audio removed). Send each rater their "
            "folder: they open index.html, answer with the mouse or keys, and download a JSON file. Nothing "
            "about the correct answers is in the rater folders."
        ),
        epilog="Example: vqabench human-study make bqa --data hub/BQA --split test --size 100 --seed 0 "
        "--raters alice,bob,carol --out studies/bqa-rand100",
    )
    studied = [key for key, entry in registry().items() if entry.human_study is not None]
    add_benchmark_argument(make, "which benchmark the study is on", studied)
    add_data_arguments(make, "the dataset to draw from")
    make.add_argument("--split", default="test", help="split to draw from (default: test)")
    make.add_argument(
        "--paper-design",
        action="store_true",
        help="the paper's design in one flag: BQA 100 random items, 3 raters, each rating all (Human (Rand100)); "
        "MarineLife-16K 100 random open-ended answers, 6 experts, 3 ratings per answer. Options that "
        "contradict it are refused; --raters may name the raters (as many as the design has)",
    )
    make.add_argument("--size", type=POSITIVE_INT, help="items to draw (default: 100, the papers' size)")
    make.add_argument(
        "--draw",
        metavar="random|stratified",
        help="random (default; both papers drew at random) or stratified (proportional to Easy/Hard for "
        "BQA, to question type for MarineLife-16K)",
    )
    make.add_argument(
        "--seed", type=int, default=0, help="seed of the draw and of each rater's order (default 0)"
    )
    make.add_argument(
        "--raters",
        help="comma-separated rater ids (letters, digits, '_', '-'; default r1,r2,r3, BQA's three; "
        "--paper-design: r1..r6 for MarineLife-16K's six experts)",
    )
    make.add_argument(
        "--ratings-per-item",
        "-k",
        type=POSITIVE_INT,
        help="raters per item (default: every rater rates every item, as BQA's three did; MarineLife-16K's "
        "paper: 3 of its 6 experts per answer, --paper-design)",
    )
    make.add_argument(
        "--predictions",
        type=existing_file,
        help="MarineLife-16K: the model's answers to rate (JSONL with question_id and raw_output, e.g. "
        "'marinelife evaluate' output)",
    )
    make.add_argument(
        "--model", help="MarineLife-16K: the model's name (default: the predictions file's stem)"
    )
    make.add_argument(
        "--types",
        help="MarineLife-16K: comma-separated open-ended question types to draw from "
        "(default: camera_object_open_ended,caption)",
    )
    make.add_argument("--out", type=Path, required=True, help="study folder to write (replaced if it exists)")
    make.set_defaults(func=_make)

    score = actions.add_parser(
        "score",
        help="score the raters' exported answer files and write a Markdown + PNG report",
        description=(
            "Read every rater's answers file (one per rater, all items answered) and write OUT/report.md, "
            "OUT/metrics.json and PNGs. BQA: human accuracy Easy/Hard/Total (95% Wilson intervals), "
            "majority-vote accuracy, Fleiss' kappa and Krippendorff's alpha (nominal), per-rater accuracy, "
            "and any --predictions scored on the same items beside the Human row. MarineLife-16K: mean "
            "expert score per item and criterion, Krippendorff's alpha (interval), and with --judge-results "
            "the judge against the expert mean (Pearson, Spearman, quadratic-weighted kappa, MAE) with a "
            "scatter plot. A file from another study, a rater given twice, or missing items are errors."
        ),
        epilog="Example: vqabench human-study score studies/bqa-rand100 answers/*.json --out reports/human",
    )
    score.add_argument("study", type=existing_folder, help="the study folder 'make' wrote")
    score.add_argument(
        "answers", nargs="+", type=existing_file, help="the answers files the raters downloaded"
    )
    score.add_argument(
        "--out", type=Path, required=True, help="report folder (report.md, metrics.json, *.png)"
    )
    add_data_arguments(
        score, "BQA: the dataset (default: the folder the study was drawn from)", required=False
    )
    score.add_argument(
        "--predictions",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="BQA: a model's predictions JSONL, scored on the study's items beside the Human row (repeatable)",
    )
    score.add_argument(
        "--judge-results",
        type=existing_file,
        help="MarineLife-16K: the judge results of the rated answers ('vqabench marinelife judge --items')",
    )
    score.add_argument("--judge-model", help="the model's name in --judge-results (default: its only model)")
    score.set_defaults(func=_score)


def _make(args: argparse.Namespace) -> int:
    from builders.hub.source import required_data_from_args
    from builders.human_study.designs import Settings, resolve
    from builders.human_study.draw import RANDOM
    from builders.human_study.make import make_study  # lazy: keeps 'vqabench --help' fast

    benchmark = registry()[args.benchmark].human_study  # the name a study file records
    assert benchmark is not None  # the argument offers only the benchmarks with a study
    settings = resolve(
        benchmark, paper=args.paper_design, size=args.size, draw=args.draw,
        raters=[r.strip() for r in args.raters.split(",") if r.strip()] if args.raters is not None else None,
        ratings_per_item=args.ratings_per_item,
        defaults=Settings(size=100, raters=["r1", "r2", "r3"], ratings_per_item=None, draw=RANDOM),
    )  # fmt: skip
    study = make_study(
        benchmark, required_data_from_args(args).folder, args.out, split=args.split, size=settings.size, seed=args.seed,
        raters=settings.raters, ratings_per_item=settings.ratings_per_item, predictions=args.predictions,
        model=args.model, types=tuple(t.strip() for t in args.types.split(",")) if args.types else None,
        draw=settings.draw, design=settings.design,
    )  # fmt: skip
    strata = ", ".join(f"{s} {c['drawn']}/{c['available']}" for s, c in study.strata.items())
    print(
        f"study {study.study_id}: {len(study.items)} items of {study.source}, split {study.split}, "
        f"{study.draw} draw ({strata})" + (f"; {study.design}" if study.design else "")
    )
    for rater in study.raters:
        print(
            f"  {rater}: {len(study.assigned(rater))} items -> {args.out / 'raters' / rater / 'index.html'}"
        )
    return 0


def _score(args: argparse.Namespace) -> int:
    from builders.hub.source import data_from_args
    from builders.human_study.run import score_study  # lazy: keeps 'vqabench --help' fast
    from builders.report import named_paths

    source = data_from_args(args)
    report = score_study(
        args.study, args.answers, args.out, data=source.folder if source else None,
        predictions=named_paths(args.predictions, "--predictions"), judge_results=args.judge_results,
        judge_model=args.judge_model,
    )  # fmt: skip
    m = report.metrics
    if "agreement" in m:
        a, h = m["agreement"], m["human"]
        print(
            f"human accuracy {_fmt(h['Total']['accuracy'])} (Easy {_fmt(h['Easy']['accuracy'])}, Hard "
            f"{_fmt(h['Hard']['accuracy'])}); majority vote {_fmt(m['majority_vote']['Total']['accuracy'])}; "
            f"Fleiss' kappa {_fmt(a['fleiss_kappa'], 4)}; Krippendorff's alpha {_fmt(a['krippendorff_alpha_nominal'], 4)}"
        )
    else:
        for name, part in m["rubrics"].items():
            alphas = ", ".join(f"{c} {_fmt(v)}" for c, v in part["krippendorff_alpha_interval"].items())
            line = f"{name}: {part['n_items']} items, expert mean score {_fmt(part['expert_mean']['score'], 2)}; alpha {alphas}"
            stats = (part.get("judge") or {}).get("stats", {}).get("score")
            if stats:
                line += f"; judge vs experts Pearson {_fmt(stats['pearson'])}, MAE {_fmt(stats['mae'])}"
            print(line)
    print(f"wrote {report.markdown}")
    return 0


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
