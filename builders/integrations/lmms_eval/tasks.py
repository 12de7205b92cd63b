"""The functions the lmms-eval task YAMLs of this folder name with ``!function utils.<name>``.

lmms-eval (v0.7.2, ``lmms_eval/utils.py`` ``import_function``) executes ``utils.py`` from the YAML's
own folder for every ``!function`` tag, so ``utils.py`` holds no state: it binds a
:class:`TaskFunctions` to its folder, whose ``_bqa_template_yaml`` / ``_marinelife16k_template_yaml``
name the data (``dataset_path``, ``test_split``). The splits themselves are opened once per process
by :mod:`builders.integrations.items` with this project's openers, so items, videos and scores are
the project's own:

- ``*_process_docs``: BQA's video column is not decoded (lmms-eval needs no torchcodec); the
  MarineLife-16K tasks keep their questions' format (multiple-choice or open-ended);
- ``*_doc_to_visual``: ``[path]`` of the item's video (Parquet bytes written once to a cache file);
- ``*_doc_to_text``: the project runner's prompt, ``pre_prompt``/``post_prompt`` around it;
- ``*_process_results``: the runner's predictions line, under every metric name;
- ``<task>_agg_<metric>``: that number from the project's metric over all lines (BQA accuracy
  0-1 and demographic error rates; MarineLife-16K accuracy 0-100 per dimension; the judge's 0-5
  scores by task and camera kind, through the judge's own rubric and reply cache).

Empty groups aggregate to NaN (lmms-eval prints numbers only).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from builders.integrations import items as it
from builders.scoring.judge import judge_client

BQA_TEMPLATE = "_bqa_template_yaml"
MARINELIFE_TEMPLATE = "_marinelife16k_template_yaml"
#: The judge's reply cache for ``marinelife16k_open`` (the judge model itself: ``VQABENCH_JUDGE_*``).
JUDGE_CACHE_ENV = "VQABENCH_JUDGE_CACHE"
JUDGE_TASKS = ("oemu", "caption")
CAMERAS = ("static", "moving")


class _TemplateLoader(yaml.SafeLoader):
    """Reads a template's plain keys; its ``!function`` tags are lmms-eval's to resolve (kept as text)."""


_TemplateLoader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node))


def read_template(path: str | os.PathLike[str]) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=_TemplateLoader) or {}  # noqa: S506 - a SafeLoader subclass


def judge_metric_names() -> list[str]:
    return [f"{task}_score" for task in JUDGE_TASKS] + [f"{t}_{c}" for t in JUDGE_TASKS for c in CAMERAS]


def marinelife_mcq_metric_names() -> list[str]:
    return [f"accuracy_{it.metric_slug(name)}" for name in it.MARINELIFE_MCQ_METRICS] + ["n_unparsed"]


def _number(value: float | int | None) -> float:
    return math.nan if value is None else float(value)


def _kwargs_text(text: str, kwargs: Mapping[str, Any] | None) -> str:
    kwargs = kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{text}{kwargs.get('post_prompt', '')}"


def _reply(results: Sequence[Any]) -> str | None:
    """The model's text: lmms-eval passes the generations of one doc as a list."""
    value = results[0] if isinstance(results, (list, tuple)) and results else results
    return value if isinstance(value, str) or value is None else str(value)


