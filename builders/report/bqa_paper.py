"""BQA's runs beside the paper: Table 1 (test) or Table 4 (validation), row by row.

A run maps to a row by ``--as``, its name or the model it asked for (any id, label or spelling of
:data:`bqa.paper.MODELS`); :func:`compare_with_paper` compares its Easy / Hard / Total in the columns
of its style, :func:`table_frames` gives each mapped run its row's ``#F`` (the report's mixed-frames
rule lets runs differ exactly that way), :func:`published_rows` the paper's own rows for the layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from builders.report.paper_comparison import PaperRequest, comparisons, match_rows, paper_metrics
from builders.report.paper_tables import BQARow
from builders.scoring.paper_comparison import RunValue
from builders.scoring.paper_values import PaperCell

#: The paper's table of each split's accuracies (Table 4: validation; the paper ran no train split).
PAPER_TABLES = {"test": "table1", "validation": "table4"}
_SUBSET_KEYS = {
    "Easy": ("accuracy_easy", "n_easy"),
    "Hard": ("accuracy_hard", "n_hard"),
    "Total": ("accuracy", "n"),
}


def _paper_rows(
    runs: Mapping[str, Mapping[str, Any]], split: str, request: PaperRequest
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Run name -> its row of the split's paper table (by ``--as``, its name or the model it asked for)."""
    from bqa.paper import paper_model, published

    def label(text: str) -> str | None:
        model = paper_model(text)
        return model.label if model else None

    asked = {name: [v for v in (run.get("model_asked"),) if isinstance(v, str)] for name, run in runs.items()}
    rows = published().table(PAPER_TABLES[split])["rows"]
    return match_rows(runs, asked, rows, request, label)


def table_frames(
    runs: Mapping[str, Mapping[str, Any]], split: str, request: PaperRequest
) -> dict[str, dict[str, Any]]:
    """Run -> the frames its paper row's ``#F`` prints (``*``: 1 fps; ``16``: 16 frames), for the runs
    that map to a row of the split's table (none on a split the paper has no table for)."""
    from bqa.paper import frames_of

    if split not in PAPER_TABLES:
        return {}
    matched, _ = _paper_rows(runs, split, request)
    return {name: frames_of(row["frames"]) for name, row in matched.items() if row["frames"] != "-"}


def compare_with_paper(
    models: Mapping[str, Mapping[str, Any]], split: str, request: PaperRequest
) -> list[dict]:
    """``metrics.json``'s ``paper``: each run whose model maps to a row of Table 1 (test) or Table 4
    (validation), its Easy / Hard / Total in the columns of its style beside the paper's."""
    from bqa.paper import published

    if split not in PAPER_TABLES:
        raise ValueError(
            f"--paper: the BQA paper reports no {split!r} split (Table 1: test, Table 4: validation)"
        )
    values, table_id = published(), PAPER_TABLES[split]
    matched, unmatched = _paper_rows({n: m["provenance"] for n, m in models.items()}, split, request)

    def run_value(name: str, cell: PaperCell) -> RunValue | None:
        if cell.info("style") != (models[name].get("style") or "single_word"):
            return None
        accuracy, n = (models[name]["metrics"][k] for k in _SUBSET_KEYS[cell.info("subset")])
        if not n:
            return None
        return RunValue(accuracy, n, successes=round(accuracy * n))

    notes = [
        f"{name}: the paper's {values.table(table_id)['name']} has no column for the {models[name].get('style')} style."
        for name in matched
        if (models[name].get("style") or "single_word")
        not in {c.get("style") for c in values.table(table_id)["columns"]}
    ]
    entries = comparisons(values, table_id, matched, run_value)
    return [paper_metrics(values, table_id, matched, unmatched, entries, notes)]


def published_rows(matched: Iterable[str], split: str) -> list[BQARow]:
    """The paper's own rows (``paper: LABEL``) of the rows runs were matched to, for its table's layout."""
    from bqa.paper import published

    table = published().table(PAPER_TABLES[split])
    keys = {subset: key for subset, (key, _) in _SUBSET_KEYS.items()}
    rows = []
    for row in (r for r in table["rows"] if r["label"] in set(matched)):
        results: dict[str, dict[str, float]] = {}
        for cell in published().cells(table["id"]):
            if cell.row == row["label"]:
                results.setdefault(cell.info("style"), {})[keys[cell.info("subset")]] = cell.value
        rows.append(BQARow(f"paper: {row['label']}", row["frames"], results))
    return rows
