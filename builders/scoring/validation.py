"""Input checks shared by the metrics: every error names the argument and the item."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeGuard


def check_same_length(**columns: Sequence | None) -> int:
    """Number of items, after checking that every given (non-None) column has that many."""
    given = {name: len(col) for name, col in columns.items() if col is not None}
    if len(set(given.values())) > 1:
        sizes = ", ".join(f"{name}={size}" for name, size in given.items())
        raise ValueError(f"inputs differ in length: {sizes}")
    n = next(iter(given.values()), 0)
    if n == 0:
        raise ValueError("no items to score: the inputs are empty")
    return n


def check_reply(index: int, reply: object) -> str | None:
    """A model reply must be text (None counts as no answer)."""
    if reply is not None and not isinstance(reply, str):
        raise ValueError(
            f"predictions[{index}]: expected the model's raw text reply, got {type(reply).__name__}"
        )
    return reply


def is_column(value: object) -> TypeGuard[Iterable[Any]]:
    """A column of items: a list, tuple, numpy array, pandas Series or datasets column (not text, not
    a mapping such as a setting's JSON)."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _plain(value: Any) -> Any:
    # numpy scalars and arrays (what a pandas column of lists holds) as Python values and lists
    return value.tolist() if hasattr(value, "tolist") and not isinstance(value, (str, bytes)) else value


def as_column(name: str, values: object) -> list[Any]:
    """A column-like input as a plain list (numpy items as Python values). A pandas Series is read in
    its order, never by its index labels (a filtered DataFrame's labels do not start at 0)."""
    if not is_column(values):
        raise ValueError(f"{name}: expected a list (or a pandas/numpy column), got {type(values).__name__}")
    return [_plain(v) for v in values]


class NamedInputs:
    """Mixin for an ``evaluate.Metric``: a missing input is a ValueError that names it and lists what
    the metric needs (``evaluate`` itself fails with a bare ``KeyError: 'choices'``), and columns come
    as they are: lists, numpy arrays or pandas columns (read as plain lists, in order).

    Put it first among the bases (``class BqaAccuracy(NamedInputs, evaluate.Metric)``). ``compute()``
    with inputs already names missing ones itself.
    """

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score (see the inputs description); every column may be a list, a numpy array or a pandas column."""
        columns = {k: as_column(k, v) if is_column(v) else v for k, v in kwargs.items()}
        return super().compute(
            predictions=as_column("predictions", predictions) if predictions is not None else None,
            references=as_column("references", references) if is_column(references) else references,
            **columns,
        )

    def _check_inputs(self, given: dict, call: str) -> None:
        needed = list(self._feature_names())  # type: ignore[attr-defined]
        missing = [name for name in needed if given.get(name) is None]
        if missing:
            raise ValueError(
                f"{self.name}.{call}: missing input(s) {', '.join(missing)}; this metric needs "  # type: ignore[attr-defined]
                f"{', '.join(needed)}, each given as a keyword argument"
            )

    # evaluate appends the metric's inputs description to these docstrings: they must have one.
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of inputs (every input the metric needs, as keyword arguments)."""
        self._check_inputs({"predictions": predictions, "references": references, **kwargs}, "add_batch()")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one item's inputs (every input the metric needs, as keyword arguments)."""
        self._check_inputs({"predictions": prediction, "references": reference, **kwargs}, "add()")
        return super().add(prediction=prediction, reference=reference, **kwargs)


def is_missing(value: object) -> bool:
    """None, a float NaN, or pandas' NA/NaT: what a DataFrame column holds for a missing value."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float) and math.isnan(value)


def text_column(name: str, values: object, *, none_as: str | None = None) -> list[str]:
    """A metric module's text input checked before ``evaluate`` sees it (whose own check reads only
    the first item and then reports a generic "inputs don't match"): a list of text, each error
    naming ``name[i]``; ``none_as`` (when given) stands in for missing items (None, or NaN from a
    pandas column; e.g. "" for no reply)."""
    if not is_column(values):
        raise ValueError(
            f"{name}: expected a list of text (or a pandas/numpy column), got {type(values).__name__}"
        )
    out = []
    for i, value in enumerate(as_column(name, values)):
        if none_as is not None and is_missing(value):
            value = none_as
        if not isinstance(value, str):
            allowed = "text or None" if none_as is not None else "text"
            raise ValueError(f"{name}[{i}]: expected {allowed}, got {value!r}")
        out.append(value)
    return out
