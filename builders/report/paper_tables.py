"""The papers' tables as Markdown, one renderer each, for the reports and the demo alike.

Each renderer takes metric results under labels (a model's name in a report; a prompt style or a
scope of splits in the demo) and lays them out as one of the papers' tables: BQA Table 1
(Easy/Hard/Total), Table 2 (Self-BLEU of the questions), the bias breakdowns (error rate by gender,
age and ethnicity; emotion groups of wrong answers; rationale leakage), MarineLife-16K Table 3
(Model, Backbone, accuracy per dimension and OEMU) and its caption table (BEH/AH/ECF for static and
moving camera), both with the paper's model groups and an Average row per group (the caption
table's moving-camera averages with the moving-minus-static difference). A value that cannot exist
(a dimension with no question, a model without that result) is an en dash, never 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bqa.accuracy import DEMOGRAPHIC_FIELDS
from bqa.paper import published as published_bqa
from builders.report.model_groups import Arranged
from builders.report.tables import fmt_number, fmt_p_value, markdown_table
from builders.scoring.judge_results import JudgeResult, JudgeScores
from marinelife16k.accuracy import ACCURACY_DIMENSIONS
from marinelife16k.rubrics import CAMERA_GROUP
from marinelife16k.vocabulary import CAMERA_KINDS, CAPTION_CRITERIA

#: The BQA paper's Table 2 (Self-BLEU of the generated questions), for comparison.
PAPER_SELF_BLEU: dict[str, float] = {
    cell.info("split"): cell.value for cell in published_bqa().cells("table2") if cell.column == "Score"
}


# --- BQA -----------------------------------------------------------------------------------------
#: Column-group titles of the BQA table per evaluation style (the paper's Table 1: Test | Test (CoT)).
STYLE_GROUPS: dict[str, str] = {
    "single_word": "{split}",
    "multimodal_cot": "{split} (CoT)†",
    "multimodal_cot_no_answer": "{split} (CoT, no answer)",
    "reason_then_answer": "{split} (reason, then answer)",
}
LEAK_FOOTNOTE = (
    "† multimodal_cot, as the paper ran Multimodal CoT: stage 1 was given the correct answer, so its "
    "rationale can give the answer away (answer-leaking); not comparable with the plain columns."
)


@dataclass(frozen=True)
class BQARow:
    """One row of the paper's BQA table: a model (or the Human baseline) and its results per style
    (``bqa_accuracy`` results, or ``{accuracy, accuracy_easy, accuracy_hard}``); ``frames``: the
    ``#F`` cell."""

    label: str
    frames: str
    results: Mapping[str, Mapping[str, Any]]


def frames_cell(frames: Mapping[str, Any] | None) -> str:
    """Table 1's ``#F``: the number of frames, ``*`` for 1 fps, ``N fps`` otherwise (``?``: not recorded)."""
    if not isinstance(frames, Mapping):
        return "?"
    if frames.get("fps") is not None and frames.get("num_frames") is None:
        return "*" if frames["fps"] == 1 else f"{frames['fps']:g} fps"
    return str(frames.get("num_frames")) if frames.get("num_frames") is not None else "?"


def bqa_table(rows: Sequence[BQARow], split: str = "test") -> str:
    """The paper's BQA table (Table 1 for the test split, Table 4 for validation): one row per model
    with ``#F`` and Easy / Hard / Total, the CoT runs of a model in column groups beside its plain
    run, 2 decimals as in the paper, an en dash where a model has no such run; then the notes."""
    name = {"test": "Test", "validation": "Valid", "train": "Train"}.get(split, split)
    styles = [s for s in STYLE_GROUPS if any(s in r.results for r in rows)]
    styles += sorted({s for r in rows for s in r.results} - set(styles))
    header = ["VideoLLM", "#F"]
    for style in styles:
        group = STYLE_GROUPS.get(style, f"{{split}} ({style})").format(split=name)
        header += [f"{group} Easy", f"{group} Hard", f"{group} Total"]
    body = []
    for row in rows:
        cells: list[object] = [row.label, row.frames]
        for style in styles:
            r = row.results.get(style)
            cells += [
                fmt_number(r.get(k), 2) if r else None for k in ("accuracy_easy", "accuracy_hard", "accuracy")
            ]
        body.append(cells)
    notes = ["#F: frames per clip; * = 1 frame per second."]
    if "multimodal_cot" in styles:
        notes.append(LEAK_FOOTNOTE)
    return markdown_table(header, body, "ll" + "r" * (len(header) - 2)) + "\n\n" + " ".join(notes)


