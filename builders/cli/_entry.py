"""The benchmark protocol: what a benchmark brings, as one typed :class:`Benchmark` entry found through
the ``vqabench.benchmarks`` entry-point group (:mod:`builders.cli._benchmarks`). The verbs are defined
once (:mod:`builders.cli._verbs`, :mod:`builders.cli.report`); an entry holds only its own part: names,
unit words and defaults for help texts, per verb its help, extra arguments and work function (typed per
verb: :class:`BuildRun`, :class:`EvaluateRun`...), what it publishes (:class:`Published`) and its own
actions. Work functions import heavy libraries inside (start-up speed). Checked by mypy's strict flags.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, NoReturn, Protocol, TypeVar

if TYPE_CHECKING:
    from builders.evaluation.run import PredictionRun
    from builders.hub.benchmark import Benchmark as EvalTasks
    from builders.hub.source import DataSource
    from builders.hub.subset import VideoSelection
    from builders.llm.client import LLMClient
    from builders.llm.cost import Estimate, Price
    from builders.report.document import Report
    from builders.report.inputs import PredictionsFile
    from builders.report.paper_comparison import PaperRequest
    from builders.runs.summary import BuildDetails, BuildSummary
    from builders.scoring.rubrics import Rubric
    from builders.video.frame_spec import FrameSpec

Arguments = Callable[[argparse.ArgumentParser], None]


@dataclass
class BuildJob:
    """What a benchmark's build hands the shared build flow (:func:`builders.cli._verbs.run_build`).

    ``run(client)`` runs the pipeline (``client`` None when ``needs_llm`` is false); ``recorded``: the
    client of the bundled sample's recording (``--sample --replay``), else the flow makes one from the
    ``--llm-*`` options when ``needs_llm``; ``estimate(estimate, price)``: the estimate's text (default:
    that of the first step with requests to send)."""

    run: Callable[[LLMClient | None], BuildSummary[BuildDetails]]
    recorded: LLMClient | None = None
    needs_llm: bool = True
    estimate: Callable[[Estimate, Price | None], str] | None = None


class Runner(Protocol):
    """An evaluation runner: predicts every item of the split its job's ``open_data`` opened (``data``:
    its own split type, hence the bottom type here) into ``out``, resumable in ``work_dir``."""

    def __call__(
        self,
        data: NoReturn,
        client: LLMClient,
        work_dir: Path,
        out: Path,
        *,
        frames: FrameSpec | None = ...,
        limit: int | None = ...,
        ahead: int | None = ...,
        reject_failures: bool = ...,
        identity: Mapping[str, object] | None = ...,
        videos: VideoSelection | None = ...,
    ) -> PredictionRun: ...


@dataclass
class EvaluateJob:
    """What a benchmark's evaluate hands :func:`builders.evaluation.options.run_prediction_command`:
    how to open a split, the runner, more clients (``clients(client)``) and the runner's own options."""

    open_data: Callable[[Path, str], object]
    evaluate: Runner
    clients: Callable[[LLMClient], Mapping[str, LLMClient | None]] | None = None
    options: Mapping[str, object] = field(default_factory=dict)


@dataclass
class Exported:
    """An export's outcome: the folder written and its sizes as one line (``train 22, test 8``)."""

    folder: Path
    sizes: str


class BuildRun(Protocol):
    def __call__(self, args: argparse.Namespace, *, sample_replay: bool) -> BuildJob: ...


class ExportRun(Protocol):
    def __call__(
        self, work: Path, out: Path, args: argparse.Namespace, *, repo_id: str | None,
        cache_dir: Path | None = ..., max_shard_bytes: int | None = ...,
    ) -> Exported: ...  # fmt: skip


class ReportRun(Protocol):
    def __call__(
        self,
        args: argparse.Namespace,
        data: DataSource,
        predictions: Mapping[str, Path | PredictionsFile],
        *,
        allow_missing: bool,
        allow_mixed: bool,
        answer_parser: str | None,
        videos: VideoSelection | None,
        paper: PaperRequest = ...,
    ) -> Report: ...


#: ``judge``: the entry reads the predictions (``run(args)``), judges with the verb's client
#: (``-> finish``), and ``finish()`` writes and prints the results and returns the exit status.
JudgeRun = Callable[[argparse.Namespace], Callable[["LLMClient"], Callable[[], int]]]
EvaluateRun = Callable[[argparse.Namespace], EvaluateJob]
#: ``vqabench judge score`` on a file: the rubric's inputs when it is this benchmark's ``evaluate`` output.
JudgeRows = Callable[[list[object], "Rubric", Path], Mapping[str, list[object]] | None]
StatsRun = Callable[[argparse.Namespace], int]

R = TypeVar("R", covariant=True)


@dataclass(frozen=True)
class Verb(Generic[R]):
    """A shared verb's part that is the benchmark's own: help texts, extra ``arguments`` (added after
    the verb's shared flags), and ``run``, the work the verb's shared flow calls."""

    help: str
    description: str
    run: R
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
class Published:
    """What the benchmark publishes on the Hub: its ``eval.yaml`` tasks (one leaderboard each), the stem
    of a model repo's ``.eval_results/<stem>.yaml`` and the dataset repo its card names."""

    eval_yaml: EvalTasks
    results_file_stem: str
    default_repo_id: str


@dataclass(frozen=True)
class Benchmark:
    """One benchmark (``vqabench <key> ...``, ``report <key>``, ``leaderboard <key>``, ``results``).

    ``name``: as reports, cards and results name it; ``rows``/``videos``: its unit words for help texts
    (BQA asks one question per row and a row's clip is its video); ``evaluate_frames``/``build_frames``:
    its default frames; ``repo_help``: the help of ``--repo-id``; ``sample``: the help of ``--sample``;
    ``published()``: what it publishes (loaded when asked: start-up speed); ``human_study``: the name a
    human-study file records for it (None: no ``human-study`` design); ``judge_rows``: see :data:`JudgeRows`. A verb that is None is not the
    benchmark's (an entry without ``judge`` gets no ``judge`` action)."""

    key: str
    name: str
    help: str
    description: str
    published: Callable[[], Published]
    rows: str
    videos: str
    evaluate_frames: int
    build_frames: str
    repo_help: str
    sample: str
    build: Verb[BuildRun]
    evaluate: Verb[EvaluateRun]
    export: Verb[ExportRun]
    stats: Verb[StatsRun]
    report: Verb[ReportRun]
    judge: Verb[JudgeRun] | None = None
    actions: tuple[Action, ...] = ()
    human_study: str | None = None
    judge_rows: JudgeRows | None = None

    def verbs(self) -> Mapping[str, Verb[object]]:
        """The shared verbs this benchmark has under ``vqabench <key>``, in :data:`VERBS` order."""
        return {name: verb for name in VERBS if (verb := getattr(self, name)) is not None}


#: The verbs defined once for every benchmark under ``vqabench <key>`` (``report`` is ``vqabench report <key>``).
VERBS: tuple[str, ...] = ("build", "evaluate", "judge", "export", "stats")
