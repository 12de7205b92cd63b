"""What an LLM command left undone, said the same way by every command that calls an LLM.

A failed LLM call leaves its item pending (or rejected, with ``--reject-llm-failures``). Whatever the
command (a pipeline build, an evaluation run, a judge run), it then ends non-zero and says how many
items are left, why (the errors, grouped: one wrong API key is one line, not 400), and that running
the same command again resumes. :class:`Unfinished` is that account; ``steps`` names where the
items stopped (a pipeline step, ``predictions``, ``judge``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RESUME_HINT = (
    "rerun the same command to resume: finished items are not redone and replies that succeeded are cached"
)
ERROR_WIDTH = 240  # errors are grouped on their first line, cut to this many characters


def error_group(error: str | None) -> str:
    """The part of an error message that items failing for the same reason share."""
    first = (error or "unknown error").strip().splitlines()[0] if (error or "").strip() else "unknown error"
    return first[:ERROR_WIDTH]


@dataclass(frozen=True)
class Unfinished:
    """Items left failed (``failed``: step -> item id -> error) and steps not reached (``not_run``)."""

    failed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    not_run: Sequence[str] = ()

    @property
    def count(self) -> int:
        return sum(len(items) for items in self.failed.values())

    def __bool__(self) -> bool:
        return bool(self.count or self.not_run)

    def by_error(self) -> list[tuple[str, int, list[str]]]:
        """``(error, items, steps)``, most frequent first."""
        counts: Counter[str] = Counter()
        steps: dict[str, list[str]] = {}
        for step, items in self.failed.items():
            for error in items.values():
                group = error_group(error)
                counts[group] += 1
                if step not in steps.setdefault(group, []):
                    steps[group].append(step)
        return [(error, n, steps[error]) for error, n in counts.most_common()]

    def lines(self, *, alternative: str | None = None) -> list[str]:
        """The report: a headline with the count, one line per error, then how to resume.

        ``alternative``: another way out offered after the resume hint (e.g. a flag rejecting them)."""
        if not self:
            return []
        where = ", ".join(f"{step} {len(items)}" for step, items in self.failed.items() if items)
        head = f"UNFINISHED: {self.count} item(s) did not finish" + (f" ({where})" if where else "")
        head += f": {self.count} LLM call(s) failed, left pending" if self.count else ""
        out = [head]
        for error, n, steps in self.by_error():
            example = next(i for s in steps for i, e in self.failed[s].items() if error_group(e) == error)
            out.append(f"  {n} x {error} [step {', '.join(steps)}; e.g. item {example}]")
        if self.not_run:
            out.append(f"  not run yet: {', '.join(self.not_run)}")
        out.append(f"  {RESUME_HINT}" + (f"; {alternative}" if alternative else ""))
        return out

    def format(self, *, alternative: str | None = None) -> str:
        return "\n".join(self.lines(alternative=alternative))

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.count,
            "by_error": [{"error": e, "items": n, "steps": s} for e, n, s in self.by_error()],
            "not_run": list(self.not_run),
        }
