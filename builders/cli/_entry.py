"""What a benchmark brings to the command line: a :class:`Benchmark` entry of the registry
(:mod:`builders.cli._benchmarks`).

The verbs themselves (build, evaluate, judge, export, stats; report in :mod:`builders.cli.report`) are
defined once, in :mod:`builders.cli._verbs`: their parser setup, shared flags and shared flow. An entry
holds only what is the benchmark's own: its names and unit words for help texts, its defaults, per verb
its help texts, extra arguments and the function doing the work, and its own actions (BQA's ``check``,
MarineLife's ``validate``...). The work functions import the heavy libraries inside (start-up speed:
``benchmarks/cli_startup.py``). Argparse level only.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from builders.runs.summary import BuildSummary

Arguments = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Verb:
    """A shared verb's part that is the benchmark's own: help texts, extra ``arguments`` (added after
    the verb's shared flags), and ``run``, the work the verb's shared flow calls (its signature is the
    verb's, see :mod:`builders.cli._verbs`)."""

    help: str
    description: str
    run: Callable[..., Any]
    arguments: Arguments | None = None
    epilog: str | None = None
    raw_description: bool = False  # the description is laid out by hand (kept as written)


@dataclass(frozen=True)
class Action:
    """An action only this benchmark has (``bqa check``, ``marinelife validate``): its whole parser and
    handler are its own."""

    name: str
    help: str
    description: str
    arguments: Arguments
    run: Callable[[argparse.Namespace], int]
    epilog: str | None = None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of the command line (``vqabench <key> ...``, ``report <key>``, ``leaderboard <key>``).

    ``modules``: its benchmark and card modules (imported when a handler asks for them);
    ``rows``/``videos``: its unit words for help texts (BQA asks one question per row and a row's clip
    is its video); ``evaluate_frames``/``build_frames``: its default frames; ``repo_help``: the help
    of ``--repo-id``; ``sample``: the help of ``--sample``. A verb that is None is not the benchmark's
    (an entry without ``judge`` gets no ``judge`` action)."""

    key: str
    name: str
    help: str
    description: str
    modules: tuple[str, str]
    rows: str
    videos: str
    evaluate_frames: int
    build_frames: str
    repo_help: str
    sample: str
    build: Verb
    evaluate: Verb
    export: Verb
    stats: Verb
    report: Verb
    judge: Verb | None = None
    actions: tuple[Action, ...] = ()

    def verbs(self) -> Mapping[str, Verb]:
        """The shared verbs this benchmark has under ``vqabench <key>``, in :data:`VERBS` order."""
        return {name: verb for name in VERBS if (verb := getattr(self, name)) is not None}


#: The verbs defined once for every benchmark under ``vqabench <key>`` (``report`` is ``vqabench report <key>``).
VERBS: tuple[str, ...] = ("build", "evaluate", "judge", "export", "stats")


@dataclass
class BuildJob:
    """What a benchmark's build hands the shared build flow (:func:`builders.cli._verbs.run_build`).

    ``run(client)`` runs the pipeline and returns its :class:`builders.runs.summary.BuildSummary`; ``recorded``: the client of the
    bundled sample's recording (``--sample --replay``), else the flow makes one from the ``--llm-*``
    options when ``needs_llm``; ``estimate(estimate, price)``: the estimate's text (default: that of
    the first step with requests to send)."""

    run: Callable[[Any], BuildSummary[Any]]
    recorded: Any = None
    needs_llm: bool = True
    estimate: Callable[[Any, Any], str] | None = None


@dataclass
class EvaluateJob:
    """What a benchmark's evaluate hands :func:`builders.evaluation.options.run_prediction_command`:
    how to open a split, the runner, more clients (``clients(client)``) and the runner's own options."""

    open_data: Callable[..., Any]
    evaluate: Callable[..., Any]
    clients: Callable[[Any], Mapping[str, Any]] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Exported:
    """An export's outcome: the folder written and its sizes as one line (``train 22, test 8``)."""

    folder: Any
    sizes: str
