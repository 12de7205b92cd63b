"""Splitting by video: the paper's sizes, proportional samples, seeded and order-independent."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from marinelife16k.splits import assign_splits, split_counts

IDS = [f"MVK--v{i:04d}" for i in range(2000)]


def test_full_release_gets_the_papers_sizes():
    splits = assign_splits(IDS, seed=11)
    assert set(splits) == set(IDS)  # every video exactly once, so none is in two splits
    assert Counter(splits.values()) == {"train": 1300, "validation": 200, "test": 500}


def test_small_collections_get_the_papers_proportions():
    # 24 videos at 65 / 10 / 25 %: 15.6 / 2.4 / 6.0 -> the largest remainder (train's .6) gets the spare one.
    assert split_counts(24) == {"train": 16, "validation": 2, "test": 6}
    for total in (1, 7, 24, 100, 333):
        counts = split_counts(total)
        assert sum(counts.values()) == total
        for name, share in (("train", 0.65), ("validation", 0.10), ("test", 0.25)):
            assert abs(counts[name] - share * total) < 1


def test_explicit_sizes_and_ratios():
    assert Counter(assign_splits(IDS[:10], {"train": 5, "validation": 0, "test": 5}).values()) == {
        "train": 5,
        "test": 5,
    }
    assert split_counts(10, {"train": 0.8, "test": 0.2}) == {"train": 8, "test": 2}
    with pytest.raises(ValueError, match="add up to 9, not 10"):
        split_counts(10, {"train": 5, "validation": 2, "test": 2})
    with pytest.raises(ValueError, match="unknown split name"):
        split_counts(10, {"train": 0.5, "valid": 0.5})
    with pytest.raises(ValueError, match="negative"):
        split_counts(10, {"train": 11, "test": -1})


def test_seeded_and_independent_of_input_order():
    shuffled = IDS[:]
    random.Random(5).shuffle(shuffled)
    assert assign_splits(IDS, seed=3) == assign_splits(shuffled, seed=3)
    assert assign_splits(IDS, seed=3) != assign_splits(IDS, seed=4)


def test_duplicate_ids_are_rejected():
    with pytest.raises(ValueError, match=r"repeated: \['MVK--v0001'\]"):
        assign_splits([IDS[0], IDS[1], IDS[1]])
