"""A benchmark dataset's ``eval.yaml``: the tasks (one leaderboard each) that the Hub tracks for it.

The Hub reads ``eval.yaml`` at a dataset repo's root (https://huggingface.co/docs/hub/eval-results):
``name``, ``description``, ``evaluation_framework`` and ``tasks[]``, each task with an ``id`` (what a
model repo's ``.eval_results/*.yaml`` entry names as ``dataset.task_id``), ``config`` and ``split``.
Each of our tasks is one headline number of the paper, so a task also says which metric it is and on
which scale (``description``), and :class:`Task` knows where that number sits in a report's
``metrics.json`` (``value``, with its interval and item count when the report has them).

:func:`check_eval_yaml` is what the push check runs: the file parses to a mapping, has every field the
Hub requires, task ids are unique and usable, and every task's config and split exist in the card.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EVAL_FILE = "eval.yaml"
#: Our harness's identifier. The Hub keeps a list of frameworks (huggingface.js
#: ``packages/tasks/src/eval.ts``); a benchmark is listed once its framework is there.
EVALUATION_FRAMEWORK = "vqabench"
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
REQUIRED = ("name", "description", "evaluation_framework", "tasks")

KeyPath = tuple[str, ...]  # keys into one model's entry of metrics.json["models"]


@dataclass(frozen=True)
class Reading:
    """A task's number as a :data:`Reader` finds it in one model's entry: the value (None: the report
    has none), its 95% interval, the items behind it, and notes naming what produced it (``rubric``,
    ``judge``: the judge of a judged task)."""

    value: Any
    interval: Any = None
    n: Any = None
    notes: Mapping[str, Any] = field(default_factory=dict)


#: Reads a task's number from one model's entry of metrics.json["models"] through the result's own type
#: (the judge's results: :class:`~builders.scoring.judge_results.JudgeResult`), where key paths would
#: read a typed result by string.
Reader = Callable[[Mapping[str, Any]], Reading]


@dataclass(frozen=True)
class Task:
    """One leaderboard: a headline metric on one config and split."""

    id: str
    name: str
    config: str
    split: str
    metric: str  # what is measured, e.g. "accuracy"
    scale: tuple[float, float]  # the range of the value, as the paper reports it
    higher_is_better: bool
    description: str
    value: KeyPath  # where the value is in one model's metrics.json entry
    interval: KeyPath | None = None  # its 95% interval [low, high], if the report has one
    n: KeyPath | None = None  # the number of items behind it
    reader: Reader | None = None  # reads value, interval, n and notes instead of the key paths

    def read(self, entry: Mapping[str, Any]) -> Reading:
        """This task's number in one model's entry: through :attr:`reader`, else the key paths."""
        if self.reader is not None:
            return self.reader(entry)
        return Reading(
            lookup(entry, self.value),
            lookup(entry, self.interval) if self.interval else None,
            lookup(entry, self.n) if self.n else None,
        )

    @property
    def scale_text(self) -> str:
        low, high = (int(x) if float(x).is_integer() else x for x in self.scale)
        return f"{low}-{high}"

    def to_yaml(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "config": self.config,
            "split": self.split,
            "description": f"{self.description} Scale {self.scale_text}, "
            f"{'higher' if self.higher_is_better else 'lower'} is better.",
        }


@dataclass(frozen=True)
class Benchmark:
    """What ``eval.yaml`` declares, plus how to read each task's number from a report."""

    name: str
    description: str
    tasks: tuple[Task, ...]
    framework: str = EVALUATION_FRAMEWORK

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(f"{self.name} has no task {task_id!r}; its tasks: {[t.id for t in self.tasks]}")

    def to_yaml(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "evaluation_framework": self.framework,
            "tasks": [t.to_yaml() for t in self.tasks],
        }


def render_eval_yaml(benchmark: Benchmark) -> str:
    return yaml.safe_dump(benchmark.to_yaml(), sort_keys=False, allow_unicode=True, width=100)


def read_eval_yaml(folder: str | Path) -> dict[str, Any] | None:
    """The folder's ``eval.yaml`` as a mapping, None if there is none; ValueError if it is not a mapping."""
    path = Path(folder) / EVAL_FILE
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping with {', '.join(REQUIRED)}, got {type(data).__name__}")
    return data


def _card_splits(card: Mapping[str, Any]) -> dict[str, list[str]]:
    """config -> split names, from the card's ``configs[].data_files``."""
    out: dict[str, list[str]] = {}
    for config in card.get("configs") or []:
        files = config.get("data_files") or []
        files = [files] if isinstance(files, (str, dict)) else files
        out[str(config.get("config_name", "default"))] = [
            str(f["split"]) for f in files if isinstance(f, dict) and "split" in f
        ]
    return out


def check_eval_yaml(data: Mapping[str, Any], card: Mapping[str, Any], where: str = EVAL_FILE) -> list[str]:
    """Every problem with ``data`` (a parsed ``eval.yaml``) against the card's configs; [] if none."""
    problems = [f"{where}: no {key!r}" for key in REQUIRED if not data.get(key)]
    for key in ("name", "description", "evaluation_framework"):
        if data.get(key) is not None and not isinstance(data[key], str):
            problems.append(f"{where}: {key!r} must be text, got {type(data[key]).__name__}")
    tasks = data.get("tasks")
    if tasks is None:
        return problems
    if not isinstance(tasks, list):
        return [*problems, f"{where}: 'tasks' must be a list, got {type(tasks).__name__}"]
    splits = _card_splits(card)
    default = next((str(c["config_name"]) for c in card.get("configs") or [] if c.get("default")), None)
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        label = f"{where}: tasks[{i}]"
        if not isinstance(task, dict):
            problems.append(f"{label} must be a mapping, got {type(task).__name__}")
            continue
        task_id = task.get("id")
        if not isinstance(task_id, str) or not TASK_ID.match(task_id):
            problems.append(f"{label}: 'id' must be letters, digits, '_', '-' or '.', got {task_id!r}")
        elif task_id in seen:
            problems.append(f"{label}: id {task_id!r} is used twice")
        else:
            seen.add(task_id)
            label = f"{where}: task {task_id!r}"
        config = str(task.get("config") or default or "default")
        split = str(task.get("split") or "test")
        if config not in splits:
            problems.append(f"{label}: config {config!r} is not in the card's configs {sorted(splits)}")
        elif split not in splits[config]:
            problems.append(f"{label}: split {split!r} is not in config {config!r} (has {splits[config]})")
    return problems


def lookup(entry: Mapping[str, Any], path: Sequence[str]) -> Any:
    """``entry[path[0]][path[1]]...``, None where a key is missing or a value is null."""
    value: Any = entry
    for key in path:
        if not isinstance(value, Mapping) or value.get(key) is None:
            return None
        value = value[key]
    return value