def table1(entries: Sequence[tuple[Sequence[str], Mapping[str, Any]]], label_headers: Sequence[str]) -> str:
    """Table 1 layout: Easy / Hard / Total accuracy, one row per ``(labels, bqa_accuracy result)``."""
    rows = [
        [*labels, f"{r['n']} ({r['n_easy']}/{r['n_hard']})", fmt_number(r["accuracy_easy"]),
         fmt_number(r["accuracy_hard"]), fmt_number(r["accuracy"]), r["n_unparsed"]]
        for labels, r in entries
    ]  # fmt: skip
    header = [*label_headers, "n (Easy/Hard)", "Easy", "Hard", "Total", "Unparsed"]
    return markdown_table(header, rows, "l" * len(label_headers) + "rrrrr")


def self_bleu_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 2 layout: Self-BLEU (4-gram) of each split's questions (``{split: {"n", "self_bleu"}}``),
    next to the paper's."""
    rows = [
        [split, r["n"], fmt_number(r["self_bleu"]), fmt_number(PAPER_SELF_BLEU.get(split), 2)]
        for split, r in results.items()
    ]
    return markdown_table(["Split", "Questions", "Self-BLEU", "Paper (full BQA)"], rows)


def bias_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Error rate (wrong or unparsed, with errors/n) by gender, age and ethnicity, and each
    attribute's chi-square p-value; one column per labelled ``bqa_accuracy`` result."""
    labels = list(results)
    rows: list[list[object]] = []
    for field in DEMOGRAPHIC_FIELDS:
        breakdowns = {label: results[label][f"by_{field}"] for label in labels}
        groups = list(dict.fromkeys(g for b in breakdowns.values() for g in b["groups"]))
        for g in groups:
            cells = [breakdowns[label]["groups"].get(g) for label in labels]
            rows.append([field, g, *(
                f"{fmt_number(c['error_rate'])} ({c['errors']}/{c['n']})" if c else None for c in cells
            )])  # fmt: skip
        rows.append(
            [field, "chi-square p", *(fmt_p_value(b["disparity"]["p_value"]) for b in breakdowns.values())]
        )
    header = ["Attribute", "Group", *(f"error rate, {label}" for label in labels)]
    return markdown_table(header, rows, "ll" + "r" * len(labels))


def confusion_table(confusion: Mapping[str, Mapping[str, int]]) -> str:
    """Wrong answers by emotion group: the correct answer's group (rows) x the group answered
    (columns, in the result's order, ``Others`` last), and each row's total."""
    answered = list(next(iter(confusion.values())))
    rows = [[group, *(row[a] for a in answered), sum(row.values())] for group, row in confusion.items()]
    return markdown_table(["Correct \\ answered", *answered, "wrong"], rows)


def leakage_line(result: Mapping[str, Any] | None, label: str) -> str | None:
    """One sentence on chain-of-thought rationales that give the answer away; None without rationales."""
    if result is None or not result.get("leakage"):
        return None
    leak = result["leakage"]
    return (
        f"Rationale leakage ({label}): {leak['n_leaking']} of {result['n']} rationales "
        f"give the answer away ({leak['leak_rate']:.0%}), {leak['n_undetermined']} cannot be classified; "
        f"accuracy without them {fmt_number(leak['accuracy_non_leaking'])}, on them "
        f"{fmt_number(leak['accuracy_leaking'])}."
    )


# --- MarineLife-16K ------------------------------------------------------------------------------
def camera_scores(result: JudgeResult | None, camera: str | None) -> JudgeScores | None:
    """The means of a judge result over one camera kind (``None``: over all items); None without a
    result, or when it does not report that camera."""
    return None if result is None else result.scores(CAMERA_GROUP, camera)


@dataclass(frozen=True)
class GroupedValues:
    """A paper-style table's numbers: value columns, one list of values per model, and ``delta_of``
    (value column -> the column its average is compared with, e.g. moving -> static camera)."""

    columns: list[str]
    values: dict[str, list[float | None]]
    delta_of: dict[int, int] = dataclasses.field(default_factory=dict)


def _mean(values: Sequence[float | None]) -> tuple[float | None, int]:
    present = [v for v in values if v is not None]
    return (sum(present) / len(present) if present else None), len(present)


def group_averages(groups: Arranged, table: GroupedValues) -> list[dict[str, Any]]:
    """Per named group of two or more models: ``{"group", "models", "average": {column: mean},
    "n": {column: models with a value}, "delta": {column: its average minus the compared one}}``.
    A mean is over the models that have the value (None when none has)."""
    out = []
    for group, members in groups.groups:
        if group is None or len(members) < 2:
            continue  # models in no group are not averaged; the average of one would repeat its row
        means = [_mean(column) for column in zip(*(table.values[m.name] for m in members), strict=True)]
        delta = {}
        for k, other in table.delta_of.items():
            mean, compared = means[k][0], means[other][0]
            if mean is not None and compared is not None:
                delta[table.columns[k]] = mean - compared
        out.append(
            {
                "group": group,
                "models": [m.name for m in members],
                "average": {c: mean for c, (mean, _) in zip(table.columns, means, strict=True)},
                "n": {c: n for c, (_, n) in zip(table.columns, means, strict=True)},
                "delta": delta,
            }
        )
    return out


