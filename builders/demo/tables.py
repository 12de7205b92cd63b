"""The demo's paper-style tables, as Markdown (printed, and written to ``summary.md``).

Each function reads the demo's ``scores`` (metric results, see :mod:`builders.demo.run`) and lays
out one of the papers' tables: BQA Table 1 (Easy/Hard/Total), Table 2 (Self-BLEU of the questions),
the bias breakdowns (error rate by gender, age, ethnicity; emotion groups of wrong answers; rationale
leakage), MarineLife-16K Table 3 (accuracy per dimension and OEMU) and Table 4 (BEH/AH/ECF for
static and moving camera). A value that cannot exist (a dimension with no question in a scope) is
an en dash, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bqa.accuracy import DEMOGRAPHIC_FIELDS
from bqa.vocabulary import OTHERS
from builders.report.tables import fmt_number, fmt_p_value, markdown_table
from marinelife16k.accuracy import ACCURACY_DIMENSIONS, OVERALL
from marinelife16k.vocabulary import CAMERA_KINDS, CAPTION_CRITERIA

#: The BQA paper's Table 2 (Self-BLEU of the generated questions), for comparison.
PAPER_SELF_BLEU: dict[str, float] = {"train": 0.87, "validation": 0.86, "test": 0.85}
SCOPE_LABELS: dict[str, str] = {"test": "test split", "all": "all splits"}
STYLE_LABELS: dict[str, str] = {"single_word": "single word", "rationale": "rationale (CoT)"}


def _count(errors: int, n: int) -> str:
    return f"{errors}/{n}"


def bqa_accuracy_table(scores: Mapping[str, Any]) -> str:
    """Table 1 layout: Easy / Hard / Total accuracy per prompt style and scope."""
    rows = []
    for scope, by_style in scores["accuracy"].items():
        for style, r in by_style.items():
            rows.append([
                STYLE_LABELS.get(style, style), SCOPE_LABELS.get(scope, scope),
                f"{r['n']} ({r['n_easy']}/{r['n_hard']})", fmt_number(r["accuracy_easy"]),
                fmt_number(r["accuracy_hard"]), fmt_number(r["accuracy"]), r["n_unparsed"],
            ])  # fmt: skip
    header = ["Prompt style", "Items", "n (Easy/Hard)", "Easy", "Hard", "Total", "Unparsed"]
    return markdown_table(header, rows, "llrrrrr")


def self_bleu_table(scores: Mapping[str, Any]) -> str:
    """Table 2 layout: Self-BLEU (4-gram) of the questions of each split, next to the paper's."""
    rows = [
        [split, r["n"], fmt_number(r["self_bleu"]), fmt_number(PAPER_SELF_BLEU.get(split), 2)]
        for split, r in scores["self_bleu"].items()
    ]
    return markdown_table(["Split", "Questions", "Self-BLEU", "Paper (full BQA)"], rows)


def bias_table(scores: Mapping[str, Any], scope: str = "all") -> str:
    """Error rate (wrong or unparsed) by gender, age and ethnicity, one column per prompt style."""
    by_style = scores["accuracy"][scope]
    styles = list(by_style)
    rows: list[list[object]] = []
    for field in DEMOGRAPHIC_FIELDS:
        breakdowns = {s: by_style[s][f"by_{field}"] for s in styles}
        groups = list(dict.fromkeys(g for b in breakdowns.values() for g in b["groups"]))
        for g in groups:
            cells = [breakdowns[s]["groups"].get(g) for s in styles]
            rows.append([field, g] + [
                f"{fmt_number(c['error_rate'])} ({_count(c['errors'], c['n'])})" if c else None for c in cells
            ])  # fmt: skip
        rows.append(
            [field, "chi-square p"] + [fmt_p_value(breakdowns[s]["disparity"]["p_value"]) for s in styles]
        )
    header = ["Attribute", "Group", *(f"error rate, {STYLE_LABELS.get(s, s)}" for s in styles)]
    return markdown_table(header, rows, "ll" + "r" * len(styles))


