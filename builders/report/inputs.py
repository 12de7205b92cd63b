"""What a report reads: model prediction files and one split of a dataset.

Prediction files are JSONL, one reply per line: the item's id under ``id_field`` (``id`` for BQA,
``question_id`` for MarineLife-16K) and the model's raw text under ``raw_output`` (or
``prediction``; a line with both must give the same text in each), optionally a ``rationale``. Other keys (a ``parsed_answer`` written by an
evaluation runner, token counts...) are ignored: the report parses every raw reply again with the
shared parser, so every number comes from one piece of code. An lmms-eval sample log or a VLMEvalKit
result file of this project's harness tasks is read through the mapping of
:mod:`builders.report.harness_outputs` (its N-th item stands for line N).

A dataset split comes from each dataset's one opener (:func:`bqa.data.open_split`,
:func:`marinelife16k.data.open_split`): a Hub-layout folder or a pipeline's work folder, text columns
only, nothing copied.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from builders.report.harness_outputs import iter_prediction_lines

TEXT_FIELDS: tuple[str, ...] = ("raw_output", "prediction")
RATIONALE_FIELD = "rationale"
_PREVIEW = 10


def preview(ids: Sequence[str], k: int = _PREVIEW) -> str:
    """``[a, b, ...] and N more``: error messages name items without flooding the terminal."""
    shown = ", ".join(ids[:k])
    return f"[{shown}]" + (f" and {len(ids) - k} more" if len(ids) > k else "")


@dataclass(frozen=True)
class PredictionsFile(os.PathLike):
    """A predictions file with the model whose lines to read (``--model NAME=MODEL``): a path to
    every reader (:func:`builders.report.harness_outputs.iter_prediction_lines` keeps those lines)."""

    path: Path
    model: str | None = None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return os.fspath(self.path)


def select_models(
    paths: Mapping[str, Path], specs: Iterable[str], option: str = "--model"
) -> dict[str, Path | PredictionsFile]:
    """``paths`` (name -> file) with ``NAME=MODEL`` selections applied: that name's file is read for
    that model's lines only (a file holding several models is refused without one)."""
    chosen: dict[str, str] = {}
    for spec in specs:
        name, sep, model = (part.strip() for part in spec.partition("="))
        if not sep or not name or not model:
            raise ValueError(f"{option} {spec!r}: expected NAME=MODEL (NAME as in --predictions NAME=FILE)")
        if name not in paths:
            raise ValueError(f"{option} {spec!r}: no predictions named {name!r} (names: {', '.join(paths)})")
        chosen[name] = model
    return {
        name: PredictionsFile(Path(path), chosen[name]) if name in chosen else path
        for name, path in paths.items()
    }


def named_paths(specs: Iterable[str], option: str) -> dict[str, Path]:
    """``NAME=PATH`` (or a bare ``PATH``, named after its file stem) -> ``{name: path}``, in order."""
    out: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        name, path = name.strip(), path.strip()
        if not name or not path:
            raise ValueError(f"{option} {spec!r}: expected NAME=PATH (or a path)")
        if name in out:
            raise ValueError(f"{option}: the name {name!r} is given twice; name each file (NAME=PATH)")
        out[name] = Path(path)
    return out


@dataclass(frozen=True)
class Prediction:
    text: str | None  # the raw reply; None = the model gave none
    rationale: str | None
    line: int


def _fields(data: Mapping[str, object]) -> str:
    return ", ".join(repr(k) for k in list(data)[:12]) + (" ..." if len(data) > 12 else "")


def read_predictions(path: str | os.PathLike[str], id_field: str) -> dict[str, Prediction]:
    """Item id -> :class:`Prediction` from a JSONL file; malformed or repeated ids are errors."""
    out: dict[str, Prediction] = {}
    for number, data in iter_prediction_lines(path):
        where = f"{path}, line {number}"
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
        item = data.get(id_field)
        if not isinstance(item, str) or not item:
            raise ValueError(
                f"{where}: missing or non-text {id_field!r} (the item's id); the line has {_fields(data)}"
                + (f" (for MarineLife-16K, 'id' is the video's: name each question by {id_field!r})"
                   if id_field != "id" and "id" in data else "")
            )  # fmt: skip
        field = next((f for f in TEXT_FIELDS if f in data), None)
        if field is None:
            raise ValueError(
                f"{where} ({id_field} {item}): no model reply; the line has {_fields(data)}, expected the reply "
                f"as {' or '.join(repr(f) for f in TEXT_FIELDS)} (null for no reply)"
            )
        given = [f for f in TEXT_FIELDS if f in data]
        if len(given) > 1 and data[given[0]] != data[given[1]]:
            raise ValueError(
                f"{where} ({id_field} {item}): both {given[0]!r} and {given[1]!r} are given and they differ; "
                "keep only the model's raw reply (raw_output)"
            )
        text, rationale = data[field], data.get(RATIONALE_FIELD)
        for key, value in ((field, text), (RATIONALE_FIELD, rationale)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{where} ({id_field} {item}): {key!r} must be text or null")
        if item in out:
            raise ValueError(f"{where}: {id_field} {item} already has a prediction at line {out[item].line}")
        out[item] = Prediction(text, rationale, number)
    if not out:
        raise ValueError(f"{path}: no predictions")
    return out


@dataclass(frozen=True)
class Aligned:
    """One model's replies in the split's item order."""

    texts: list[str | None]
    rationales: list[str | None]
    missing: list[str]  # items with no prediction (scored as unparsed, with allow_missing)


def align(
    predictions: Mapping[str, Prediction],
    ids: Sequence[str],
    *,
    source: str,
    split: str,
    allow_missing: bool,
    ignored_ids: Iterable[str] = (),
) -> Aligned:
    """Order ``predictions`` like ``ids``. Predictions for items outside the split (other than
    ``ignored_ids``) are an error (a wrong split or dataset); missing items are an error unless
    ``allow_missing``, in which case they count as replies that name no option."""
    known = set(ids) | set(ignored_ids)
    unknown = [i for i in predictions if i not in known]
    if unknown:
        raise ValueError(
            f"{source}: {len(unknown)} prediction(s) for items that are not in the {split} split: "
            f"{preview(unknown)} (wrong split or dataset?)"
        )
    missing = [i for i in ids if i not in predictions]
    if missing and not allow_missing:
        raise ValueError(
            f"{source}: no prediction for {len(missing)} of the {len(ids)} item(s) of the {split} split: "
            f"{preview(missing)}; pass --allow-missing to score them as unparsed (wrong)"
        )
    got = [predictions.get(i) for i in ids]
    texts = [p.text if p else None for p in got]
    return Aligned(texts, [p.rationale if p else None for p in got], missing)
