"""Issue 41: a step's memory is flat in its number of rows (no timing, no RSS: traced bytes only).

Each record is ~8 KB (a prediction with a long reply): held records would cost that per row (measured
on the old code: ~2.8 KB a row for 2 KB records, ~4 KB a row more at the finish's peak); what a step
keeps per row now (an id, an offset, a status) is ~0.6 KB.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from builders.files.jsonio import dumps_line, read_jsonl
from builders.runs.steps import REJECTED, StepRecords

RECORD_BYTES = 8000
#: Bytes a step may grow by per extra row: several times what an id and an offset cost, a fifth of a record.
BOUND_PER_ROW = 1500


def _record(i: int) -> dict[str, object]:
    return {"id": f"v{i:05d}-q{i % 8}", "raw_output": f"answer {i} " + "x" * RECORD_BYTES}


def _add(work: Path, n: int) -> tuple[StepRecords, int]:
    """Traced bytes still held after ``n`` records were added (the step object alive)."""
    tracemalloc.start()
    try:
        records = StepRecords(work, "predictions")
        for i in range(n):
            records.add(
                _record(i), status=REJECTED if i % 10 == 0 else "kept", reason="r" if i % 10 == 0 else None
            )
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return records, held


def _finish_peak(records: StepRecords, n: int) -> int:
    tracemalloc.start()
    try:
        records.finish(_record(i)["id"] for i in range(n))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_records_held_and_finish_peak_do_not_grow_with_rows(tmp_path):
    small, large = 300, 1200
    records_s, held_s = _add(tmp_path / "s", small)
    records_l, held_l = _add(tmp_path / "l", large)
    per_row = (held_l - held_s) / (large - small)
    assert per_row < BOUND_PER_ROW, f"a step holds {per_row:.0f} bytes per extra row"
    peak_s, peak_l = _finish_peak(records_s, small), _finish_peak(records_l, large)
    per_row = (peak_l - peak_s) / (large - small)
    assert per_row < BOUND_PER_ROW, f"finishing a step peaks {per_row:.0f} bytes higher per extra row"


def test_finished_files_hold_every_record_in_input_order_the_last_of_an_id_winning(tmp_path):
    records = StepRecords(tmp_path, "step")
    records.add({"id": "b", "v": 1})
    records.add({"id": "a", "v": "é\u2028"}, status=REJECTED, reason="bad", detail="why")
    records.add({"id": "b", "v": 2})  # a redone item: its last record wins
    records.close()
    resumed = StepRecords(tmp_path, "step")  # indexed from the partial log
    resumed.add({"id": "c", "v": 3})
    assert (resumed.tally().kept, dict(resumed.tally().rejected)) == (2, {"bad": 1})
    resumed.finish(["c", "a", "b"])
    assert read_jsonl(resumed.path) == [{"id": "c", "v": 3}, {"id": "b", "v": 2}]
    expected = dumps_line(
        {"id": "a", "v": "é\u2028", "_status": "rejected", "_reason": "bad", "_detail": "why"}
    )
    assert resumed.rejects_path.read_text(encoding="utf-8") == expected
    assert not resumed.partial_path.exists()
