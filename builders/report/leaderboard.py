"""A benchmark's leaderboard as Markdown + PNG, from ``.eval_results`` entries or the Hub's leaderboard API.

Rows come either from model folders holding ``.eval_results/*.yaml`` (a folder of them, one per model:
``<root>/<namespace>/<name>/.eval_results/*.yaml``, the layout of downloaded model repos) or from
``HfApi.get_dataset_leaderboard``. Each task of the benchmark's ``eval.yaml`` gets its own ranking,
with the 95% interval and item count where an entry's notes carry them (``vqabench results`` writes
them there). Figures group the tasks that share a metric and scale (BQA: one; MarineLife-16K:
accuracy 0-100 and judge scores 0-5).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.hub.benchmark import Benchmark, Task
from builders.hub.eval_results import RESULTS_DIR, notes_interval, parse_notes, scan_entries
from builders.hub.subset import ALL, FIELD, notes_key
from builders.report.document import Report, Section, report_folder, write_report
from builders.report.plots import Bar, grouped_bars
from builders.report.tables import fmt_number, markdown_table


@dataclass(frozen=True)
class Row:
    task_id: str
    model_id: str
    value: float
    interval: tuple[float, float] | None = None
    n: int | None = None
    pull_request: int | None = None  # a result proposed in an open PR ("community" on the Hub)
    filename: str | None = None
    notes: str | None = None
    rank: int | None = None
    problem: str | None = None  # why this result cannot be ranked (a malformed entry): reported, skipped


def _n(notes: str | None) -> int | None:
    text = parse_notes(notes).get("n", "")
    return int(text) if text.isdigit() else None


def rows_from_folder(root: str | os.PathLike[str], dataset_id: str) -> list[Row]:
    """Rows for every ``<model id>/.eval_results/*.yaml`` under ``root`` that name ``dataset_id``."""
    root = Path(root)
    folders = sorted({p.parent.parent for p in root.rglob(f"{RESULTS_DIR}/*.y*ml")})
    if not folders:
        raise ValueError(
            f"{root}: no model folders with {RESULTS_DIR}/*.yaml (expected <namespace>/<name>/{RESULTS_DIR}/)"
        )
    rows = []
    for folder in folders:
        model_id = folder.relative_to(root).as_posix() if folder != root else folder.name
        entries, problems = scan_entries(folder)
        rows += [Row("?", model_id, math.nan, problem=p) for p in problems]
        for filename, entry in entries:
            if entry.dataset_id != dataset_id:
                continue
            rows.append(
                Row(
                    entry.task_id,
                    model_id,
                    float(entry.value),
                    notes_interval(entry.notes),
                    _n(entry.notes),
                    filename=filename,
                    notes=entry.notes,
                )
            )
    return rows


def rows_from_hub(
    dataset_id: str, *, endpoint: str | None = None, token: str | bool | None = None, default_task: str
) -> list[Row]:
    """Rows from ``HfApi.get_dataset_leaderboard`` (every submitted result, fine-tunes included).

    The reply's rows name their task as ``taskId`` where the Hub gives one; rows without it are
    counted for ``default_task`` (the benchmark's first, headline task).
    """
    from huggingface_hub import HfApi  # lazy: network client, only for --hub
    from huggingface_hub.errors import HfHubHTTPError

    from builders.hub.errors import hub_errors

    where = endpoint or "the Hub"
    with hub_errors(f"the leaderboard of {dataset_id}", endpoint=where, repo_id=dataset_id):
        try:
            entries = HfApi(endpoint=endpoint, token=token).get_dataset_leaderboard(
                dataset_id, base_model_only=False
            )
        except HfHubHTTPError as err:
            if getattr(err.response, "status_code", None) != 404:
                raise
            raise RuntimeError(
                f"no leaderboard for {dataset_id} at {where} (HTTP 404); a dataset has one once it is a "
                "registered benchmark (an eval.yaml at its root) with results submitted"
            ) from None
    rows = []
    for e in entries:
        task = getattr(e, "taskId", None) or getattr(e, "task_id", None) or default_task
        rows.append(
            Row(
                str(task),
                e.model_id,
                _value(e.value),
                notes_interval(e.notes),
                _n(e.notes),
                pull_request=e.pull_request,
                filename=e.filename,
                notes=e.notes,
                rank=e.rank,
            )
        )
    return rows


def _value(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan  # reported by checked_rows


def checked_rows(rows: Iterable[Row], benchmark: Benchmark) -> tuple[list[Row], list[Row]]:
    """``(rankable, skipped)``: a result is skipped, with its ``problem`` saying why, when its entry is
    malformed, its value is not a finite number, or the value lies outside its task's scale (BQA
    accuracy 0-1, MarineLife-16K accuracy 0-100, judge scores 0-5): one bad entry never hides the
    others, and never ranks first."""
    tasks = {t.id: t for t in benchmark.tasks}
    good, skipped = [], []
    for row in rows:
        task = tasks.get(row.task_id)
        problem = row.problem
        if problem is None and task is not None:
            low, high = task.scale
            if not math.isfinite(row.value):
                problem = f"{row.task_id} = {row.value!r} is not a number"
            elif not low <= row.value <= high:
                problem = f"{row.task_id} = {row.value:g} is outside the task's scale {task.scale_text}"
        if problem is None:
            good.append(row)
        else:
            where = f" ({row.filename})" if row.filename else ""
            skipped.append(Row(**{**row.__dict__, "problem": f"{row.model_id}{where}: {problem}"}))
    return good, skipped


def rank(rows: Iterable[Row], task: Task) -> list[Row]:
    """``rows`` of one task, best first; equal values share a rank."""
    ordered = sorted(
        (r for r in rows if r.task_id == task.id),
        key=lambda r: (-r.value if task.higher_is_better else r.value, r.model_id),
    )
    out, previous, current = [], None, 0
    for i, row in enumerate(ordered):
        if row.value != previous:
            current, previous = i + 1, row.value
        out.append(Row(**{**row.__dict__, "rank": current}))
    return out


def _interval(row: Row, digits: int) -> str:
    return f"[{row.interval[0]:.{digits}f}, {row.interval[1]:.{digits}f}]" if row.interval else "-"


def _digits(task: Task) -> int:
    return 3 if task.scale[1] <= 1 else 2 if task.scale[1] <= 10 else 1


def _status(row: Row) -> str:
    return f"community (PR #{row.pull_request})" if row.pull_request else "main"


def _videos(row: Row) -> str | None:
    """The videos a result was scored on, as its notes record them (``all`` or a subset's)."""
    return parse_notes(row.notes).get(FIELD)


def mixed_videos(task: Task, rows: Sequence[Row], *, allow_mixed: bool) -> str | None:
    """A line naming each model's videos when the task's results were scored on different videos
    (the whole split, or different named subsets); ValueError unless ``allow_mixed``. Results whose
    notes do not record their videos are not compared."""
    recorded = {r.model_id: _videos(r) for r in rows if notes_key(_videos(r)) is not None}
    if len({notes_key(v) for v in recorded.values()}) < 2:
        return None
    line = f"{task.id}: " + "; ".join(f"{model} videos={v}" for model, v in recorded.items())
    if not allow_mixed:
        raise ValueError(
            f"results scored on different videos are not comparable side by side: {line}; rank results of one "
            "subset (or of whole splits) together, or pass --allow-mixed to lay them side by side marked as mixed"
        )
    return line


def _task_table(task: Task, rows: Sequence[Row]) -> str:
    digits = _digits(task)
    videos = any(notes_key(_videos(r)) not in (None, ALL) for r in rows)  # a column once a subset is ranked
    body = [
        [
            r.rank,
            f"`{r.model_id}`",
            fmt_number(r.value, digits),
            _interval(r, digits),
            r.n if r.n is not None else "-",
            *([_videos(r) or "not recorded"] if videos else []),
            _status(r),
        ]
        for r in rows
    ]
    header = ["rank", "model", task.metric, "95% interval", "n", *(["videos"] if videos else []), "result"]
    return markdown_table(header, body)


def _figures(benchmark: Benchmark, ranked: Mapping[str, list[Row]], out_dir: Path) -> list[tuple[Path, str]]:
    groups: dict[tuple[str, tuple[float, float]], list[Task]] = {}
    for task in benchmark.tasks:
        if ranked.get(task.id):
            groups.setdefault((task.metric, task.scale), []).append(task)
    figures = []
    for k, ((metric, scale), tasks) in enumerate(groups.items()):
        models = sorted({r.model_id for t in tasks for r in ranked[t.id]})
        by = {(r.task_id, r.model_id): r for t in tasks for r in ranked[t.id]}
        series = {
            m: [
                Bar(by[(t.id, m)].value, by[(t.id, m)].interval, by[(t.id, m)].n)
                if (t.id, m) in by
                else Bar(None)
                for t in tasks
            ]
            for m in models
        }
        path = out_dir / f"leaderboard_{k + 1}.png"
        grouped_bars(
            path,
            title=f"{benchmark.name} leaderboard: {metric} ({tasks[0].split} split; bars: 95% interval where given)",
            categories=[t.name for t in tasks],
            series=series,
            xlabel="task",
            ylabel=f"{metric} ({scale[0]:g}-{scale[1]:g})",
            ylim=scale,
        )
        figures.append((path, f"{benchmark.name} {metric} by task and model"))
    return figures


def write_leaderboard(
    benchmark: Benchmark,
    dataset_id: str,
    rows: Sequence[Row],
    out_dir: str | os.PathLike[str],
    *,
    source: str,
    dataset_id_from: str | None = None,
    allow_mixed: bool = False,
) -> Report:
    """Write ``report.md`` (one ranking per task), ``metrics.json`` and the PNGs to ``out_dir``.
    ``dataset_id_from``: where the dataset id came from (a flag, a setting), recorded.

    Results of one task scored on different videos (a named subset against the whole split, or two
    subsets; their notes' ``videos``) are refused unless ``allow_mixed``, then marked. Results that
    cannot be ranked (:func:`checked_rows`) are listed, by model and file, and left out."""
    rows, skipped = checked_rows(rows, benchmark)
    known = {t.id for t in benchmark.tasks}
    unknown = sorted({r.task_id for r in rows if r.task_id not in known})
    order = _keep_rank if rows and all(r.rank is not None for r in rows) else rank  # the Hub ranks its own
    ranked = {t.id: order(rows, t) for t in benchmark.tasks}
    if not any(ranked.values()):
        raise ValueError(
            f"no results for any task of {benchmark.name} ({dataset_id}) in {source}"
            + "".join(f"\n  skipped {r.problem}" for r in skipped)
        )
    mixed = [m for t in benchmark.tasks if (m := mixed_videos(t, ranked[t.id], allow_mixed=allow_mixed))]
    out = report_folder(out_dir)
    sections = [
        Section(
            f"{t.name} (`{t.id}`)",
            [f"{t.description} Scale {t.scale_text}.", _task_table(t, ranked[t.id])],
        )
        for t in benchmark.tasks
        if ranked[t.id]
    ]
    empty = [t.id for t in benchmark.tasks if not ranked[t.id]]
    intro = [
        f"Benchmark `{dataset_id}`{f' ({dataset_id_from})' if dataset_id_from else ''}, from {source}. One ranking per task of its `eval.yaml`; the interval and n "
        "are those the result's notes record (none where a result gives none). A result still in an open "
        "pull request on its model repo is marked community.",
    ]
    if mixed:
        intro.append(
            "**Mixed videos (--allow-mixed):** these results were scored on different videos, so their ranks "
            "are not strictly comparable: " + " | ".join(mixed) + "."
        )
    if empty:
        intro.append(f"No results yet for: {', '.join(f'`{t}`' for t in empty)}.")
    if unknown:
        intro.append(
            f"Ignored results for tasks the benchmark does not declare: {', '.join(f'`{t}`' for t in unknown)}."
        )
    if skipped:
        intro.append(
            "Skipped results that cannot be ranked:\n" + "\n".join(f"- {r.problem}" for r in skipped)
        )
    figures = _figures(benchmark, ranked, out)
    if figures:
        sections.append(Section("Figures", [], figures))
    metrics: dict[str, Any] = {
        "benchmark": benchmark.name,
        "dataset_id": dataset_id,
        "dataset_id_from": dataset_id_from,
        "source": source,
        "mixed": mixed,
        "tasks": {
            t.id: [
                {k: v for k, v in r.__dict__.items() if k != "task_id"}
                | {"interval": list(r.interval) if r.interval else None}
                for r in ranked[t.id]
            ]
            for t in benchmark.tasks
        },
        "skipped": [r.problem for r in skipped],
    }
    return write_report(out, f"{benchmark.name} leaderboard", intro, sections, metrics)


def _keep_rank(rows: Sequence[Row], task: Task) -> list[Row]:
    """The Hub's own ranking, where it gave one."""
    return sorted((r for r in rows if r.task_id == task.id), key=lambda r: (r.rank or 0, r.model_id))
