"""The human study's report: ``report.md``, PNGs and ``metrics.json``, in the reports' own format.

BQA: the paper's Table 1 layout with a "Human" row (all ratings) and a "Human (majority vote)" row,
beside any models whose predictions are given, scored by :func:`bqa.accuracy.bqa_accuracy` on the
same items; agreement among raters; per-rater accuracy. MarineLife-16K: per rubric the expert means
beside the LLM judge's on the same items ("Human" and "LLM judge" rows), inter-rater alpha, the
judge-vs-expert statistics and a scatter plot per criterion.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bqa.accuracy import bqa_accuracy
from builders.human_study.score import DIFFICULTIES, SCORE, TOTAL
from builders.human_study.study import Study
from builders.report.bqa_report import BQASplit
from builders.report.document import Report, Section, report_folder, write_report
from builders.report.inputs import align, read_predictions
from builders.report.plots import Bar, grouped_bars, scatter_panels
from builders.report.tables import fmt_number, fmt_rate, markdown_table

HUMAN, MAJORITY = "Human", "Human (majority vote)"


def models_on_study_items(
    study: Study, split: BQASplit, predictions: Mapping[str, str | os.PathLike[str]]
) -> dict[str, dict[str, Any]]:
    """Each model's Easy/Hard/Total accuracy on the study's items alone (a like-for-like row)."""
    rows = {r["id"]: r for r in split.rows}
    ids = [i.id for i in study.items]
    others = [i for i in rows if i not in set(ids)]
    out: dict[str, dict[str, Any]] = {}
    for name, path in predictions.items():
        aligned = align(read_predictions(path, "id"), ids, source=str(path), split=f"{split.split} (study items)",
                        allow_missing=False, ignored_ids=others)  # fmt: skip
        column = {
            c: [rows[i][c] for i in ids]
            for c in ("answer", "choices", "difficulty", "gender", "age", "ethnicity")
        }
        result = bqa_accuracy(
            predictions=aligned.texts, references=column["answer"], choices=column["choices"],
            difficulty=column["difficulty"], gender=column["gender"], age=column["age"],
            ethnicity=column["ethnicity"], group_mapping=split.group_mapping,
            demographic_codes=split.demographic_codes,
        )  # fmt: skip
        out[name] = {
            label: {"accuracy": rate.value, "ci95": rate.interval, "n": rate.n}
            for label, rate in result.by_difficulty().items()  # Easy, Hard, Total
        }
        out[name]["predictions"] = str(path)
    return out


def _bqa_sections(metrics: Mapping[str, Any], out: Path) -> list[Section]:
    columns: dict[str, Mapping[str, Any]] = {
        HUMAN: metrics["human"],
        MAJORITY: metrics["majority_vote"],
        **metrics.get("models", {}),
    }
    labels = (*DIFFICULTIES, TOTAL)
    n_items = {label: metrics["majority_vote"][label]["n"] for label in labels}
    table1 = markdown_table(
        ["Model", *labels],
        [
            [name, *(fmt_rate(c[label]["accuracy"], c[label]["ci95"]) for label in labels)]
            for name, c in columns.items()
        ],
    )
    counts = markdown_table(
        ["", *labels],
        [["items", *(n_items[label] for label in labels)], ["ratings (Human row)", *(metrics["human"][label]["n"] for label in labels)]],
    )  # fmt: skip
    figure = grouped_bars(
        out / "human_accuracy_by_difficulty.png",
        title=f"BQA human study ({metrics['n_items']} items, {len(metrics['raters'])} raters): accuracy by difficulty",
        categories=list(labels),
        series={name: [Bar(c[label]["accuracy"], c[label]["ci95"], c[label]["n"]) for label in labels] for name, c in columns.items()},
        xlabel="difficulty", ylabel="accuracy", ylim=(0.0, 1.0),
    )  # fmt: skip
    a = metrics["agreement"]
    agreement = markdown_table(
        ["Statistic", "Value"],
        [
            ["Fleiss' kappa", fmt_number(a["fleiss_kappa"])],
            ["Krippendorff's alpha (nominal)", fmt_number(a["krippendorff_alpha_nominal"])],
            ["observed agreement (share of agreeing rater pairs)", fmt_number(a["observed_agreement"])],
            [
                "items without a majority (ties, counted wrong in the vote)",
                len(metrics["majority_vote"]["ties"]),
            ],
        ],
        "lr",
    )
    per_rater = markdown_table(
        ["Rater", *labels],
        [[r, *(fmt_rate(v[label]["accuracy"], v[label]["ci95"]) for label in labels)] for r, v in metrics["per_rater"].items()],
    )  # fmt: skip
    t = metrics["time"]
    return [
        Section(
            "Accuracy by difficulty (the paper's Table 1 layout)",
            [
                f"{HUMAN}: every rating counts once; {MAJORITY}: one answer per item (a tie is no majority "
                "and counts as wrong). Models (if any) are scored on the same items with the shared answer "
                "parser. 95% Wilson intervals; the Human row's treats every rating as independent, which is "
                "optimistic when several raters answer one item.",
                table1,
                counts,
            ],
            [(figure, "Human accuracy by difficulty")],
        ),
        Section("Agreement among raters", [f"Categories: the {a['categories']}.", agreement], []),
        Section(
            "Per rater",
            [
                per_rater,
                f"Median time per item: {fmt_number(t['median_seconds_per_item'], 1)} s; "
                f"total rating time {fmt_number(t['total_hours'], 2)} h.",
            ],
        ),  # fmt: skip
    ]


def _marine_sections(metrics: Mapping[str, Any], out: Path) -> list[Section]:
    sections = []
    for name, part in metrics["rubrics"].items():
        criteria = [c for c in part["expert_mean"] if c != SCORE]
        columns = [*criteria, SCORE]
        judge = part.get("judge")
        rows = [[f"{HUMAN} (mean of {metrics['ratings_per_item']} experts)", part["n_items"],
                 *(fmt_number(part["expert_mean"][c], 2) for c in columns)]]  # fmt: skip
        if judge:
            rows.append([f"LLM judge ({judge['model']} answers)", len(judge["items"]),
                         *(fmt_number(judge["judge_mean"][c], 2) for c in columns)])  # fmt: skip
        body = [
            f"Rubric `{part['signature']}`; {part['n_items']} items.",
            markdown_table(["Scorer", "n", *columns], rows),
            "Agreement among experts, Krippendorff's alpha (interval): "
            + ", ".join(f"{c} {fmt_number(v)}" for c, v in part["krippendorff_alpha_interval"].items()),
        ]
        figures = []
        if judge:
            stats = judge["stats"]
            body.append(
                markdown_table(
                    ["Judge vs expert mean", *columns],
                    [[label, *(fmt_number(stats[c][key]) if stats[c] else None for c in columns)]
                     for label, key in (("Pearson r", "pearson"), ("Spearman rho", "spearman"),
                                        ("quadratic-weighted kappa", "kappa"), ("MAE", "mae"))]
                    + [["n", *(stats[c]["n"] if stats[c] else 0 for c in columns)]],
                )
            )  # fmt: skip
            if judge["n_failed"]:
                body.append(
                    f"{judge['n_failed']} item(s) without a judge score are left out: {', '.join(judge['failed'])}."
                )
            panels = {c: (judge["pairs"][c]["expert_mean"], judge["pairs"][c]["judge"]) for c in columns}
            notes = {c: f"r={fmt_number(stats[c]['pearson'], 2)}" if stats[c] else "" for c in columns}
            figures.append((
                scatter_panels(out / f"judge_vs_experts_{name}.png",
                               title=f"{name}: LLM judge vs mean expert score per item", panels=panels,
                               xlabel="mean expert score", ylabel="judge score", lim=(0.0, 5.0), notes=notes),
                f"Judge vs experts ({name})",
            ))  # fmt: skip
        sections.append(Section(f"Rubric {name}", body, figures))
    item_rows = [
        [i, v["type"], v["n_raters"], ", ".join(f"{c} {s:.2f}" for c, s in v["criteria"].items()), fmt_number(v[SCORE], 2)]
        for i, v in metrics["items"].items()
    ]  # fmt: skip
    sections.append(
        Section(
            "Mean expert score per item",
            [markdown_table(["Item", "Type", "Raters", "Criteria", "Score"], item_rows, "llrlr")],
        )
    )
    return sections


def write_study_report(study: Study, metrics: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> Report:
    out = report_folder(out_dir)
    strata = ", ".join(f"{s} {c['drawn']} of {c['available']}" for s, c in study.strata.items())
    how = (
        f"stratified by {study.stratify_by} ({strata})"
        if study.draw == "stratified"
        else f"at random, not stratified (by {study.stratify_by}: {strata})"
    )
    design = f" It follows {study.design}." if study.design else ""
    intro = [
        f"Study `{study.study_id}`: {len(study.items)} items of the `{study.split}` split of {study.source}, "
        f"drawn with seed {study.seed} {how}; raters {', '.join(study.raters)}, {study.ratings_per_item} per item."
        + design,
    ]
    if study.benchmark == "bqa":
        sections = _bqa_sections(metrics, out)
        title = "BQA human study"
    else:
        intro.append(f"Experts rated the answers of `{study.model}`.")
        sections = _marine_sections(metrics, out)
        title = "MarineLife-16K expert study"
    return write_report(out, title, intro, sections, metrics)