def _grouped_table(
    label_headers: Sequence[str],
    groups: Arranged,
    table: GroupedValues,
    digits: Sequence[int],
    *,
    backbone: bool,
) -> str:
    """Model rows under bold group rows, an Average row after each named group of two or more models (2
    decimals, as the paper; "(+d.dd)" after an average compared with another column, "(k of n)" when
    only k of the group's n models have the value)."""
    averages = {a["group"]: a for a in group_averages(groups, table)}
    width = len(label_headers) + len(table.columns)
    rows: list[list[object]] = []
    for group, members in groups.groups:
        if group is not None:
            rows.append([f"**{group}**", *[""] * (width - 1)])
        for member in members:
            cells = [fmt_number(v, d) for v, d in zip(table.values[member.name], digits, strict=True)]
            rows.append([member.name, *([member.backbone or "-"] if backbone else []), *cells])
        if group not in averages:
            continue
        average = averages[group]
        cells = []
        for column in table.columns:
            text = fmt_number(average["average"][column], 2)
            if column in average["delta"]:
                text += f" ({average['delta'][column]:+.2f})"
            if average["average"][column] is not None and average["n"][column] < len(members):
                text += f" ({average['n'][column]} of {len(members)})"
            cells.append(text)
        rows.append(["Average", *(["-"] if backbone else []), *cells])
    align = "l" * len(label_headers) + "r" * len(table.columns)
    return markdown_table([*label_headers, *table.columns], rows, align)


def table3_values(
    groups: Arranged,
    results: Mapping[str, tuple[Mapping[str, Any] | None, JudgeResult | None]],
) -> GroupedValues:
    """Table 3's numbers: accuracy (0-100) per multiple-choice dimension and the OEMU score (0-5) per
    model; ``results``: model -> (marinelife_accuracy result, OEMU judge result), either may be None."""
    values = {}
    for row in groups.rows:
        accuracy, oemu = results.get(row.name, (None, None))
        values[row.name] = [accuracy.get(d) if accuracy else None for d in ACCURACY_DIMENSIONS] + [
            oemu.score if oemu else None
        ]
    return GroupedValues([*ACCURACY_DIMENSIONS, "OEMU"], values)


def table3(
    groups: Arranged,
    results: Mapping[str, tuple[Mapping[str, Any] | None, JudgeResult | None]],
) -> str:
    """The paper's Table 3: Model, Backbone, accuracy per dimension and OEMU, model rows in ``groups``
    (:func:`builders.report.model_groups.arrange`) with an Average row per group."""
    digits = [1] * len(ACCURACY_DIMENSIONS) + [2]
    return _grouped_table(
        ["Model", "Backbone"], groups, table3_values(groups, results), digits, backbone=True
    )


def caption_values(groups: Arranged, results: Mapping[str, JudgeResult | None]) -> GroupedValues:
    """The caption table's numbers: BEH / AH / ECF (0-5) for static, then moving camera, per model;
    each moving column is compared with its static one. ``results``: model -> caption judge result."""
    pairs = [(camera, c) for camera in CAMERA_KINDS for c in CAPTION_CRITERIA]
    values = {
        row.name: [_criterion(camera_scores(results.get(row.name), camera), c) for camera, c in pairs]
        for row in groups.rows
    }
    static = CAMERA_KINDS[0]
    delta_of = {k: pairs.index((static, c)) for k, (camera, c) in enumerate(pairs) if camera != static}
    return GroupedValues([f"{camera.upper()} CAMERA {c}" for camera, c in pairs], values, delta_of)


def _criterion(scores: JudgeScores | None, name: str) -> float | None:
    return None if scores is None else scores.criteria.get(name)


def caption_table(groups: Arranged, results: Mapping[str, JudgeResult | None]) -> str:
    """The paper's caption table: BEH / AH / ECF for static and moving camera, model rows in
    ``groups`` with an Average row per group whose moving-camera cells add the moving-minus-static
    difference of the group's averages."""
    values = caption_values(groups, results)
    return _grouped_table(["Model"], groups, values, [2] * len(values.columns), backbone=False)


def judged_counts(results: Mapping[str, JudgeResult | None]) -> str:
    """One line: how many items each model's judge result scored per camera kind."""
    return "; ".join(
        f"{name}: " + ", ".join(f"{camera} {_judged(camera_scores(r, camera))}" for camera in CAMERA_KINDS)
        for name, r in results.items()
    )


def _judged(scores: JudgeScores | None) -> int:
    return 0 if scores is None else scores.n