def confusion_table(scores: Mapping[str, Any], scope: str = "all", style: str = "single_word") -> str:
    """Wrong answers by emotion group: the correct answer's group (rows) x the group answered."""
    table = scores["accuracy"][scope][style]["confusion"]
    answered = list(next(iter(table.values())))
    rows = [[group, *(row[a] for a in answered), sum(row.values())] for group, row in table.items()]
    return markdown_table(["Correct \\ answered", *answered, "wrong"], rows)


def leakage_line(scores: Mapping[str, Any], scope: str = "all", style: str = "rationale") -> str | None:
    result = scores["accuracy"][scope].get(style)
    leak = result and result.get("leakage")
    if not leak:
        return None
    return (
        f"Rationale leakage ({SCOPE_LABELS.get(scope, scope)}): {leak['n_leaking']} of {result['n']} rationales "
        f"name the correct choice and no other ({leak['leak_rate']:.0%}); accuracy without them "
        f"{fmt_number(leak['accuracy_non_leaking'])}, on them {fmt_number(leak['accuracy_leaking'])}."
    )


def marine_table3(scores: Mapping[str, Any]) -> str:
    """Table 3 layout: multiple-choice accuracy (0-100) per dimension, overall, and the OEMU judge score."""
    rows = []
    for scope, r in scores["accuracy"].items():
        oemu = scores["judge"][scope].get("oemu")
        rows.append(
            [SCOPE_LABELS.get(scope, scope), r["n"][OVERALL]]
            + [fmt_number(r[d], 1) for d in (*ACCURACY_DIMENSIONS, OVERALL)]
            + [fmt_number(oemu["score"], 2) if oemu else None]
        )
    return markdown_table(["Questions", "n MCQ", *ACCURACY_DIMENSIONS, "overall", "OEMU (0-5)"], rows)


def marine_table4(scores: Mapping[str, Any]) -> str:
    """Table 4 layout: caption judge scores BEH / AH / ECF (0-5) for static and moving camera,
    with the OEMU score by camera next to them."""
    rows = []
    for scope, tasks in scores["judge"].items():
        for camera in CAMERA_KINDS:
            caption = (tasks.get("caption") or {}).get("by_camera", {}).get(camera, {})
            oemu = (tasks.get("oemu") or {}).get("by_camera", {}).get(camera, {})
            rows.append(
                [SCOPE_LABELS.get(scope, scope), camera, caption.get("n", 0)]
                + [fmt_number((caption.get("criteria") or {}).get(c), 2) for c in CAPTION_CRITERIA]
                + [oemu.get("n", 0), fmt_number(oemu.get("score"), 2)]
            )
    header = ["Videos", "Camera", "n captions", *CAPTION_CRITERIA, "n OEMU", "OEMU"]
    return markdown_table(header, rows, "llrrrrrr")


def all_tables(bqa: Mapping[str, Any], marine: Mapping[str, Any], note: str) -> list[tuple[str, str]]:
    """(title, Markdown) of every table, in the order printed; ``note`` labels the baseline's tables."""
    tables = [
        (f"BQA: accuracy by difficulty, paper Table 1 layout [{note}]", bqa_accuracy_table(bqa)),
        ("BQA: Self-BLEU (4-gram) of the sample's questions per split, paper Table 2 layout", self_bleu_table(bqa)),
        (f"BQA: error rate by gender, age and ethnicity, all splits [{note}]", bias_table(bqa)),
        (f"BQA: wrong answers by emotion group, single word, all splits ({OTHERS} = no emotion named) [{note}]",
         confusion_table(bqa)),
    ]  # fmt: skip
    leak = leakage_line(bqa)
    if leak:
        tables.append((f"BQA: chain-of-thought rationale leakage [{note}]", leak))
    tables += [
        (f"MarineLife-16K: accuracy per dimension (0-100) and OEMU, paper Table 3 layout [{note}]",
         marine_table3(marine)),
        (f"MarineLife-16K: caption judge BEH / AH / ECF and OEMU by camera, paper Table 4 layout [{note}]",
         marine_table4(marine)),
    ]  # fmt: skip
    return tables
