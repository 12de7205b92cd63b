"""Publish ``.eval_results/*.yaml`` entries to a model repo: one commit, usually a pull request.

A model repo belongs to the model's authors; a benchmark user proposes scores with a pull request
(``create_pr``), which the Hub shows as "community" results while it is open. :func:`plan_results_push`
reads and validates the entries (no network: it is also the dry run); :func:`push_results` checks the
repo exists, then commits the files in one ``HfApi.create_commit``. Errors go through the same
reporting as dataset pushes (:mod:`builders.hub.publish`): what changed, if anything, and the token
never shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.hub.eval_results import RESULTS_DIR, parse_notes, read_entries
from builders.hub.publish import PlannedFile, PushError, _call, resolve_endpoint
from builders.hub.sample import refuse_sample

MODEL = "model"


@dataclass(frozen=True)
class ResultsPushPlan:
    folder: Path
    repo_id: str
    endpoint: str
    files: tuple[PlannedFile, ...]
    entries: tuple[tuple[str, Any], ...]  # (file name, EvalResultEntry)
    create_pr: bool
    commit_message: str
    repo_type: str = MODEL

    def describe(self) -> str:
        target = "a pull request against main" if self.create_pr else "main"
        lines = [f"push {len(self.entries)} eval result(s) -> model repo {self.repo_id} at {self.endpoint}"]
        lines.append(f"one commit onto {target}: {self.commit_message!r}")
        lines += [f"  add {f.path_in_repo} ({f.size} B)" for f in self.files]
        lines += [
            f"  {e.dataset_id} {e.task_id} = {e.value}"
            + (f" (revision {e.dataset_revision[:12]})" if e.dataset_revision else "")
            for _, e in self.entries
        ]
        return "\n".join(lines)


@dataclass(frozen=True)
class ResultsPushResult:
    repo_id: str
    commit_oid: str
    commit_url: str
    pr_url: str | None
    pr_revision: str | None

    def describe(self) -> str:
        lines = [f"commit {self.commit_oid}: {self.commit_url}"]
        if self.pr_url:
            lines.append(
                f"pull request: {self.pr_url} (revision {self.pr_revision}); the scores show as community results while it is open"
            )
        return "\n".join(lines)


def plan_results_push(
    folder: str | os.PathLike[str],
    repo_id: str,
    *,
    create_pr: bool = True,
    commit_message: str | None = None,
    endpoint: str | None = None,
    allow_sample: bool = False,
) -> ResultsPushPlan:
    """Validate ``folder/.eval_results/*.yaml`` and list the push; no network. Entries whose notes say
    the run was on a bundled sample are refused unless ``allow_sample``."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"model repo id {repo_id!r}: expected <namespace>/<name>")
    folder = Path(folder)
    entries = read_entries(folder)
    for filename, entry in entries:
        note = next((v for k, v in parse_notes(entry.notes).items() if k.split(".")[-1] == "sample"), None)
        refuse_sample(
            note, what=f"{folder} ({filename}, {entry.task_id})", target=repo_id, said_by="its notes",
            allow=allow_sample,
        )  # fmt: skip
    results = folder if folder.name == RESULTS_DIR else folder / RESULTS_DIR
    files = tuple(
        PlannedFile(f"{RESULTS_DIR}/{p.name}", p, p.stat().st_size)
        for p in sorted(results.iterdir())
        if p.is_file() and p.suffix in (".yaml", ".yml")
    )
    datasets = sorted({e.dataset_id for _, e in entries})
    return ResultsPushPlan(
        folder=folder,
        repo_id=repo_id,
        endpoint=resolve_endpoint(endpoint),
        files=files,
        entries=tuple(entries),
        create_pr=create_pr,
        commit_message=commit_message or f"Add evaluation results on {', '.join(datasets)}",
    )


def push_results(plan: ResultsPushPlan, *, token: str | None = None) -> ResultsPushResult:
    from huggingface_hub import CommitOperationAdd, HfApi, get_token

    token = token or get_token()
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN or run `hf auth login` (nothing was pushed)")
    api = HfApi(endpoint=plan.endpoint, token=token)
    _call(lambda: api.repo_info(plan.repo_id, repo_type=MODEL), plan, token)  # type: ignore[arg-type]
    operations = [
        CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=str(f.local)) for f in plan.files
    ]
    info: Any = _call(
        lambda: api.create_commit(
            plan.repo_id,
            operations,
            commit_message=plan.commit_message,
            commit_description="Scores written by `vqabench results` from a report's metrics.json; "
            "each entry's notes say how the run was made.",
            repo_type=MODEL,
            create_pr=plan.create_pr,
        ),
        plan,  # type: ignore[arg-type]
        token,
        "",
        "the commit",
        in_commit=True,
    )
    return ResultsPushResult(plan.repo_id, info.oid, info.commit_url, info.pr_url, info.pr_revision)
