"""The functions the lmms-eval task YAMLs of this folder name with ``!function utils.<name>``.

lmms-eval (v0.7.2, ``lmms_eval/utils.py`` ``import_function``) executes ``utils.py`` from the YAML's
own folder for every ``!function`` tag, so ``utils.py`` holds no state: it binds a
:class:`TaskFunctions` to its folder, whose ``_bqa_template_yaml`` / ``_marinelife16k_template_yaml``
name the data (``dataset_path``, ``test_split``). The splits themselves are opened once per process
by :mod:`builders.integrations.items` with this project's openers, so items, videos and scores are
the project's own:

- ``*_process_docs`` (when the task is built, before any generation): the docs lmms-eval loaded
  must be the items of the project's split (a stale ``datasets`` cache is refused, not iterated);
  BQA's video column is not decoded (lmms-eval needs no torchcodec); the MarineLife-16K tasks keep
  their questions' format (multiple-choice or open-ended); ``marinelife16k_open`` checks the judge's
  settings (``VQABENCH_JUDGE_*``) then, not after every generation;
- ``*_doc_to_visual``: what the calling model needs to send the frames of a registered rule
  (:mod:`builders.integrations.lmms_eval.models`): ``[path]`` of the item's video (Parquet bytes
  written once to a cache file), or those frames as images; the frames it sends are recorded;
- ``*_doc_to_text``: the project runner's prompt, ``pre_prompt``/``post_prompt`` around it;
- ``*_process_results``: the runner's predictions line, under every metric name, with the run's
  ``provenance`` (the frames the model was sent, the harness, the data and split);
- ``<task>_agg_<metric>``: that number from the project's metric over all lines (BQA accuracy
  0-1 and demographic error rates; MarineLife-16K accuracy 0-100 per dimension; the judge's 0-5
  scores by task and camera kind, through the judge's own rubric and reply cache).

Empty groups aggregate to NaN (lmms-eval prints numbers only), and so does a judge that fails at
aggregation: the error is logged and lmms-eval goes on to write its sample log, whose lines
``vqabench marinelife judge`` scores again (lmms-eval writes it only after aggregation).
"""

from __future__ import annotations

import logging
import math
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from builders.integrations import items as it
from builders.integrations.lmms_eval.models import ModelFrames, calling_model, model_frames
from builders.llm.settings import LLMSettings
from builders.scoring.judge import ENV_PREFIX as JUDGE_ENV_PREFIX
from builders.scoring.judge import judge_client
from builders.scoring.judge_results import JudgeResult
from marinelife16k.rubrics import CAMERA_GROUP, JUDGE_TASKS

log = logging.getLogger(__name__)

BQA_TEMPLATE = "_bqa_template_yaml"
MARINELIFE_TEMPLATE = "_marinelife16k_template_yaml"
#: The judge's reply cache for ``marinelife16k_open`` (the judge model itself: ``VQABENCH_JUDGE_*``).
JUDGE_CACHE_ENV = "VQABENCH_JUDGE_CACHE"
CAMERAS = ("static", "moving")


HARNESS = "lmms-eval"
#: (task folder, item id) -> the frames record of what the model was handed for it, this process.
#: Module state: lmms-eval executes utils.py anew for every ``!function`` tag, so each function is
#: bound to its own :class:`TaskFunctions`; this module is imported once.
_SENT: dict[tuple[str, str], dict[str, Any]] = {}
#: The judge's results per set of replies, this process (asked once for all six metrics).
_JUDGED: dict[tuple, dict[str, JudgeResult]] = {}


def check_judge_settings(environ: Mapping[str, str] | None = None) -> None:
    """The judge's settings, read as the aggregation will read them; a clear error naming the
    environment variables when they cannot work (lmms-eval has no flags for them)."""
    environ = os.environ if environ is None else environ
    try:
        settings = LLMSettings.from_env(prefix=JUDGE_ENV_PREFIX, environ=environ, caller="environment")
        if settings.api_key_env is not None and not environ.get(settings.api_key_env):
            raise ValueError(f"{settings.api_key_env} (named by {JUDGE_ENV_PREFIX}API_KEY_ENV) is not set")
    except ValueError as err:
        raise ValueError(
            f"marinelife16k_open is scored by this project's LLM judge, configured by environment "
            f"variables: {JUDGE_ENV_PREFIX}MODEL, {JUDGE_ENV_PREFIX}BASE_URL, {JUDGE_ENV_PREFIX}API_KEY_ENV "
            f"(the name of the variable holding the key; none for a keyless server) and {JUDGE_CACHE_ENV} "
            f"(its reply cache); {err}"
        ) from None


