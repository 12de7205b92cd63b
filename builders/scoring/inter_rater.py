"""Agreement among several human raters: Fleiss' kappa, Krippendorff's alpha, observed agreement.

Numpy alone (the test extra checks them against ``statsmodels`` and ``krippendorff``):

- :func:`fleiss_kappa` (Fleiss 1971) over an items x categories table of counts, every item rated
  by the same number of raters. None when chance agreement is 1 (every rating in one category).
- :func:`krippendorff_alpha` (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability")
  over a raters x items matrix with ``None``/NaN where a rater did not rate an item; ``nominal``
  or ``interval`` metric. Items with fewer than two ratings are not pairable and are left out.
  None when expected disagreement is 0 (a single value overall).
- :func:`observed_agreement`: the share of agreeing rater pairs per item, averaged over items
  (Fleiss' P-bar), the plain "how often do two raters agree" number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Level = Literal["nominal", "interval"]


#: ``table[item][category]`` = how many raters put the item in the category (a list of rows or an array).
CountTable = Sequence[Sequence[int]] | np.ndarray


def _counts(table: CountTable) -> np.ndarray:
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] == 0 or counts.shape[1] == 0:
        raise ValueError("need an items x categories table of rating counts")
    if (counts < 0).any() or not np.equal(counts, np.round(counts)).all():
        raise ValueError("rating counts must be whole numbers >= 0")
    per_item = counts.sum(axis=1)
    if per_item.min() != per_item.max():
        bad = int(np.flatnonzero(per_item != per_item[0])[0])
        raise ValueError(
            f"Fleiss' kappa needs the same number of ratings per item: item 0 has {per_item[0]:g}, "
            f"item {bad} has {per_item[bad]:g}"
        )
    if per_item[0] < 2:
        raise ValueError("Fleiss' kappa needs at least two ratings per item")
    return counts


def observed_agreement(table: CountTable) -> float:
    """Mean over items of the share of rater pairs that agree (Fleiss' P-bar)."""
    counts = _counts(table)
    n = counts.sum(axis=1)[0]
    return float(((counts * (counts - 1)).sum(axis=1) / (n * (n - 1))).mean())


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa of ``table[item][category]`` = how many raters put the item in the category."""
    counts = _counts(table)
    p_bar = observed_agreement(counts)
    shares = counts.sum(axis=0) / counts.sum()
    p_e = float((shares**2).sum())
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def category_counts(ratings: Sequence[Sequence[int]], n_categories: int) -> list[list[int]]:
    """Per item, how many of its ratings fall in each category ``0..n_categories-1``."""
    table = []
    for i, item in enumerate(ratings):
        row = [0] * n_categories
        for value in item:
            if not 0 <= value < n_categories:
                raise ValueError(f"item {i}: category {value!r} is not in 0..{n_categories - 1}")
            row[value] += 1
        table.append(row)
    return table


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[float | None]], level: Level = "nominal"
) -> float | None:
    """Krippendorff's alpha of ``reliability_data[rater][item]`` (``None``/NaN = not rated)."""
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    data = np.array(
        [[np.nan if v is None else v for v in row] for row in reliability_data], dtype=float, ndmin=2
    )
    if data.ndim != 2 or data.size == 0:
        raise ValueError("need a raters x items matrix of ratings")
    values = np.unique(data[~np.isnan(data)])
    if len(values) == 0:
        raise ValueError("no ratings at all")
    # Items x values: how many raters gave each value to each item; keep pairable items only.
    per_item = np.stack([(data == v).sum(axis=0) for v in values], axis=1).astype(float)
    m = per_item.sum(axis=1)
    per_item, m = per_item[m >= 2], m[m >= 2]
    if len(m) == 0:
        raise ValueError("no item has two or more ratings: alpha is undefined")
    # Coincidence matrix: o[c, k] = sum over items of (pairs valued c,k) / (m_u - 1).
    coincidence = np.einsum("uc,uk->ck", per_item / (m - 1)[:, None], per_item)
    coincidence -= np.diag((per_item / (m - 1)[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    else:
        delta = (values[:, None] - values[None, :]) ** 2
    observed = float((coincidence * delta).sum()) / n
    expected = float((np.outer(n_c, n_c) * delta).sum()) / (n * (n - 1))
    if expected == 0:
        return None
    return 1.0 - observed / expected
