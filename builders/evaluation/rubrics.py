"""Every judge rubric the tools know, by name, listed here explicitly: the benchmarks' own (today
MarineLife-16K's, :data:`marinelife16k.rubrics.RUBRICS`) and ``custom`` (criteria from a user's file,
:mod:`builders.scoring.rubric_files`). A new rubric is added to its benchmark's tuple; nothing
registers itself on import, so what ``get_rubric`` knows does not depend on what was imported."""

from __future__ import annotations

from pathlib import Path

from builders.scoring.rubric_files import CustomRubric
from builders.scoring.rubrics import Rubric, RubricRegistry
from marinelife16k.rubrics import RUBRICS as MARINELIFE_RUBRICS

RUBRICS = RubricRegistry(*MARINELIFE_RUBRICS, CustomRubric)


def get_rubric(name: str, path: str | Path | None = None) -> Rubric:
    """The rubric registered as ``name`` (:data:`RUBRICS`); ``"custom"`` reads ``path`` (YAML or JSON)."""
    return RUBRICS.rubric(name, path)
