"""Drawing a study: a random sample of items (plain, the papers' draw, or stratified), and a balanced
assignment to raters.

Both are pure functions of their inputs and the seed, so the same data, size and seed give the same
study on any machine (Python's ``random.Random`` with an integer or string seed is specified and
stable across versions for ``shuffle``/``sample``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence


def allocate(available: Mapping[str, int], size: int) -> dict[str, int]:
    """Proportional allocation of ``size`` over strata (largest remainder; ties by stratum name)."""
    total = sum(available.values())
    if size < 1:
        raise ValueError(f"the study size must be at least 1, got {size}")
    if size > total:
        raise ValueError(f"the study size {size} is larger than the {total} items available")
    exact = {s: size * n / total for s, n in available.items()}
    quota = {s: int(x) for s, x in exact.items()}
    rest = size - sum(quota.values())
    for s in sorted(available, key=lambda s: (-(exact[s] - quota[s]), s))[:rest]:
        quota[s] += 1
    return dict(sorted(quota.items()))


#: How items are drawn: ``random`` (both papers: "randomly selected"), ``stratified`` (proportional
#: to the strata: Easy/Hard for BQA, question type for MarineLife-16K).
RANDOM, STRATIFIED = "random", "stratified"
DRAWS: tuple[str, ...] = (RANDOM, STRATIFIED)


def random_draw(strata: Mapping[str, Sequence[str]], size: int, seed: int) -> list[str]:
    """``size`` item ids drawn without replacement from all strata together, in a random order. The
    ids are sorted first, so the input order does not matter."""
    pool = sorted(i for ids in strata.values() for i in ids)
    if size < 1:
        raise ValueError(f"the study size must be at least 1, got {size}")
    if size > len(pool):
        raise ValueError(f"the study size {size} is larger than the {len(pool)} items available")
    return random.Random(f"human-study:draw:{seed}").sample(pool, size)


def draw_items(strata: Mapping[str, Sequence[str]], size: int, seed: int, how: str) -> list[str]:
    """:func:`random_draw` or :func:`stratified_draw`, by name."""
    if how not in DRAWS:
        raise ValueError(f"unknown draw {how!r}; expected one of {list(DRAWS)}")
    return (random_draw if how == RANDOM else stratified_draw)(strata, size, seed)


def stratified_draw(strata: Mapping[str, Sequence[str]], size: int, seed: int) -> list[str]:
    """``size`` item ids drawn without replacement, proportionally from each stratum, in a random
    order. Within a stratum the ids are sorted first, so the input order does not matter."""
    quota = allocate({s: len(ids) for s, ids in strata.items()}, size)
    rng = random.Random(f"human-study:draw:{seed}")
    drawn: list[str] = []
    for stratum in sorted(strata):
        drawn += rng.sample(sorted(strata[stratum]), quota[stratum])
    rng.shuffle(drawn)
    return drawn


def assign(items: Sequence[str], raters: Sequence[str], per_item: int) -> dict[str, list[str]]:
    """Each item to ``per_item`` different raters, round robin: rater loads differ by at most one."""
    if not 1 <= per_item <= len(raters):
        raise ValueError(
            f"ratings per item must be between 1 and the number of raters ({len(raters)}), got {per_item}"
        )
    out: dict[str, list[str]] = {item: [] for item in items}
    for j, item in enumerate(items):
        out[item] = [raters[(j * per_item + t) % len(raters)] for t in range(per_item)]
    return out


def rater_order(items: Sequence[str], rater: str, seed: int) -> list[str]:
    """The order one rater sees their items in: shuffled per rater, so order effects average out."""
    order = list(items)
    random.Random(f"human-study:order:{seed}:{rater}").shuffle(order)
    return order
