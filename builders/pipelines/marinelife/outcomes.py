"""What one LLM reply cost, and how a step reports items it could not finish."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from builders.llm import LLMClient, LLMResult


@dataclass(frozen=True)
class Failure:
    """An item whose LLM call failed after its re-asks: not recorded, so the next run asks again."""

    id: str
    step: str
    error: str


def call_cost(client: LLMClient, result: LLMResult) -> dict[str, Any]:
    """The reported model, model calls and tokens of a validated reply *when it was first obtained*.

    A cache hit makes 0 calls now; the cache row remembers the original count and usage, so a
    replayed build reports the same re-asks and tokens as the run that recorded it.
    """
    attempts = result.attempts
    if result.cached and client.cache is not None:
        row = client.cache.get(result.key)
        attempts = row.attempts if row is not None else attempts
    return {
        "model": result.model_reported or client.settings.model,
        "attempts": attempts,
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
    }


def total_cost(costs: Iterable[Mapping[str, Any] | None]) -> dict[str, int]:
    """Sum of :func:`call_cost` dicts: requests, model calls, re-asks (calls after the first), tokens."""
    found = [c for c in costs if c is not None]
    return {
        "requests": len(found),
        "calls": sum(c["attempts"] for c in found),
        "reasks": sum(max(c["attempts"] - 1, 0) for c in found),
        "prompt_tokens": sum(c["prompt_tokens"] for c in found),
        "completion_tokens": sum(c["completion_tokens"] for c in found),
    }
