"""LLM judges: rubrics (what to score), scoring (asking through :mod:`builders.llm`, aggregating),
agreement with human ratings. See :mod:`builders.judge.rubrics` for the rubric API."""

from __future__ import annotations

from .rubrics import DEFAULT_RUBRIC, RUBRICS, Criterion, CustomRubric, Rubric, get_rubric

__all__ = ["DEFAULT_RUBRIC", "RUBRICS", "Criterion", "CustomRubric", "Rubric", "get_rubric"]
