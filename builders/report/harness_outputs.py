"""Reading what the evaluation harnesses wrote as this project's predictions lines.

The mapping, per file kind (recognised by its name and content, never guessed):

lmms-eval per-sample log (``--log_samples``: ``<date>_samples_<task>.jsonl``, one JSON object per doc
with ``doc_id``, ``filtered_resps`` and each metric's per-doc value; v0.7.2
``lmms_eval/loggers/evaluation_tracker.py``)
    The tasks of :mod:`builders.integrations.lmms_eval` log, as every metric's value, the
    predictions line the project's runner writes (item fields, ``raw_output``, ``rationale``...),
    with the run's ``provenance`` (the frames the model was really sent, the harness, data, split).
    That line is taken as it is; a log without one (another task) is an error naming the line.

VLMEvalKit result file (``<model>_<dataset>.xlsx`` or ``.tsv``: the dataset's table plus a
``prediction`` column; ``vlmeval/inference_video.py``)
    The datasets of :mod:`builders.integrations.vlmevalkit` carry each item's predictions-line
    fields as JSON in the :data:`ITEM_COLUMN` column, with the run's ``provenance`` (the frames the
    dataset sent, the harness, the data and split); the line is those fields plus
    ``raw_output`` = ``prediction``. An empty prediction, or VLMEvalKit's failure text
    (:data:`VLMEVALKIT_FAILED`), is no reply (``None``: scored as unparsed, as a missing reply).

Either way the result is the list of lines a predictions JSONL would hold, so the report
(:func:`builders.report.inputs.read_predictions`), the judge (``vqabench marinelife judge``) and the
metrics' inputs (``bqa.predictions.accuracy_inputs``) read harness outputs like the runner's own.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builders.files.jsonio import iter_jsonl

#: The VLMEvalKit datasets' column holding each item's predictions-line fields (JSON).
ITEM_COLUMN = "vqabench_item"
#: What VLMEvalKit writes as the prediction of a failed inference (``vlmeval/smp/file.py`` INFER_FAIL_MSG).
VLMEVALKIT_FAILED = "Failed to obtain answer"
TABLE_SUFFIXES = (".xlsx", ".tsv")
_LMMS_EVAL_KEYS = ("doc_id", "filtered_resps")


#: What a predictions file may be, for the errors that meet something else.
ACCEPTED = (
    "a predictions JSONL (one JSON object per line with the item's id - 'id' for BQA, 'question_id' for "
    "MarineLife-16K - and the reply as 'raw_output' or 'prediction'; README 'Predictions files', "
    "builders/report/predictions.schema.json), an lmms-eval sample log of the project's tasks, or a "
    "VLMEvalKit .xlsx/.tsv result file"
)


def harness_kind(path: str | os.PathLike[str]) -> str | None:
    """``"vlmevalkit"``, ``"lmms-eval"`` or None (a predictions JSONL of this project). A file that is
    not JSONL (a CSV, a JSON array) is an error saying what is accepted."""
    path = Path(path)
    if path.suffix.lower() in TABLE_SUFFIXES:
        return "vlmevalkit"
    try:
        for _, data in iter_jsonl(path):
            return "lmms-eval" if isinstance(data, dict) and all(k in data for k in _LMMS_EVAL_KEYS) else None
    except ValueError as err:  # the first line is not JSON: not a JSONL file at all
        kind = {".csv": "a CSV file", ".json": "a JSON document", ".txt": "plain text"}.get(
            path.suffix.lower()
        )
        raise ValueError(
            f"{err}: {path.name} is not JSONL{f' ({kind})' if kind else ''}; expected {ACCEPTED}"
        ) from None
    return None


def _lmms_eval_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for number, sample in iter_jsonl(path):
        if not isinstance(sample, dict) or not all(k in sample for k in _LMMS_EVAL_KEYS):
            raise ValueError(f"{path}, line {number}: not an lmms-eval sample (no {list(_LMMS_EVAL_KEYS)})")
        line = next((v for v in sample.values() if isinstance(v, dict) and "raw_output" in v), None)
        if line is None:
            raise ValueError(
                f"{path}, line {number} (doc_id {sample['doc_id']}): no metric holds a predictions line; "
                "was this log written by the tasks of 'vqabench integrations path lmms-eval'?"
            )
        lines.append(line)
    return lines


def read_table(path: Path) -> list[dict[str, Any]]:
    """The rows of a VLMEvalKit xlsx/tsv file (pandas; xlsx needs openpyxl: the ``harness`` extra)."""
    import pandas as pd  # lazy: the report loads it only for harness tables

    if path.suffix.lower() == ".tsv":
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    else:
        try:
            frame = pd.read_excel(path, dtype=str, keep_default_na=False)
        except ImportError as err:
            raise RuntimeError(
                f"{path}: reading xlsx needs openpyxl: pip install 'videoqa-bench-tools[harness]' "
                "(in a checkout: pip install -e '.[harness]'), or read VLMEvalKit's .tsv result file"
            ) from err
    return frame.to_dict(orient="records")


def _reply(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return None if not text.strip() or text.startswith(VLMEVALKIT_FAILED) else text


def _vlmevalkit_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for number, row in enumerate(read_table(path), start=2):  # row 1 is the header
        where = f"{path}, row {number}"
        if "prediction" not in row:
            raise ValueError(f"{where}: no 'prediction' column; is this a VLMEvalKit result file?")
        if not row.get(ITEM_COLUMN):
            raise ValueError(
                f"{where}: no {ITEM_COLUMN!r} column; was it written with the datasets of "
                "builders.integrations.vlmevalkit?"
            )
        try:
            item = json.loads(row[ITEM_COLUMN])
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: {ITEM_COLUMN!r} is not JSON: {err}") from None
        lines.append({**item, "raw_output": _reply(row["prediction"])})
    return lines


def read_harness_lines(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The predictions lines of an lmms-eval sample log or a VLMEvalKit result file (see the module doc)."""
    path = Path(path)
    kind = harness_kind(path)
    if kind is None:
        raise ValueError(f"{path}: neither an lmms-eval sample log nor a VLMEvalKit result file")
    lines = _lmms_eval_lines(path) if kind == "lmms-eval" else _vlmevalkit_lines(path)
    if not lines:
        raise ValueError(f"{path}: no predictions")
    return lines


