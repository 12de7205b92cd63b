"""Split items 6:2:2 into train/validation/test: grouped, stratified, seeded.

Clips of one source film share actors and scenes, so a film (the group) never straddles splits.
Within that constraint the split sizes follow the ratios and each stratum (for BQA: difficulty x
answer group) is spread across the splits in the same ratios, as closely as whole films allow.

Greedy, largest film first (ties broken by a seeded shuffle): each film goes to the split where it
lowers the squared distance to the targets most, summed over the split sizes and every stratum's
counts (each normalised by its total, so that a small stratum weighs as much as a large one).
When no more films are left than splits still empty, the remaining films go to those splits, so
that with at least three films no split is empty. Deterministic for a given seed, and independent
of the input order of the films.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from bqa.candidates import row_rng
from bqa.features import SPLITS

T = TypeVar("T")

RATIOS: dict[str, float] = {"train": 0.6, "validation": 0.2, "test": 0.2}


def grouped_stratified_split(
    items: Sequence[T],
    *,
    group: Callable[[T], str],
    stratum: Callable[[T], Hashable],
    seed: int,
    ratios: Mapping[str, float] = RATIOS,
) -> dict[str, list[T]]:
    """``{split: items}`` (each in input order); every group's items land in one split."""
    if not ratios or any(r < 0 for r in ratios.values()) or sum(ratios.values()) <= 0:
        raise ValueError(f"ratios must be non-negative with a positive sum, got {dict(ratios)}")
    total_ratio = sum(ratios.values())
    share = {s: r / total_ratio for s, r in ratios.items()}
    members: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        members.setdefault(str(group(item)), []).append(i)
    strata = {g: Counter(stratum(items[i]) for i in idx) for g, idx in members.items()}
    totals: Counter[Hashable] = Counter()
    for stratum_counts in strata.values():
        totals.update(stratum_counts)
    n = len(items)

    order = sorted(members)
    row_rng(seed, "grouped_stratified_split").shuffle(order)
    order.sort(key=lambda g: len(members[g]), reverse=True)  # stable: the shuffle breaks ties

    size = dict.fromkeys(share, 0)
    counts: dict[str, Counter[Hashable]] = {s: Counter() for s in share}

    def gain(split: str, g: str) -> float:
        """How much adding group ``g`` to ``split`` changes the distance to the targets (lower is better)."""
        m = len(members[g])
        delta = ((size[split] + m - share[split] * n) ** 2 - (size[split] - share[split] * n) ** 2) / n
        for key, v in strata[g].items():
            target = share[split] * totals[key]
            have = counts[split][key]
            delta += ((have + v - target) ** 2 - (have - target) ** 2) / totals[key]
        return delta

    assignment: dict[str, str] = {}
    for position, g in enumerate(order):
        # Every split with a positive ratio gets a group, if there are enough groups to go round.
        empty = [s for s in share if share[s] > 0 and size[s] == 0]
        candidates = empty if 0 < len(empty) >= len(order) - position else list(share)
        best = min(candidates, key=lambda s: (gain(s, g), list(share).index(s)))
        assignment[g] = best
        size[best] += len(members[g])
        counts[best].update(strata[g])
    out: dict[str, list[T]] = {s: [] for s in share}
    for item in items:
        out[assignment[str(group(item))]].append(item)
    return out


def split_release(records: Sequence[T], *, seed: int) -> dict[str, list[T]]:
    """BQA's split of :class:`bqa.records.BQARecord` rows: by film, stratified by (difficulty, answer group)."""
    assert tuple(RATIOS) == SPLITS
    return grouped_stratified_split(
        records,
        group=lambda r: r.source.film_id,  # type: ignore[attr-defined]
        stratum=lambda r: (r.difficulty, r.answer_group),  # type: ignore[attr-defined]
        seed=seed,
    )


SPLIT_RULE = (
    "by source film (no film in two splits), stratified by difficulty x answer group, "
    "train/validation/test 6:2:2, seeded"
)
