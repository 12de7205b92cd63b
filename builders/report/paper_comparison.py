"""``report --paper``: each run that maps to a paper model, cell by cell beside the paper's table.

A run maps to a row of the paper's table by ``--as NAME=ROW`` (a row as printed, e.g.
``"VideoLLaMA2 (FT)"``, or a model), else by its name or the model its run recorded asking for
(BQA: any of the ids, labels or spellings of :data:`bqa.paper.MODELS`, mapping to the row that is
not fine-tuned). The comparison itself is :func:`builders.scoring.paper_comparison.compare`; this
module picks the cells, and writes them into ``metrics.json`` (``paper``), a report section and
terminal lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from builders.report.document import Section
from builders.report.tables import fmt_p_value, markdown_table
from builders.scoring.paper_comparison import ALPHA, CellComparison, RunValue, compare
from builders.scoring.paper_values import PaperCell, PaperValues

#: (run name, cell) -> the run's value for that cell (None: the run has no value there).
RunValueOf = Callable[[str, PaperCell], RunValue | None]


@dataclass(frozen=True)
class PaperRequest:
    """What ``--paper`` and ``--as`` asked: run name -> paper row (as printed) or paper model, and
    whether to compare (``--as`` alone only maps runs to rows: the table's ``#F`` column)."""

    as_rows: Mapping[str, str] = field(default_factory=dict)
    compare: bool = True


def _key(text: str) -> str:
    return text.split(" [")[0].strip().lower()


def match_rows(
    names: Iterable[str],
    recorded: Mapping[str, Iterable[str]],
    rows: list[dict[str, Any]],
    request: PaperRequest,
    canonical: Callable[[str], str | None] = lambda name: None,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Run name -> the paper row it maps to, and the names that map to none. ``recorded``: what each
    run recorded about its model (the ids it asked for); ``canonical``: a paper-specific spelling of a
    name or id to the model name rows carry (BQA: ``bqa.paper.paper_model``'s label)."""
    models = [r for r in rows if r.get("model")]
    matched, unmatched = {}, []
    names = list(names)
    unknown = sorted(set(request.as_rows) - set(names))
    if unknown:
        raise ValueError(f"--as names {', '.join(unknown)}: no run of that name (runs: {', '.join(names)})")
    for name in names:
        wanted = request.as_rows.get(name)
        if wanted is not None:
            row = _row_named(wanted, models, canonical)
            if row is None:
                choices = ", ".join(dict.fromkeys(r["label"].split(" [")[0] for r in models))
                raise ValueError(f"--as {name}={wanted}: the paper's table has no such row (rows: {choices})")
            matched[name] = row
            continue
        for candidate in (name, *recorded.get(name, ())):
            row = _row_named(candidate, models, canonical)
            if row is not None:
                matched[name] = row
                break
        else:
            unmatched.append(name)
    return matched, unmatched


def _row_named(
    text: str, rows: list[dict[str, Any]], canonical: Callable[[str], str | None]
) -> dict[str, Any] | None:
    wanted = _key(text)
    for row in rows:  # a row as printed first: "VideoLLaMA2 (FT)"
        if _key(row["label"]) == wanted:
            return row
    model = (canonical(text) or text).strip().lower()
    return next((r for r in rows if r["model"].lower() == model and not r.get("finetuned")), None)


def comparisons(
    values: PaperValues, table_id: str, matched: Mapping[str, Mapping[str, Any]], run_value: RunValueOf
) -> list[dict[str, Any]]:
    """One entry per (run, cell of its paper row the run has a value for)."""
    out = []
    cells = list(values.cells(table_id))
    for name, row in matched.items():
        for cell in cells:
            if cell.row != row["label"] or cell.line != row["line"]:
                continue
            run = run_value(name, cell)
            if run is not None:
                out.append({"run_name": name, **compare(cell, run).to_dict()})
    return out


def paper_metrics(
    values: PaperValues,
    table_id: str,
    matched: Mapping[str, Mapping[str, Any]],
    unmatched: list[str],
    entries: list[dict[str, Any]],
    notes: list[str],
) -> dict[str, Any]:
    table = values.table(table_id)
    return {
        "paper": values.paper,
        "table": table["name"],
        "seed": values.seed,
        "n_how": table.get("n_how"),
        "test": f"two-sided pooled two-proportion z-test, consistent at p >= {ALPHA}; the paper's count is "
        "round(value x n); intervals: 95% Wilson",
        "matched": {name: row["label"] for name, row in matched.items()},
        "unmatched": unmatched,
        "notes": notes,
        "cells": entries,
    }


def _value(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _interval(interval: list[float] | None, digits: int) -> str:
    return "" if interval is None else f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def _digits(c: CellComparison) -> int:
    """As the paper prints: 0-1 accuracy with 3 decimals here, percent with 1, 0-5 scores with 2."""
    return {1: 3, 100: 1}.get(int(c.scale_top), 2)


def _row_cells(entry: Mapping[str, Any]) -> list[object]:
    c = CellComparison(**{k: v for k, v in entry.items() if k != "run_name"})
    digits = _digits(c)
    paper_n = "no n" if c.paper_n is None else f"n={c.paper_n}" + (" inferred" if c.n_inferred else "")
    paper = (
        f"{_value(c.paper, digits)}{' ⚑' if c.flag else ''} ({paper_n}){_interval(c.paper_interval, digits)}"
    )
    return [
        entry["run_name"],
        c.paper_row,
        c.column,
        f"{_value(c.run, digits)} (n={c.run_n}){_interval(c.run_interval, digits)}",
        paper,
        "–" if c.difference is None else f"{c.difference:+.{digits}f}",
        fmt_p_value(c.p_value) if c.p_value is not None else "–",
        c.verdict,
    ]


HEADER = ["Run", "Paper row", "Column", "Run (95% CI)", "Paper (n, 95% CI)", "Run − paper", "p", "Verdict"]


def paper_section(metrics: Mapping[str, Any]) -> Section:
    """The report section: the comparison table, the test used, and every flag spelled out."""
    cells = metrics["cells"]
    body = [
        f"Each run beside {metrics['paper']}, {metrics['table']} (the values of `{metrics['seed']}`, with the "
        f"line each was read from in metrics.json). Test: {metrics['test']}. Verdicts: consistent / differs "
        "where both n are known; 'no n: rough only' where the paper's n is absent or inferred; 'flagged' where "
        "the paper contradicts itself."
    ]
    if metrics["n_how"]:
        body.append(f"The paper's n: {metrics['n_how']}.")
    if cells:
        body.append(markdown_table(HEADER, [_row_cells(e) for e in cells], "lllrrrrl"))
    flags = {(e["paper_row"], e["column"]): e["flag"] for e in cells if e["flag"]}
    body += [f"⚑ {row}, {column}: {flag}." for (row, column), flag in flags.items()]
    body += metrics["notes"]
    if metrics["unmatched"]:
        body.append(
            f"Not compared (no paper model matches; name one with --as NAME=ROW): {', '.join(metrics['unmatched'])}."
        )
    return Section(f"Beside the paper ({metrics['table']})", body, [])


def terminal_lines(metrics: Mapping[str, Any]) -> list[str]:
    """One line per compared cell, for the terminal."""
    lines = [f"beside the paper ({metrics['table']}; {metrics['test']}):"]
    for e in metrics["cells"]:
        cells = _row_cells(e)
        lines.append(f"  {cells[0]} vs {cells[1]}, {cells[2]}: run {cells[3]}, paper {cells[4]}, "
                     f"diff {cells[5]}, p {cells[6]}: {cells[7]}")  # fmt: skip
    lines += [f"  {line}" for line in metrics["notes"]]
    if metrics["unmatched"]:
        lines.append(f"  not compared (no paper model; --as NAME=ROW): {', '.join(metrics['unmatched'])}")
    return lines
