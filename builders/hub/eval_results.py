"""A model repo's ``.eval_results/*.yaml``: a run's headline scores, as the Hub's leaderboards read them.

Format (https://huggingface.co/docs/hub/eval-results, written with huggingface_hub's own
``EvalResultEntry`` / ``eval_result_entries_to_yaml``)::

    - dataset: {id: naist-nlp/BQA, task_id: bqa_total, revision: <sha>}
      value: 0.61
      date: "2026-11-30"
      notes: "tool=vqabench 0.3.0; split=test; frames=...; parser=...; ci95=[0.585, 0.635]; n=1443"

The format has no field for an interval or for how the run was made, so both go in ``notes`` as
``key=value`` pairs separated by ``"; "`` (:func:`parse_notes` reads them back): the provenance the run
recorded in its ``metrics.json`` (tool version, dataset and revision, frame spec, prompt, answer parser,
rubric signature, the videos scored: ``videos=all`` or a named subset's size, hash and how it was drawn,
:func:`builders.hub.subset.notes_text`), then the 95% interval and the item count where the report has them.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml, parse_eval_result_entries

from builders.files.jsonio import write_text_atomic
from builders.files.redact import is_secret_key
from builders.hub import subset
from builders.hub.benchmark import Benchmark

RESULTS_DIR = ".eval_results"
HEX_SHA = re.compile(r"^[0-9a-f]{40}$")
_NOTE_PAIR = re.compile(r"(?:^|;\s*)([A-Za-z0-9_.\-]+)=((?:\[[^\]]*\])|[^;]*)")
_INTERVAL = re.compile(r"^\[\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\]$")

# Provenance keys a report may carry (top level, or inside a ``provenance`` mapping, for the run or
# for one model), and the short name each gets in ``notes``. Anything else in a ``provenance``
# mapping is kept under its own name.
_PROVENANCE_KEYS = {
    "tool_version": "tool",
    "version": "tool",
    "dataset": "dataset",
    "dataset_repo": "dataset",
    "revision": "revision",
    "dataset_revision": "revision",
    "fingerprint": "fingerprint",
    "split": "split",
    "frame_spec": "frames",
    "frames": "frames",
    "prompt": "prompt",
    "prompt_version": "prompt",
    "answer_parser": "parser",
    "parser": "parser",
    "group_mapping": "mapping",
    "model_reported": "model_reported",
    # a nested ``dataset`` mapping: {"repo": ..., "revision": ...}
    "dataset.repo": "dataset",
    "dataset.repo_id": "dataset",
    "dataset.revision": "revision",
    "dataset.commit": "revision",
}
# Where a run was on this machine is no business of a published result (and may name a user): a local
# dataset folder is identified by its fingerprint, a repo by its id and commit.
_LOCAL_KEYS = ("folder", "path", "predictions", "work", "out", "cache")


@dataclass(frozen=True)
class RunScores:
    """The entries made from one model's scores in a report, and the tasks left out (and why)."""

    model: str
    entries: tuple[EvalResultEntry, ...]
    skipped: tuple[tuple[str, str], ...]  # (task id, reason)


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return ",".join(f"{k}:{_text(v)}" for k, v in value.items())
    return str(value).replace(";", ",").replace("\n", " ").strip()


def _is_local_path(value: Any) -> bool:
    return isinstance(value, str) and (
        value.startswith(("/", "~", "./", "../")) or re.match(r"^[A-Za-z]:[\\/]", value) is not None
    )


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if prefix == subset.FIELD:  # the videos scored: "all", or a subset's size, hash and how (never its ids);
        out.setdefault(subset.FIELD, subset.notes_text(value))  # the report's (read first), not the run's
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if is_secret_key(key):
                continue  # a credential's name may appear in settings; its value never goes out
            if str(key).lower() in _LOCAL_KEYS or _is_local_path(inner):
                continue  # a local path is not published
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    elif value is not None and value != "" and not _is_local_path(value):
        out[prefix] = _text(value)


