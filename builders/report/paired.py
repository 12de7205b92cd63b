"""Paired tests between the models of a side-by-side report, on the items they share.

Two models answered the same questions, so their accuracies are compared item by item (exact
McNemar, :func:`builders.scoring.stats.mcnemar_exact`) rather than as two independent proportions,
and their judge scores by a sign test on the items both had judged
(:func:`builders.scoring.stats.sign_test`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from builders.report.document import Section
from builders.report.tables import fmt_number, fmt_p_value, markdown_table
from builders.scoring.stats import mcnemar_exact, sign_test


def accuracy_pairs(correct: Mapping[str, Sequence[bool | None]]) -> list[dict[str, Any]]:
    """Exact McNemar for every pair of models (``correct``: model -> right/wrong per item, in one
    item order; None = not scored, left out of that pair)."""
    out = []
    for a, b in combinations(correct, 2):
        both = [
            (x, y) for x, y in zip(correct[a], correct[b], strict=True) if x is not None and y is not None
        ]
        test = mcnemar_exact([x for x, _ in both], [y for _, y in both])
        out.append({"a": a, "b": b, **test})
    return out


def score_pairs(scores: Mapping[str, Mapping[str, float]]) -> list[dict[str, Any]]:
    """Sign test for every pair of models (``scores``: model -> item id -> score), on the items
    both have a score for."""
    out = []
    for a, b in combinations(scores, 2):
        shared = [i for i in scores[a] if i in scores[b]]
        if shared:
            test = sign_test([scores[a][i] for i in shared], [scores[b][i] for i in shared])
            out.append({"a": a, "b": b, **test})
    return out


def paired_section(
    accuracy: Sequence[Mapping[str, Any]], scores: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> Section | None:
    """The report section (None when fewer than two models were compared)."""
    scores = {task: pairs for task, pairs in (scores or {}).items() if pairs}
    if not accuracy and not scores:
        return None
    body = []
    if accuracy:
        rows = [
            [
                f"{p['a']} vs {p['b']}",
                p["n"],
                p["both"],
                p["a_only"],
                p["b_only"],
                p["neither"],
                fmt_p_value(p["p_value"]),
            ]
            for p in accuracy
        ]
        body += [
            "Accuracy, item by item: exact McNemar test (two-sided binomial on the items only one of the "
            "two models got right). A small p-value says the two accuracies differ beyond chance on these "
            "items; it does not say by how much.",
            markdown_table(["A vs B", "items", "both right", "only A", "only B", "neither", "p-value"], rows),
        ]
    for task, pairs in scores.items():
        rows = [
            [f"{p['a']} vs {p['b']}", p["n"], p["a_higher"], p["b_higher"], p["ties"],
             fmt_number(p["mean_difference"], 2), fmt_p_value(p["p_value"])]
            for p in pairs
        ]  # fmt: skip
        body += [
            f"Judge scores ({task}), item by item on the items both have judged: two-sided sign test (ties dropped).",
            markdown_table(
                ["A vs B", "items", "A higher", "B higher", "ties", "mean A - B", "p-value"], rows
            ),
        ]
    return Section("Paired comparisons between models", body)
