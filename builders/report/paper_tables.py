"""The papers' tables as Markdown, one renderer each, for the reports and the demo alike.

Each renderer takes metric results under labels (a model's name in a report; a prompt style or a
scope of splits in the demo) and lays them out as one of the papers' tables: BQA Table 1
(Easy/Hard/Total), Table 2 (Self-BLEU of the questions), the bias breakdowns (error rate by gender,
age and ethnicity; emotion groups of wrong answers; rationale leakage), MarineLife-16K Table 3
(accuracy per dimension and OEMU) and Table 4 (BEH/AH/ECF for static and moving camera). A value
that cannot exist (a dimension with no question, a model without that result) is an en dash, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bqa.accuracy import DEMOGRAPHIC_FIELDS
from builders.report.tables import fmt_number, fmt_p_value, markdown_table
from marinelife16k.accuracy import ACCURACY_DIMENSIONS, OVERALL
from marinelife16k.vocabulary import CAMERA_KINDS, CAPTION_CRITERIA

#: The BQA paper's Table 2 (Self-BLEU of the generated questions), for comparison.
PAPER_SELF_BLEU: dict[str, float] = {"train": 0.87, "validation": 0.86, "test": 0.85}


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
            rows.append([field, g] + [
                f"{fmt_number(c['error_rate'])} ({c['errors']}/{c['n']})" if c else None for c in cells
            ])  # fmt: skip
        rows.append(
            [field, "chi-square p"] + [fmt_p_value(b["disparity"]["p_value"]) for b in breakdowns.values()]
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
    leak = result and result.get("leakage")
    if not leak:
        return None
    return (
        f"Rationale leakage ({label}): {leak['n_leaking']} of {result['n']} rationales "
        f"name the correct choice and no other ({leak['leak_rate']:.0%}); accuracy without them "
        f"{fmt_number(leak['accuracy_non_leaking'])}, on them {fmt_number(leak['accuracy_leaking'])}."
    )


# --- MarineLife-16K ------------------------------------------------------------------------------
def camera_scores(result: Mapping[str, Any], camera: str | None) -> dict[str, Any]:
    """``{score, criteria, n}`` of a judge result for one camera kind (``None`` = all items); {}
    when the result does not report that camera."""
    if camera is None:
        return {
            "score": result.get("score"),
            "score_ci95": result.get("score_ci95"),
            "criteria": result.get("criteria") or {},
            "criteria_ci95": result.get("criteria_ci95") or {},
            "n": result.get("n"),
        }
    cell = (result.get("by_camera") or {}).get(camera)
    return (
        {**cell, "criteria": cell.get("criteria") or {}, "criteria_ci95": cell.get("criteria_ci95") or {}}
        if cell
        else {}
    )


def table3(
    entries: Mapping[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
    label_header: str = "Model",
    *,
    counts: bool = False,
) -> str:
    """Table 3 layout: multiple-choice accuracy (0-100) per dimension and the OEMU judge score, one
    row per ``label: (marinelife_accuracy result, OEMU judge result)`` (either may be None).
    ``counts``: add the number of multiple-choice questions and the overall accuracy."""
    dimensions = (*ACCURACY_DIMENSIONS, OVERALL) if counts else ACCURACY_DIMENSIONS
    rows = []
    for label, (accuracy, oemu) in entries.items():
        rows.append(
            [label, *([accuracy["n"][OVERALL] if accuracy else None] if counts else [])]
            + [fmt_number(accuracy[d], 1) if accuracy else None for d in dimensions]
            + [fmt_number(oemu["score"], 2) if oemu else None]
        )
    header = [
        label_header,
        *(["n MCQ"] if counts else []),
        *ACCURACY_DIMENSIONS,
        *(["overall"] if counts else []),
    ]
    return markdown_table([*header, "OEMU (0-5)"], rows)


def table4(captions: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 4 layout: caption judge scores BEH / AH / ECF (0-5) for static and moving camera, one
    row per labelled caption judge result, with the captions judged per camera."""
    columns = [(camera, c) for camera in CAMERA_KINDS for c in CAPTION_CRITERIA]
    rows = [
        [
            label,
            *(fmt_number(camera_scores(r, camera).get("criteria", {}).get(c), 2) for camera, c in columns),
        ]
        + [" / ".join(str(camera_scores(r, camera).get("n", 0)) for camera in CAMERA_KINDS)]
        for label, r in captions.items()
    ]
    return markdown_table(["Model", *(f"{camera} {c}" for camera, c in columns), "n static / moving"], rows)


def table4_by_camera(entries: Mapping[str, Mapping[str, Mapping[str, Any]]], label_header: str) -> str:
    """Table 4 as rows per label and camera: caption scores BEH / AH / ECF and the OEMU score, with
    their counts, from ``label: {"caption": judge result, "oemu": judge result}`` (either may be absent)."""
    rows = []
    for label, tasks in entries.items():
        for camera in CAMERA_KINDS:
            caption = camera_scores(tasks.get("caption") or {}, camera)
            oemu = camera_scores(tasks.get("oemu") or {}, camera)
            rows.append(
                [label, camera, caption.get("n", 0)]
                + [fmt_number(caption.get("criteria", {}).get(c), 2) for c in CAPTION_CRITERIA]
                + [oemu.get("n", 0), fmt_number(oemu.get("score"), 2)]
            )
    header = [label_header, "Camera", "n captions", *CAPTION_CRITERIA, "n OEMU", "OEMU"]
    return markdown_table(header, rows, "llrrrrrr")