def run_provenance(metrics: Mapping[str, Any], model_entry: Mapping[str, Any]) -> dict[str, str]:
    """What the report recorded about how the run was made, as short ``name -> text`` pairs."""
    out: dict[str, str] = {}
    for source in (metrics, model_entry, model_entry.get("metrics") or {}):
        for key, name in _PROVENANCE_KEYS.items():
            value = source.get(key)
            if value is not None and not isinstance(value, Mapping):
                out.setdefault(name, _text(value))
    recorded: dict[str, str] = {}  # dotted keys as recorded
    for source in (metrics.get("provenance"), model_entry.get("provenance")):
        if isinstance(source, Mapping):
            _flatten("", source, recorded)
    for key, text in recorded.items():
        if key.startswith("data.") and recorded.get("dataset." + key.removeprefix("data.")) == text:
            continue  # the run's own record of its data repeats the report's: said once
        out[_PROVENANCE_KEYS.get(key, key)] = text
    return out


def format_notes(pairs: Mapping[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in pairs.items())


def parse_notes(notes: str | None) -> dict[str, str]:
    """``key=value`` pairs of a ``notes`` field written by :func:`format_notes` (other text is ignored)."""
    return {m.group(1): m.group(2).strip() for m in _NOTE_PAIR.finditer(notes or "")}


def notes_interval(notes: str | None) -> tuple[float, float] | None:
    """The ``ci95=[low, high]`` of a ``notes`` field, if it has one."""
    match = _INTERVAL.match(parse_notes(notes).get("ci95", ""))
    return (float(match.group(1)), float(match.group(2))) if match else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def entries_from_metrics(
    metrics: Mapping[str, Any],
    benchmark: Benchmark,
    *,
    model: str | None,
    dataset_id: str,
    dataset_revision: str | None = None,
    date: str | None = None,
    source_url: str | None = None,
    source_name: str | None = None,
    where: str = "metrics.json",
) -> RunScores:
    """The ``.eval_results`` entries for one model of a report's ``metrics.json``.

    ``model`` picks the report's model (None: the report must hold exactly one). Tasks whose value the
    report does not have (no Hard items, no judge results) are left out and listed in ``skipped``.
    """
    if metrics.get("benchmark") not in (None, benchmark.name):
        raise ValueError(f"{where}: a report on {metrics['benchmark']!r}, not {benchmark.name!r}")
    models = metrics.get("models")
    if not isinstance(models, Mapping) or not models:
        raise ValueError(f"{where}: no 'models' with scores")
    if model is None:
        if len(models) != 1:
            raise ValueError(f"{where} holds {len(models)} models {sorted(models)}: pick one with --model")
        model = next(iter(models))
    if model not in models:
        raise ValueError(f"{where}: no model {model!r}; it has {sorted(models)}")
    entry = models[model]
    split = metrics.get("split")
    provenance = run_provenance(metrics, entry)
    revision = dataset_revision or next(
        (v for k, v in provenance.items() if k == "revision" and HEX_SHA.match(v)), None
    )
    if revision is not None and not HEX_SHA.match(revision):
        raise ValueError(f"dataset revision {revision!r}: expected the 40-character commit sha")
    entries, skipped = [], []
    for task in benchmark.tasks:
        if split is not None and split != task.split:
            skipped.append((task.id, f"the report scores split {split!r}, the task is on {task.split!r}"))
            continue
        reading = task.read(entry)
        value = _number(reading.value)
        if value is None:
            skipped.append((task.id, f"the report has no {'.'.join(task.value)} for {model!r}"))
            continue
        low, high = task.scale
        if not low <= value <= high:
            raise ValueError(
                f"{where}: {model!r} {'.'.join(task.value)} = {value} is outside {task.scale_text}"
            )
        judged = {k: _text(v) for k, v in reading.notes.items() if v}
        pairs = {
            # a judge score does not depend on the answer parser: name the rubric instead
            **{k: v for k, v in provenance.items() if not (judged and k == "parser")},
            **judged,
            "metric": f"{task.metric} ({task.scale_text})",
        }
        interval = reading.interval
        if (
            isinstance(interval, (list, tuple))
            and len(interval) == 2
            and all(_number(x) is not None for x in interval)
        ):
            pairs["ci95"] = _text([float(x) for x in interval])
            if metrics.get("interval"):
                pairs["interval"] = _text(metrics["interval"])
        n = reading.n
        if isinstance(n, int) and not isinstance(n, bool):
            pairs["n"] = str(n)
        entries.append(
            EvalResultEntry(
                dataset_id=dataset_id,
                task_id=task.id,
                value=round(value, 6),
                dataset_revision=revision,
                date=date,
                source_url=source_url,
                source_name=source_name if source_url else None,
                notes=format_notes(pairs),
            )
        )
    return RunScores(model=model, entries=tuple(entries), skipped=tuple(skipped))


def file_date(path: str | Path) -> str:
    """The UTC date a file was last written (a report's ``metrics.json``: when the run was scored)."""
    return dt.datetime.fromtimestamp(Path(path).stat().st_mtime, tz=dt.timezone.utc).date().isoformat()


def render_entries(entries: Iterable[EvalResultEntry]) -> str:
    return yaml.safe_dump(
        eval_result_entries_to_yaml(list(entries)), sort_keys=False, allow_unicode=True, width=1000
    )


def write_entries(model_folder: str | Path, file_stem: str, entries: Iterable[EvalResultEntry]) -> Path:
    """Write ``<model_folder>/.eval_results/<file_stem>.yaml`` (replacing it); returns its path."""
    entries = list(entries)
    if not entries:
        raise ValueError("no scores to write: the report has none of the benchmark's tasks")
    return write_text_atomic(Path(model_folder) / RESULTS_DIR / f"{file_stem}.yaml", render_entries(entries))


def _check_item(item: Any, where: str) -> list[str]:
    if not isinstance(item, dict):
        return [f"{where}: expected a mapping with 'dataset' and 'value', got {type(item).__name__}"]
    problems = []
    dataset = item.get("dataset")
    if not isinstance(dataset, dict):
        problems.append(f"{where}: no 'dataset' mapping (with 'id' and 'task_id')")
    else:
        problems += [f"{where}: dataset.{k} missing" for k in ("id", "task_id") if not dataset.get(k)]
    if _number(item.get("value")) is None:
        problems.append(f"{where}: 'value' must be a number, got {item.get('value')!r}")
    source = item.get("source")
    if source is not None and not (isinstance(source, dict) and source.get("url")):
        problems.append(f"{where}: 'source' needs a 'url'")
    return problems


def read_entries(path: str | Path) -> list[tuple[str, EvalResultEntry]]:
    """(file name, entry) for a ``.yaml`` file or every ``.eval_results/*.yaml`` of a model folder.

    ValueError names the file and item of every malformed entry.
    """
    out, problems = scan_entries(path)
    if problems:
        raise ValueError("malformed eval results:\n  - " + "\n  - ".join(problems))
    return out


def scan_entries(path: str | Path) -> tuple[list[tuple[str, EvalResultEntry]], list[str]]:
    """:func:`read_entries` that goes on past a malformed entry: the well-formed entries, and one
    problem (naming file and entry) per malformed one, for a reader that skips them (a leaderboard).
    A folder without entry files, or a path that is none, is still a ValueError."""
    path = Path(path)
    if path.is_dir():
        folder = path if path.name == RESULTS_DIR else path / RESULTS_DIR
        files = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
        if not files:
            raise ValueError(f"{path}: no {RESULTS_DIR}/*.yaml files")
    elif path.is_file():
        files = [path]
    else:
        raise ValueError(f"{path}: no such file or folder")
    out: list[tuple[str, EvalResultEntry]] = []
    problems: list[str] = []
    for file in files:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except yaml.YAMLError as err:
            problems.append(f"{file}: not valid YAML ({' '.join(str(err).split())})")
            continue
        if not isinstance(data, list):
            problems.append(f"{file}: expected a list of entries, got {type(data).__name__}")
            continue
        for i, item in enumerate(data):
            found = _check_item(item, f"{file}: entry {i}")
            problems += found
            if not found:
                out += [(file.name, e) for e in parse_eval_result_entries([item])]
    return out, problems
