"""How well a judge agrees with human raters: Pearson, Spearman, quadratic-weighted kappa, MAE, n.

These are the statistics of the paper's human study (judge scores against the mean of three
experts' scores, per criterion):

- Pearson r and Spearman rho (ties share their average rank): ``scipy.stats.pearsonr`` and
  ``scipy.stats.spearmanr``; None where scipy gives nan (a constant side, or fewer than 2 items).
- Cohen's kappa with quadratic weights on the integer scale ``[min_score, max_score]``, written
  here (scipy has no kappa). Human scores averaged over raters are not integers: both sides are
  rounded half up to the nearest integer of the scale first (documented, so it can be
  reproduced). None when expected disagreement is 0 (both sides constant at one value).
- Mean absolute error on the unrounded scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats


def _arrays(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"need two equally long lists of scores, got {len(a)} and {len(b)}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        bad = int(np.flatnonzero(~(np.isfinite(x) & np.isfinite(y)))[0])
        raise ValueError(f"score {bad} is not a finite number ({a[bad]!r}, {b[bad]!r})")
    return x, y


def _undefined(x: np.ndarray, y: np.ndarray) -> bool:
    # scipy warns and answers nan here; None says "undefined" in a JSON-friendly way.
    return len(x) < 2 or bool((x == x[0]).all() or (y == y[0]).all())


def pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    x, y = _arrays(a, b)
    return None if _undefined(x, y) else float(stats.pearsonr(x, y).statistic)


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    x, y = _arrays(a, b)
    return None if _undefined(x, y) else float(stats.spearmanr(x, y).statistic)


def _round_half_up(x: np.ndarray) -> np.ndarray:
    return np.floor(x + 0.5).astype(int)


def quadratic_weighted_kappa(
    a: Sequence[float], b: Sequence[float], min_score: int = 0, max_score: int = 5
) -> float | None:
    """Cohen's kappa with weights ``(i-j)^2 / (k-1)^2`` over the categories ``min_score..max_score``."""
    x, y = _arrays(a, b)
    if len(x) == 0:
        return None
    xi, yi = _round_half_up(x), _round_half_up(y)
    outside = np.flatnonzero((xi < min_score) | (xi > max_score) | (yi < min_score) | (yi > max_score))
    if len(outside):
        i = int(outside[0])
        raise ValueError(f"score {i} ({a[i]!r}, {b[i]!r}) is outside the scale {min_score}-{max_score}")
    k = max_score - min_score + 1
    observed = np.zeros((k, k))
    np.add.at(observed, (xi - min_score, yi - min_score), 1)
    observed /= len(x)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.arange(k)
    weights = (grid[:, None] - grid[None, :]) ** 2 / (k - 1) ** 2
    disagreement = float((weights * expected).sum())
    if disagreement == 0:
        return None
    return 1.0 - float((weights * observed).sum()) / disagreement


def mean_absolute_error(a: Sequence[float], b: Sequence[float]) -> float | None:
    x, y = _arrays(a, b)
    return float(np.abs(x - y).mean()) if len(x) else None


def agreement_stats(
    judge: Sequence[float], human: Sequence[float], min_score: int = 0, max_score: int = 5
) -> dict[str, Any]:
    """``{"pearson", "spearman", "kappa", "mae", "n"}`` for one criterion."""
    return {
        "pearson": pearson(judge, human),
        "spearman": spearman(judge, human),
        "kappa": quadratic_weighted_kappa(judge, human, min_score, max_score),
        "mae": mean_absolute_error(judge, human),
        "n": len(judge),
    }


def _columns(
    scores: Mapping[str, Sequence[float]] | Sequence[Mapping[str, float]], side: str
) -> dict[str, list]:
    if isinstance(scores, Mapping):
        return {str(k): list(v) for k, v in scores.items()}
    columns: dict[str, list] = {}
    names = list(scores[0]) if scores else []
    for i, row in enumerate(scores):
        if set(row) != set(names):
            raise ValueError(f"{side} item {i} has criteria {sorted(row)}, item 0 has {sorted(names)}")
        for name in names:
            columns.setdefault(name, []).append(row[name])
    return columns


def agreement(
    judge: Mapping[str, Sequence[float]] | Sequence[Mapping[str, float]],
    human: Mapping[str, Sequence[float]] | Sequence[Mapping[str, float]],
    min_score: int = 0,
    max_score: int = 5,
) -> dict[str, dict[str, Any]]:
    """Per criterion :func:`agreement_stats`. Each side is ``{criterion: [scores]}`` or a list of
    per-item ``{criterion: score}`` (e.g. the judge metric's ``items[i]["criteria"]``); items align
    by position, and both sides must name the same criteria."""
    j, h = _columns(judge, "judge"), _columns(human, "human")
    if set(j) != set(h):
        raise ValueError(f"judge criteria {sorted(j)} differ from human criteria {sorted(h)}")
    out = {}
    for name in j:
        try:
            out[name] = agreement_stats(j[name], h[name], min_score, max_score)
        except ValueError as err:
            raise ValueError(f"criterion {name!r}: {err}") from None
    return out
