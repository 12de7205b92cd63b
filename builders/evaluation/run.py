"""The prediction-run core both evaluation runners share: predict every item of a split into one
JSONL file, resumably (:func:`builders.runs.llm_step.run_llm_step`), bound to what is evaluated.

``<eval work>/eval.json`` binds the work folder to the data, split, style, frames and LLM settings;
``<eval work>/steps/predictions.*`` hold the records as they finish; ``<eval work>/summary.json``
the last run's counts and quick scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders import tool_version
from builders.files.jsonio import write_json_atomic, write_jsonl_atomic
from builders.llm import LLMClient, LLMRequest, LLMResult, UsageSummary
from builders.llm.prompts import prompt_overrides
from builders.runs.llm_step import FollowUp, Outcome, run_llm_step
from builders.runs.lock import locks_work_folder
from builders.runs.steps import StepRecords, bind_work_folder
from builders.runs.unfinished import Unfinished


@dataclass
class PredictionRun:
    """What an evaluation runner did for one predictions file (the parts both runners share)."""

    out: Path | None  # None until every item has a prediction
    rows: int
    predicted: int
    rejected: dict[str, int]
    failed: dict[str, str]  # this run's failed LLM calls: id -> error (they stay pending)
    run: UsageSummary = field(default_factory=UsageSummary)
    scores: dict[str, Any] | None = None  # the runner's quick accuracy, once every item is predicted
    videos: str | None = None  # the named subset of the split's videos, in words (None: all of them)

    @property
    def ok(self) -> bool:
        return not self.failed

    def format(self) -> str:
        """The summary a command prints; each benchmark's runner adds its own score line."""
        return self._lines(f"evaluation: {self.predicted} of {self.rows} items predicted", None)

    def _lines(self, header: str, score_line: str | None) -> str:
        lines = [header]
        if self.videos:
            lines.append(f"  videos: {self.videos}")
        if self.rejected:
            lines.append("  rejected: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.rejected.items())))
        if score_line:
            lines.append(score_line)
        r = self.run
        lines.append(
            f"  this run: {r.items} LLM requests, {r.cache_hits} cache hits, {r.api_calls} API calls, "
            f"{r.failures} failures, {r.blocked} blocked, tokens in {r.prompt_tokens:,} / out {r.completion_tokens:,}"
        )
        if self.out is not None:
            lines.append(f"  wrote {self.out}")
        lines += Unfinished({"predictions": self.failed}).lines(
            alternative="or pass --reject-llm-failures to give up on them"
        )
        return "\n".join(lines)


EVAL_CONFIG_FILE = "eval.json"


@locks_work_folder
def run_predictions(
    work_dir: str | Path,
    out: str | Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    request_of: Callable[[Mapping[str, Any]], LLMRequest | FollowUp],
    outcome_of: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome | FollowUp],
    *,
    config: Mapping[str, Any],
    step: str = "predictions",
    ahead: int | None = None,
    reject_failures: bool = False,
    desc: str = "predict",
    other_clients: Sequence[LLMClient] = (),
) -> tuple[PredictionRun, list[dict[str, Any]]]:
    """Predict every item into ``out`` (written atomically once all have a record); resumable.

    ``config`` names what is evaluated (data, split, style, frames...): with the LLM settings and the
    prompts replaced by files (:func:`builders.llm.prompts.prompt_overrides`) it is bound to
    ``<work>/eval.json``, so one work folder never mixes two evaluations. Every line of ``out``
    carries it as ``provenance`` (with the tool version and the model asked for; each line's
    ``model`` is the model the server reported). ``other_clients``: clients of an item's other stages
    (:class:`builders.runs.llm_step.FollowUp`), counted in the run's usage. Returns the run's account
    and the predictions (empty until complete).
    """
    work_dir, out = Path(work_dir), Path(out)
    llm = client.settings.cache_identity() if client.estimate is None else None  # an estimate records nothing
    prompts = prompt_overrides()
    bind_work_folder(work_dir, {"data": config, "llm": llm, "prompts": prompts}, EVAL_CONFIG_FILE)
    records = StepRecords(work_dir, step)
    clients = list(dict.fromkeys([client, *other_clients]))
    before = [c.usage.snapshot() for c in clients]
    failures = run_llm_step(
        records, items, client, request_of, outcome_of,
        ahead=ahead, reject_failures=reject_failures, desc=desc,
    )  # fmt: skip
    written, lines = None, []
    tally = records.tally()
    if not failures and items and not tally.kept:
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(tally.rejected.items()))
        raise ValueError(
            f"no prediction: {len(items)} of {len(items)} rows were rejected ({reasons}); {out} was not "
            f"written (an empty file would read as a finished evaluation); see {work_dir} for each row's reason"
        )
    if not failures:
        records.finish(item["id"] for item in items)
        provenance = {"tool": tool_version(), **config, "model_asked": client.settings.model}
        lines = [{**record, "provenance": provenance} for record in records.kept()]
        write_jsonl_atomic(out, lines)
        written = out
        tally = records.tally()
    run = PredictionRun(
        out=written,
        rows=len(items),
        predicted=tally.kept,
        rejected=dict(tally.rejected),
        failed=failures,
        run=_usage_since(clients, before),
    )
    return run, lines


def _usage_since(clients: Sequence[LLMClient], before: Sequence[UsageSummary]) -> UsageSummary:
    total = UsageSummary()
    for c, b in zip(clients, before, strict=True):
        total.merge(c.usage.since(b))
    return total


def save_run_summary(work_dir: str | Path, run: PredictionRun) -> None:
    """``<work>/summary.json``: the counts and quick scores of the last run."""
    fields_ = {"rows": run.rows, "predicted": run.predicted, "rejected": run.rejected, "failed": run.failed}
    write_json_atomic(Path(work_dir) / "summary.json", {**fields_, "scores": run.scores})
