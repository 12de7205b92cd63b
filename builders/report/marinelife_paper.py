"""MarineLife-16K's runs beside the paper: accuracy per dimension and OEMU beside Table 3, caption judge
scores beside the caption table. The paper gives no n, so every verdict is rough and says why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from builders.report.marinelife_report import CAPTION, OEMU
from builders.report.paper_comparison import PaperRequest, comparisons, match_rows, paper_metrics
from builders.report.paper_tables import camera_scores
from builders.scoring.judge_results import JudgeResult
from builders.scoring.paper_comparison import RunValue
from builders.scoring.paper_values import PaperCell


def compare_with_paper(
    accuracy: Mapping[str, Mapping[str, Any]],
    judge: Mapping[str, Mapping[str, JudgeResult]],
    request: PaperRequest,
) -> list[dict[str, Any]]:
    """``metrics.json``'s ``paper``: each run whose name (or recorded model) maps to a model of Table 3,
    its accuracy per dimension and OEMU beside Table 3's, its caption scores beside the caption table's.
    The paper gives no n: every n is inferred (or absent), so every verdict is rough."""
    from marinelife16k.paper import published

    values = published()
    names = list(dict.fromkeys([*accuracy, *judge]))
    recorded = {name: [m["provenance"]["model_asked"]] for name, m in accuracy.items()
                if isinstance(m["provenance"].get("model_asked"), str)}  # fmt: skip

    def table3_value(name: str, cell: PaperCell) -> RunValue | None:
        if cell.column == "OEMU":
            return _judge_value(judge.get(name, {}).get(OEMU), None, None)
        result = accuracy.get(name, {}).get("accuracy")
        if result is None or not result["n"].get(cell.column):
            return None
        value, n = result[cell.column], result["n"][cell.column]
        return RunValue(value, n, successes=round(value * n / 100))

    def caption_value(name: str, cell: PaperCell) -> RunValue | None:
        return _judge_value(judge.get(name, {}).get(CAPTION), cell.info("camera"), cell.info("criterion"))

    caveat = (
        "MarineLife-16K's paper gives no n: each n here is inferred from the cells' granularity (see n_how), "
        "so intervals and p-values are rough and no cell gets a consistent/differs verdict."
    )
    out = []
    for table_id, run_value in (("table3", table3_value), ("captions", caption_value)):
        matched, unmatched = match_rows(names, recorded, values.table(table_id)["rows"], request)
        entries = comparisons(values, table_id, matched, run_value)
        out.append(paper_metrics(values, table_id, matched, unmatched, entries, [caveat]))
    return out


def _judge_value(result: JudgeResult | None, camera: str | None, criterion: str | None) -> RunValue | None:
    scores = camera_scores(result, camera)
    if scores is None or not scores.n:
        return None
    value = scores.score if criterion is None else scores.criteria.get(criterion)
    interval = scores.score_interval if criterion is None else scores.criteria_intervals.get(criterion)
    if value is None:
        return None
    return RunValue(value, scores.n, interval=None if interval is None else (interval[0], interval[1]))
