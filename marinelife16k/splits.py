"""Split MarineLife-16K by video: every question of a video lands in that video's split."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping

from marinelife16k.vocabulary import SPLIT_SIZES

SPLITS: tuple[str, ...] = tuple(SPLIT_SIZES)
# The release's proportions (1,300 / 200 / 500 of 2,000), used for collections of any other size.
SPLIT_RATIOS: dict[str, float] = {
    name: size / sum(SPLIT_SIZES.values()) for name, size in SPLIT_SIZES.items()
}


def split_counts(total: int, sizes: Mapping[str, int | float] | None = None) -> dict[str, int]:
    """How many videos each split gets.

    ``sizes`` of ints are exact counts and must add up to ``total``; floats are ratios, turned into
    counts by the largest-remainder method (ties go to the split listed first). ``None`` means the
    paper's counts (:data:`~marinelife16k.vocabulary.SPLIT_SIZES`) when ``total`` is 2,000, else its
    ratios (65 / 10 / 25 %).
    """
    if sizes is None:
        sizes = SPLIT_SIZES if total == sum(SPLIT_SIZES.values()) else SPLIT_RATIOS
    unknown = [name for name in sizes if name not in SPLITS]
    if unknown:
        raise ValueError(f"unknown split name(s) {unknown}; expected among {list(SPLITS)}")
    if any(v < 0 for v in sizes.values()):
        raise ValueError(f"split sizes must not be negative: {dict(sizes)}")
    if all(isinstance(v, int) for v in sizes.values()):
        if sum(sizes.values()) != total:
            raise ValueError(f"split sizes {dict(sizes)} add up to {sum(sizes.values())}, not {total} videos")
        return {name: int(v) for name, v in sizes.items()}
    weight = float(sum(sizes.values()))
    if weight <= 0:
        raise ValueError(f"split ratios must add up to more than 0: {dict(sizes)}")
    exact = {name: total * v / weight for name, v in sizes.items()}
    counts = {name: math.floor(x) for name, x in exact.items()}
    by_remainder = sorted(exact, key=lambda n: -(exact[n] - counts[n]))  # stable: ties keep the listed order
    for name in by_remainder[: total - sum(counts.values())]:
        counts[name] += 1
    return counts


def assign_splits(
    video_ids: Iterable[str], sizes: Mapping[str, int | float] | None = None, *, seed: int = 0
) -> dict[str, str]:
    """Map each video id to ``train``, ``validation`` or ``test``; see :func:`split_counts` for ``sizes``.

    The ids are sorted before a ``random.Random(seed)`` shuffle, so the result depends on the set of
    ids and the seed only, not on the order they come in.
    """
    ids = list(video_ids)
    if len(set(ids)) != len(ids):
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        raise ValueError(f"video ids must be unique to split by video; repeated: {duplicates[:10]}")
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    result: dict[str, str] = {}
    start = 0
    for name, count in split_counts(len(order), sizes).items():
        for video_id in order[start : start + count]:
            result[video_id] = name
        start += count
    return result