def line_model(line: Any) -> str | None:
    """The model a predictions line answers for: the one its run asked (``provenance.model_asked``),
    else the ``model`` it names; None when it names none."""
    if not isinstance(line, dict):
        return None
    run = line.get("provenance")
    asked = run.get("model_asked") if isinstance(run, dict) else None
    named = asked if asked is not None else line.get("model")
    return named if isinstance(named, str) and named else None


def _one_model(lines: list[tuple[int, Any]], path: str | os.PathLike[str]) -> list[tuple[int, Any]]:
    """The lines of one model: all of them, unless they name several models, which is refused unless
    ``path`` selects one (a :class:`builders.report.inputs.PredictionsFile` with a ``model``)."""
    counts = Counter(m for _, line in lines if (m := line_model(line)) is not None)
    model = getattr(path, "model", None)
    listed = ", ".join(f"{m} ({n} lines)" for m, n in counts.most_common())
    if model is None:
        if len(counts) > 1:
            raise ValueError(
                f"{os.fspath(path)}: replies of {len(counts)} models in one predictions file: {listed}; one file "
                "is one model's run: split it, or keep one model's lines (report: --model NAME=MODEL)"
            )
        return lines
    kept = [(n, line) for n, line in lines if model in (line_model(line), line.get("model"))]
    if not kept:
        raise ValueError(
            f"{os.fspath(path)}: no line answers for model {model!r}; the file has {listed or 'no model named'}"
        )
    return kept


def iter_prediction_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, line)`` of a predictions JSONL, or of a harness output mapped onto its lines
    (numbered by row): the one dispatch every predictions reader goes through. A file whose lines
    answer for several models is refused, naming them, unless ``path`` selects one (see
    :func:`_one_model`)."""
    if harness_kind(path) is None:
        lines = list(iter_jsonl(path))
    else:
        lines = list(enumerate(read_harness_lines(path), start=1))
    return iter(_one_model(lines, path))


def read_prediction_lines(path: str | os.PathLike[str]) -> list[Any]:
    """A predictions JSONL's lines, or a harness output's lines mapped onto them."""
    return [line for _, line in iter_prediction_lines(path)]
