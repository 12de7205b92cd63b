"""The papers' human-study designs, as one-flag presets (``vqabench human-study make --paper-design``).

- BQA ("Human (Rand100)"): 100 test items drawn at random, answered by three people, each of them
  answering every item (its Table 1 note: "an average of 3 annotators").
- MarineLife-16K (its Human Study): six domain experts rate 100 randomly selected open-ended answers,
  each answer rated by three of them.

A preset fixes the size, the number of raters, the ratings per item and the draw; options that say
otherwise are refused, never silently overridden. Rater ids may be given (as many as the design has);
by default they are ``r1`` ... ``rN``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from builders.human_study.draw import DRAWS, RANDOM
from builders.human_study.study import BQA, MARINELIFE


@dataclass(frozen=True)
class StudyDesign:
    name: str
    size: int
    raters: int
    ratings_per_item: int
    draw: str
    source: str  # what the paper says

    def default_raters(self) -> list[str]:
        return [f"r{k}" for k in range(1, self.raters + 1)]


PAPER_DESIGNS: dict[str, StudyDesign] = {
    BQA: StudyDesign(
        "the BQA paper's design (Human (Rand100))", 100, 3, 3, RANDOM,
        "100 test items selected at random, each answered by all three annotators",
    ),
    MARINELIFE: StudyDesign(
        "the MarineLife-16K paper's design (Human Study)", 100, 6, 3, RANDOM,
        "six domain experts, 100 randomly selected open-ended questions, each rated by three experts",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Settings:
    size: int
    raters: list[str]
    ratings_per_item: int | None
    draw: str
    design: str | None = None


def resolve(
    benchmark: str,
    *,
    paper: bool,
    size: int | None,
    raters: Sequence[str] | None,
    ratings_per_item: int | None,
    draw: str | None,
    defaults: Settings,
) -> Settings:
    """The study's settings: ``defaults`` overridden by the options given, or (``paper``) the
    paper's design, with any given option that contradicts it refused (ValueError naming it)."""
    if draw is not None and draw not in DRAWS:
        raise ValueError(f"--draw {draw!r}: expected one of {', '.join(DRAWS)}")
    if not paper:
        return Settings(
            size if size is not None else defaults.size,
            list(raters) if raters is not None else defaults.raters,
            ratings_per_item if ratings_per_item is not None else defaults.ratings_per_item,
            draw or defaults.draw,
        )
    design = PAPER_DESIGNS[benchmark]
    given = {"--size": size, "--ratings-per-item": ratings_per_item, "--draw": draw}
    wanted = {"--size": design.size, "--ratings-per-item": design.ratings_per_item, "--draw": design.draw}
    conflicts = [
        f"{o} {v} (the design: {wanted[o]})" for o, v in given.items() if v is not None and v != wanted[o]
    ]
    if raters is not None and len(raters) != design.raters:
        conflicts.append(f"--raters gives {len(raters)} raters (the design: {design.raters})")
    if conflicts:
        raise ValueError(
            f"--paper-design follows {design.name} ({design.source}); these options say otherwise: "
            + "; ".join(conflicts)
            + ". Drop them, or drop --paper-design"
        )
    return Settings(
        design.size,
        list(raters) if raters is not None else design.default_raters(),
        design.ratings_per_item,
        design.draw,
        f"{design.name}: {design.source}",
    )