class TaskFunctions:
    """The ``!function`` targets for the task YAMLs in ``folder`` (see the module doc)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._judged: dict[tuple, dict] = {}

    # -- where the data is ---------------------------------------------------------------------------
    def _template(self, name: str) -> dict[str, Any]:
        path = self.folder / name
        config = read_template(path)
        location = config.get("dataset_path")
        if not location or not Path(location).is_dir():
            raise FileNotFoundError(
                f"{path}: dataset_path {location!r} is not a local dataset folder; write a configured "
                "copy of the tasks with: vqabench integrations path lmms-eval --data bqa=DIR "
                "--data marinelife16k=DIR --out TASKS_DIR"
            )
        return config

    def bqa(self) -> it.BQAItems:
        config = self._template(BQA_TEMPLATE)
        return it.bqa_items(str(config["dataset_path"]), config.get("test_split", "test"))

    def marinelife(self) -> it.MarineLifeItems:
        config = self._template(MARINELIFE_TEMPLATE)
        return it.marinelife_items(str(config["dataset_path"]), config.get("test_split", "test"))

    # -- BQA -------------------------------------------------------------------------------------------
    @staticmethod
    def bqa_process_docs(dataset: Any) -> Any:
        import datasets  # lazy: only lmms-eval's loaded dataset gets here

        if "video" in dataset.features:
            dataset = dataset.cast_column("video", datasets.Video(decode=False))
        return dataset

    def bqa_doc_to_visual(self, doc: Mapping[str, Any]) -> list[str]:
        return [self.bqa().video(doc["id"])]

    def bqa_doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        return _kwargs_text(
            it.bqa_prompt(self.bqa().row(doc["id"]), "single_word"), lmms_eval_specific_kwargs
        )

    def bqa_cot_doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        return _kwargs_text(it.bqa_prompt(self.bqa().row(doc["id"]), "rationale"), lmms_eval_specific_kwargs)

    def _bqa_results(self, doc: Mapping[str, Any], results: Sequence[Any], style: str) -> dict[str, Any]:
        line = it.bqa_line(self.bqa().row(doc["id"]), _reply(results), style)
        return dict.fromkeys(it.bqa_metric_names(), line)

    def bqa_process_results(self, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        return self._bqa_results(doc, results, "single_word")

    def bqa_cot_process_results(self, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        return self._bqa_results(doc, results, "rationale")

    def _bqa_aggregation(self, metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
        def aggregate(lines: Sequence[Mapping[str, Any]]) -> float:
            return _number(it.bqa_metric(it.bqa_scores(lines, self.bqa()), metric))

        return aggregate

    # -- MarineLife-16K ----------------------------------------------------------------------------------
    @staticmethod
    def marinelife16k_mcq_process_docs(dataset: Any) -> Any:
        return dataset.filter(lambda doc: doc["question_format"] == it.MULTIPLE_CHOICE)

    @staticmethod
    def marinelife16k_open_process_docs(dataset: Any) -> Any:
        return dataset.filter(lambda doc: doc["question_format"] != it.MULTIPLE_CHOICE)

    def marinelife16k_doc_to_visual(self, doc: Mapping[str, Any]) -> list[str]:
        return [self.marinelife().video(doc["question_id"])]

    def marinelife16k_doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        record = self.marinelife().record(doc["question_id"])
        return _kwargs_text(it.marinelife_prompt(record), lmms_eval_specific_kwargs)

    def marinelife16k_mcq_process_results(
        self, doc: Mapping[str, Any], results: Sequence[Any]
    ) -> dict[str, Any]:
        line = it.marinelife_line(self.marinelife(), doc["question_id"], _reply(results))
        return dict.fromkeys(marinelife_mcq_metric_names(), line)

    def marinelife16k_open_process_results(
        self, doc: Mapping[str, Any], results: Sequence[Any]
    ) -> dict[str, Any]:
        line = it.marinelife_line(self.marinelife(), doc["question_id"], _reply(results))
        return dict.fromkeys(judge_metric_names(), line)

    @staticmethod
    def _mcq_aggregation(metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
        def aggregate(lines: Sequence[Mapping[str, Any]]) -> float:
            result = it.marinelife_scores(lines)
            if metric == "n_unparsed":
                return float(result["n_unparsed"][it.OVERALL])
            name = next(n for n in it.MARINELIFE_MCQ_METRICS if f"accuracy_{it.metric_slug(n)}" == metric)
            return _number(result[name])

        return aggregate

    def judged(self, lines: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """The judge's results over ``lines`` (asked once per set of replies in this process)."""
        key = tuple((line["question_id"], line["raw_output"]) for line in lines)
        if key not in self._judged:
            with judge_client(cache_path=os.environ.get(JUDGE_CACHE_ENV)) as client:
                self._judged[key] = it.marinelife_judged(lines, client)
        return self._judged[key]

    def _judge_aggregation(self, metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
        task, _, part = metric.partition("_")

        def aggregate(lines: Sequence[Mapping[str, Any]]) -> float:
            result = self.judged(lines).get(task)
            if result is None:
                return math.nan
            if part == "score":
                return _number(result["score"])
            return _number((result.get("by_camera") or {}).get(part, {}).get("score"))

        return aggregate

    # -- what utils.py exposes -------------------------------------------------------------------------
    def functions(self) -> dict[str, Callable[..., Any]]:
        """Every ``!function`` name of the task YAMLs -> its function."""
        names = [
            "bqa_process_docs", "bqa_doc_to_visual", "bqa_doc_to_text", "bqa_cot_doc_to_text",
            "bqa_process_results", "bqa_cot_process_results", "marinelife16k_mcq_process_docs",
            "marinelife16k_open_process_docs", "marinelife16k_doc_to_visual", "marinelife16k_doc_to_text",
            "marinelife16k_mcq_process_results", "marinelife16k_open_process_results",
        ]  # fmt: skip
        out: dict[str, Callable[..., Any]] = {name: getattr(self, name) for name in names}
        out.update({f"bqa_agg_{m}": self._bqa_aggregation(m) for m in it.bqa_metric_names()})
        out.update(
            {f"marinelife16k_mcq_agg_{m}": self._mcq_aggregation(m) for m in marinelife_mcq_metric_names()}
        )
        out.update({f"marinelife16k_open_agg_{m}": self._judge_aggregation(m) for m in judge_metric_names()})
        return out