def _judge_failed(what: str, data: str, split: str) -> None:
    log.error(
        "marinelife16k_open: the judge failed (%s); its scores leave those items out, or are NaN. The "
        "replies are kept in lmms-eval's sample log (--log_samples): judge them again with 'vqabench "
        "marinelife judge <date>_samples_marinelife16k_open.jsonl --data %s --split %s --out judge.json' "
        "and the same --llm-* judge settings (the same rubric and reply cache)",
        what,
        shlex.quote(data),
        shlex.quote(split),
    )


def _harness_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{HARNESS} {version('lmms-eval')}"
    except PackageNotFoundError:
        return HARNESS


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

    def _data_and_split(self) -> tuple[str, str]:
        config = self._template(MARINELIFE_TEMPLATE)
        return str(config["dataset_path"]), str(config.get("test_split", "test"))

    def bqa(self) -> it.BQAItems:
        config = self._template(BQA_TEMPLATE)
        return it.bqa_items(str(config["dataset_path"]), config.get("test_split", "test"))

    def marinelife(self) -> it.MarineLifeItems:
        config = self._template(MARINELIFE_TEMPLATE)
        return it.marinelife_items(str(config["dataset_path"]), config.get("test_split", "test"))

    # -- what the model is handed, and what it sends ---------------------------------------------------
    def _visual(self, item: str, video: Callable[[], str]) -> list[Any]:
        """The visual of one doc for the model calling this (see :mod:`.models`); its frames recorded."""
        frames = model_frames(calling_model())
        _SENT[(str(self.folder), item)] = frames.record()
        if frames.hand == "images":
            from PIL import Image  # lazy: only a model that takes images gets here

            if frames.spec is None:  # model_frames hands images only with the spec that samples them
                raise RuntimeError(f"{frames.model}: images to hand but no frame spec to sample them")
            return [Image.fromarray(rgb) for rgb in frames.spec.sample(video()).frames]
        return [video()]

    def _provenance(self, item: str, location: str, split: str) -> dict[str, Any]:
        frames = _SENT.get((str(self.folder), item)) or it.unknown_frames(
            "lmms-eval (no frames were handed to a model in this run: a cached or logged reply)"
        )
        return it.harness_provenance(_harness_version(), frames, location, split)

    @staticmethod
    def _check_docs(dataset: Any, column: str, expected: Sequence[str], source: str) -> None:
        """The docs lmms-eval loaded are the split's items (not another folder's, from a stale cache)."""
        loaded = list(dataset[column])
        if sorted(loaded) != sorted(expected):
            unknown = sorted(set(loaded) - set(expected))[:3]
            raise ValueError(
                f"lmms-eval loaded {len(loaded)} docs that are not the {len(expected)} items of {source}"
                f"{f' (e.g. {unknown})' if unknown else ''}: its datasets cache holds another folder's data; "
                "write the task folder again with 'vqabench integrations path lmms-eval --data ... --out ...' "
                "(each folder gets a cache of its own) or delete the datasets cache"
            )

    def model_frames(self) -> ModelFrames:
        """What the model of this run sends, checked when the task is built."""
        return model_frames(calling_model())

    # -- BQA -------------------------------------------------------------------------------------------
    def bqa_process_docs(self, dataset: Any) -> Any:
        import datasets  # lazy: only lmms-eval's loaded dataset gets here

        items = self.bqa()
        self._check_docs(dataset, "id", [row["id"] for row in items.data.rows], items.data.source)
        if "video" in dataset.features:
            dataset = dataset.cast_column("video", datasets.Video(decode=False))
        return dataset

    def bqa_doc_to_visual(self, doc: Mapping[str, Any]) -> list[Any]:
        items = self.bqa()
        return self._visual(doc["id"], lambda: items.video(doc["id"]))

    def bqa_doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        return _kwargs_text(
            it.bqa_prompt(self.bqa().row(doc["id"]), "single_word"), lmms_eval_specific_kwargs
        )

    def bqa_cot_doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        return _kwargs_text(
            it.bqa_prompt(self.bqa().row(doc["id"]), "reason_then_answer"), lmms_eval_specific_kwargs
        )

    def _bqa_results(self, doc: Mapping[str, Any], results: Sequence[Any], style: str) -> dict[str, Any]:
        config = self._template(BQA_TEMPLATE)
        line = it.bqa_line(self.bqa().row(doc["id"]), _reply(results), style)
        line["provenance"] = self._provenance(
            doc["id"], str(config["dataset_path"]), config.get("test_split", "test")
        )
        return dict.fromkeys(it.bqa_metric_names(), line)

    def bqa_process_results(self, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        return self._bqa_results(doc, results, "single_word")

    def bqa_cot_process_results(self, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        return self._bqa_results(doc, results, "reason_then_answer")

    def _bqa_aggregation(self, metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
        def aggregate(lines: Sequence[Mapping[str, Any]]) -> float:
            return _number(it.bqa_metric(it.bqa_scores(lines, self.bqa()), metric))

        return aggregate

    # -- MarineLife-16K ----------------------------------------------------------------------------------
    def _marinelife_docs(self, dataset: Any, mcq: bool) -> Any:
        items = self.marinelife()
        self._check_docs(
            dataset, "question_id", [r["question_id"] for r in items.data.rows], items.data.source
        )
        return dataset.filter(lambda doc: (doc["question_format"] == it.MULTIPLE_CHOICE) == mcq)

    def marinelife16k_mcq_process_docs(self, dataset: Any) -> Any:
        return self._marinelife_docs(dataset, mcq=True)

    def marinelife16k_open_process_docs(self, dataset: Any) -> Any:
        check_judge_settings()  # now, not at aggregation after every generation
        return self._marinelife_docs(dataset, mcq=False)

    def marinelife16k_doc_to_visual(self, doc: Mapping[str, Any]) -> list[Any]:
        items = self.marinelife()
        return self._visual(doc["question_id"], lambda: items.video(doc["question_id"]))

    def marinelife16k_doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        record = self.marinelife().record(doc["question_id"])
        return _kwargs_text(it.marinelife_prompt(record), lmms_eval_specific_kwargs)

    def _marinelife_line(self, doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        config = self._template(MARINELIFE_TEMPLATE)
        line = it.marinelife_line(self.marinelife(), doc["question_id"], _reply(results))
        line["provenance"] = self._provenance(
            doc["question_id"], str(config["dataset_path"]), config.get("test_split", "test")
        )
        return line

    def marinelife16k_mcq_process_results(
        self, doc: Mapping[str, Any], results: Sequence[Any]
    ) -> dict[str, Any]:
        return dict.fromkeys(marinelife_mcq_metric_names(), self._marinelife_line(doc, results))

    def marinelife16k_open_process_results(
        self, doc: Mapping[str, Any], results: Sequence[Any]
    ) -> dict[str, Any]:
        return dict.fromkeys(judge_metric_names(), self._marinelife_line(doc, results))

    @staticmethod
    def _mcq_aggregation(metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
        def aggregate(lines: Sequence[Mapping[str, Any]]) -> float:
            result = it.marinelife_scores(lines)
            if metric == "n_unparsed":
                return float(result.n_unparsed[it.OVERALL])
            name = next(n for n in it.MARINELIFE_MCQ_METRICS if f"accuracy_{it.metric_slug(n)}" == metric)
            return _number(result.rates[name].value)

        return aggregate

    def judged(self, lines: Sequence[Mapping[str, Any]]) -> dict[str, JudgeResult]:
        """The judge's results over ``lines`` (asked once per set of replies in this process)."""
        key = tuple((line["question_id"], line["raw_output"]) for line in lines)
        if key not in _JUDGED:
            try:
                with judge_client(cache_path=os.environ.get(JUDGE_CACHE_ENV), caller="environment") as client:
                    _JUDGED[key] = it.marinelife_judged(lines, client)
                failed = {t: r for t, r in _JUDGED[key].items() if r.n_failed}
                if failed:  # r.n counts the items judged, so the items asked are n + n_failed
                    what = ", ".join(
                        f"{t}: {r.n_failed} of {r.n + r.n_failed} items" for t, r in failed.items()
                    )
                    _judge_failed(what, *self._data_and_split())
            except Exception as err:  # noqa: BLE001 - any judge failure: keep the generations
                _judge_failed(str(err), *self._data_and_split())
                _JUDGED[key] = {}
        return _JUDGED[key]

    def _judge_aggregation(self, metric: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
        task, _, part = metric.partition("_")

        def aggregate(lines: Sequence[Mapping[str, Any]]) -> float:
            result = self.judged(lines).get(task)
            if result is None:
                return math.nan
            cell = result.scores(CAMERA_GROUP, None if part == "score" else part)
            return _number(None if cell is None else cell.score)

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
