"""What a pipeline build left in its work folder and what the run cost: one shape for every benchmark.

Both builds (``builders.pipelines.bqa``, ``builders.pipelines.marinelife``) return a
:class:`BuildSummary`, write its :meth:`~BuildSummary.to_json` to ``<work>/summary.json``, and the CLI
prints its :meth:`~BuildSummary.format` and exits non-zero unless :attr:`~BuildSummary.ok`. What all
builds share is here: the steps (kept, rejected by reason, failed, finished), the steps not reached,
the release's sizes per split, the tokens of the replies the release uses, this run's LLM usage,
what is left unfinished. What is a benchmark's own (BQA's BoLD rows and STEP4 labels, MarineLife's
captions and QA counts) comes as :class:`BuildDetails`, which adds its lines and JSON keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from builders.files.text import plural
from builders.llm.usage import UsageSummary
from builders.runs.steps import StepRecords
from builders.runs.unfinished import Unfinished

#: What the summary offers besides resuming, when LLM calls failed (the flag both builds take).
REJECT_HINT = "or pass --reject-llm-failures to reject them"


@dataclass
class StepSummary:
    """One step of a build: records kept, rejected by reason, whether it finished, this run's failures."""

    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    complete: bool = False
    failed: dict[str, str] = field(default_factory=dict)  # this run's failed LLM calls: id -> error

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": self.kept,
            "rejected": self.rejected,
            "complete": self.complete,
            "failed": self.failed,
        }


def step_summaries(
    work_dir: Path, steps: Iterable[str], failures: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, StepSummary]:
    """The started steps of ``steps`` from their records in ``work_dir`` (a step whose every call
    failed is listed too: its items are pending), with this run's ``failures`` (step -> id -> error)."""
    out: dict[str, StepSummary] = {}
    for name in steps:
        records = StepRecords(work_dir, name)
        tally, failed = records.tally(), dict((failures or {}).get(name, {}))
        if tally or records.complete or failed:
            out[name] = StepSummary(tally.kept, dict(tally.rejected), records.complete, failed)
    return out


class BuildDetails(Protocol):
    """A benchmark's own part of its build summary."""

    def note(self) -> str:
        """Said after the headline's input count (e.g. inputs left out), or ''."""

    def lines(self) -> list[str]:
        """Its lines, printed after the step table."""

    def split_note(self, counts: Mapping[str, int]) -> str:
        """More on one split of the release (its counts as in :attr:`BuildSummary.splits`), or ''."""

    def to_json(self) -> dict[str, Any]:
        """Its keys of ``summary.json``."""


D = TypeVar("D", bound=BuildDetails)


@dataclass
class BuildSummary(Generic[D]):
    """What a build run left in its work folder, and what the run itself cost."""

    benchmark: str  # as the headline names it: "BQA", "MarineLife-16K"
    work_dir: Path
    inputs: int  # the source items the build started from (BoLD rows, videos)
    input_noun: str  # what one of them is called, singular: "BoLD row", "video"
    steps: dict[str, StepSummary]  # the started steps, in pipeline order
    release: Path | None  # the release folder (None: not written yet)
    splits: (
        dict[str, dict[str, int]] | None
    )  # per split: "rows" (questions), "videos", the benchmark's counts
    tokens: tuple[int, int]  # recorded prompt/completion tokens of the replies the finished steps use
    run: UsageSummary | None  # this run's LLM activity (None: no LLM step ran)
    details: D
    not_run: tuple[str, ...] = ()  # steps asked for but not reached (a step before them left items pending)

    def __post_init__(self) -> None:
        if (self.release is None) != (self.splits is None):
            raise ValueError("a build summary has both a release folder and its splits, or neither")

    @property
    def failed(self) -> dict[str, dict[str, str]]:
        return {name: s.failed for name, s in self.steps.items() if s.failed}

    @property
    def unfinished(self) -> Unfinished:
        return Unfinished(self.failed, self.not_run)

    @property
    def empty_release(self) -> bool:
        """A release was written and has no rows: every item was rejected on the way."""
        return self.splits is not None and not sum(d["rows"] for d in self.splits.values())

    @property
    def ok(self) -> bool:
        """Nothing left failed or pending, and no empty release: the command exits 0."""
        return not self.unfinished and not self.empty_release

    @property
    def status(self) -> str:
        """``complete`` (a release, nothing pending), ``incomplete`` (not :attr:`ok`), or ``no release
        yet`` (the steps asked for finished, the release is a later step's)."""
        if not self.ok:
            return "incomplete"
        return "complete" if self.release is not None else "no release yet"

    def to_json(self) -> dict[str, Any]:
        """What ``<work>/summary.json`` holds: the shared keys, then the benchmark's."""
        run = None
        if self.run is not None:
            run = {name: getattr(self.run, name) for name in self.run.__dataclass_fields__}
            run["seconds"] = round(run["seconds"], 3)
        release = None if self.release is None else {"path": str(self.release), "splits": self.splits}
        return {
            "benchmark": self.benchmark,
            "status": self.status,
            "work_dir": str(self.work_dir),
            "inputs": self.inputs,
            "steps": {name: s.to_json() for name, s in self.steps.items()},
            "release": release,
            "tokens": {"prompt": self.tokens[0], "completion": self.tokens[1]},
            "this_run": run,
            "unfinished": self.unfinished.to_json(),
            "empty_release": self.empty_release,
            **self.details.to_json(),
        }

    def format(self) -> str:
        """The summary a command prints."""
        inputs = plural(self.inputs, self.input_noun) + self.details.note()
        lines = [f"{self.benchmark} build in {self.work_dir}: {inputs}; status: {self.status}"]
        lines.append(f"  {'step':<20} {'kept':>5}  rejected (reason: count)")
        for name, s in self.steps.items():
            rejected = ", ".join(f"{r}: {n}" for r, n in sorted(s.rejected.items())) or "-"
            state = "" if s.complete else f"  [unfinished: {len(s.failed)} failed LLM call(s), left pending]"
            lines.append(f"  {name:<20} {s.kept:>5}  {rejected}{state}")
        lines += [f"  {line}" for line in self.details.lines()]
        if self.splits is not None:
            parts = []
            for split, d in self.splits.items():
                note = self.details.split_note(d)
                parts.append(
                    f"{split} {plural(d['rows'], 'question')} / {plural(d['videos'], 'video')}"
                    + (f" ({note})" if note else "")
                )
            lines.append("  release: " + "; ".join(parts) + f" (in {self.release})")
        lines.append(
            f"  tokens recorded for the replies used: in {self.tokens[0]:,} / out {self.tokens[1]:,}"
        )
        if self.run is not None:
            r = self.run
            lines.append(
                f"  this run: {r.items} LLM requests, {r.cache_hits} cache hits, {r.api_calls} API calls "
                f"({r.reasks} re-asks), {r.failures} failures, {r.blocked} blocked, "
                f"tokens in {r.prompt_tokens:,} / out {r.completion_tokens:,}"
            )
        lines += self.unfinished.lines(alternative=REJECT_HINT)
        if self.empty_release:
            rejected = "; ".join(
                f"{name}: " + ", ".join(f"{r} {n}" for r, n in sorted(s.rejected.items()))
                for name, s in self.steps.items()
                if s.rejected
            )
            lines.append(
                f"EMPTY RELEASE: every one of the {plural(self.inputs, self.input_noun)} was rejected "
                f"({rejected or 'no reasons recorded'}); see {self.work_dir / 'steps'}/*.rejects.jsonl"
            )
        return "\n".join(lines)
