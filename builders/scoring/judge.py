"""Judging predictions with a rubric through :mod:`builders.llm`, and aggregating the scores.

    client = judge_client(model="gemini-2.5-flash", cache_path="work/judge-cache.sqlite")  # unset: VQABENCH_JUDGE_*
    result = judge_predictions(predictions, references, get_rubric("marinelife_caption"), client,
                               groups=Groups("camera", ("static", "moving"), ["static", "moving", ...]))
    result.score, result.criteria, result.by("camera"), result.n_failed, result.failed  # a JudgeResult
    result.to_dict()  # the metric's output: score_ci95 (at confidence=0.95), by_camera, ...

The core knows no dataset: rubrics come from the registry (:mod:`builders.scoring.rubrics`), and a
breakdown of the means (MarineLife-16K's static/moving camera, :func:`marinelife16k.rubrics.camera_groups`)
is whatever :class:`Groups` the caller passes.

A judgement the LLM could not give (transport failure after the SDK's retries, or replies that
kept failing validation after the re-asks) is *failed*: excluded from every mean, counted in
``n_failed`` and listed with its reason. It is never scored 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from builders.llm import LLMClient, LLMResult, LLMSettings, llm_setting_overrides
from builders.llm.cli import JUDGE_ENV_PREFIX
from builders.scoring.judge_results import FailedJudgement, JudgedItem, JudgeInfo, JudgeResult, JudgeScores
from builders.scoring.rubrics import Groups, Rubric
from builders.scoring.stats import interval_key

ENV_PREFIX = JUDGE_ENV_PREFIX
# Beyond LLMSettings' own VQABENCH_JUDGE_<FIELD> variables (MODEL, BASE_URL, API_KEY_ENV, ...):
CACHE_ENV, MODE_ENV, REPLIES_ENV = ENV_PREFIX + "CACHE", ENV_PREFIX + "MODE", ENV_PREFIX + "REPLIES"


def default_cache_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$VQABENCH_JUDGE_CACHE``, else ``$XDG_CACHE_HOME/vqabench/judge-cache.sqlite`` (``~/.cache``):
    on by default, so rerunning an evaluation never pays twice for a judgement."""
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return Path(environ[CACHE_ENV]).expanduser()
    root = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "vqabench" / "judge-cache.sqlite"


def judge_client(
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    max_concurrency: int | None = None,
    cache_path: str | Path | None = None,
    mode: str | None = None,
    replies_path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    timeout: float | None = None,
    max_reply_mb: float | None = None,
    max_retries: int | None = None,
    max_validation_retries: int | None = None,
    temperature: float | str | None = None,
    seed: int | str | None = None,
    max_tokens: int | str | None = None,
    extra_body: Mapping[str, Any] | str | None = None,
    progress: bool | None = None,
    caller: str = "cli",
) -> LLMClient:
    """An :class:`LLMClient` for judging, every :class:`LLMSettings` field an argument.

    An argument left None falls back to ``VQABENCH_JUDGE_<FIELD>`` (read, never written, from
    ``environ``, default ``os.environ``; :meth:`LLMSettings.from_env`), then to the field's default.
    ``"none"`` switches an optional setting off (``api_key_env="none"``: no key, for keyless local
    servers like vLLM or Ollama; ``temperature``/``max_tokens``: the server's default; ``seed``,
    ``extra_body``: not sent). ``replies_path`` (or ``VQABENCH_JUDGE_REPLIES``) replays recorded
    replies instead of using a cache; ``cache_path`` defaults to :func:`default_cache_path`, ``mode``
    to ``VQABENCH_JUDGE_MODE``, then ``normal``. ``caller`` (``"cli"``, ``"python"``) words a missing
    setting's error for flags or for arguments.
    """
    environ = os.environ if environ is None else environ
    config = LLMSettings.from_env(
        prefix=ENV_PREFIX,
        environ=environ,
        caller=caller,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        max_concurrency=max_concurrency,
        timeout=timeout,
        max_reply_mb=max_reply_mb,
        max_retries=max_retries,
        max_validation_retries=max_validation_retries,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        extra_body=extra_body,
        progress=progress,
    )
    replies_path = replies_path or environ.get(REPLIES_ENV) or None
    if replies_path is not None:
        return LLMClient(config, replies_path=replies_path)
    mode = mode or environ.get(MODE_ENV) or "normal"
    return LLMClient(config, cache_path=cache_path or default_cache_path(environ), mode=mode)


def judge_client_from_args(args: argparse.Namespace) -> LLMClient:
    """A judge client from :func:`builders.llm.add_llm_arguments` options; unset ones fall back to
    ``VQABENCH_JUDGE_*`` (not ``VQABENCH_LLM_*``), as :func:`judge_client` does."""
    return judge_client(
        **llm_setting_overrides(args),
        cache_path=args.llm_cache,
        mode=args.llm_mode if args.llm_mode != "normal" else None,
        replies_path=args.llm_replies,
    )


def _check_lengths(n: int, **columns: Sequence[Any] | None) -> None:
    for name, column in columns.items():
        if column is not None and len(column) != n:
            raise ValueError(f"{name} has {len(column)} items but predictions has {n}")


def judge_predictions(
    predictions: Sequence[str],
    references: Sequence[str | Mapping[str, Any]],
    rubric: Rubric,
    client: LLMClient,
    *,
    questions: Sequence[str | None] | None = None,
    groups: Groups | None = None,
    evidence: Sequence[Mapping[str, Any] | None] | None = None,
    return_items: bool = False,
    confidence: float = 0.95,
) -> JudgeResult:
    """Judge every prediction once (cached), then aggregate; see :func:`aggregate` for the result
    (intervals at ``confidence``).

    ``evidence``: per item the structured ground truth (attributes) for rubrics that take it
    (``marinelife_open_ended``). A malformed input item is a ValueError naming its index before
    anything is sent.
    """
    interval_key(confidence)  # a level outside (0, 1) is refused before anything is sent
    n = len(predictions)
    grouped = {groups.name: groups.of_item} if groups is not None else {}
    _check_lengths(n, references=references, questions=questions, evidence=evidence, **grouped)
    if n == 0:
        raise ValueError("no predictions to judge")
    if groups is not None:
        bad = [(i, label) for i, label in enumerate(groups.of_item) if label not in groups.labels]
        if bad:
            raise ValueError(
                f"{groups.name} must be one of {groups.labels} per item; item {bad[0][0]} is {bad[0][1]!r}"
            )
    requests = []
    for i in range(n):
        context = {"evidence": evidence[i]} if evidence is not None and evidence[i] is not None else {}
        question = questions[i] if questions is not None else None
        try:
            requests.append(
                rubric.request(
                    predictions[i],
                    references[i],
                    question,
                    metadata={"index": i},
                    item_id=judge_item_id(predictions[i], references[i], question, context),
                    **context,
                )  # fmt: skip
            )
        except (TypeError, ValueError) as err:
            raise ValueError(f"item {i}: {err}") from None
    results = client.run(requests, desc=f"judge {rubric.name}")
    return aggregate(
        rubric, results, groups=groups, client=client, return_items=return_items, confidence=confidence
    )


def judge_item_id(prediction: Any, reference: Any, question: Any, context: Mapping[str, Any]) -> str:
    """The id that binds a judgement to its item: a digest of what is judged, so a reply meant for
    another item is refused (never scored for this one), and the id, like the cache key, does not
    depend on the item's place in the file."""
    what = json.dumps([prediction, reference, question, context], sort_keys=True, default=str)
    return "j" + hashlib.sha256(what.encode("utf-8")).hexdigest()[:12]


def aggregate(
    rubric: Rubric,
    results: Sequence[LLMResult],
    *,
    groups: Groups | None = None,
    client: LLMClient | None = None,
    return_items: bool = False,
    confidence: float = 0.95,
) -> JudgeResult:
    """The result of a judging run (:class:`JudgeResult`; ``to_dict()`` is the metric's output).

    ``score``: mean weighted score over the judged items, with its Student-t interval at
    ``confidence`` (None below 2 items; ``score_ci95`` in the dict at 0.95, ``score_ci90`` at 0.9);
    ``criteria``: mean per criterion, with theirs; ``n``: items judged (in the means); ``failed``:
    items without a usable judgement (``n_failed`` of them). With ``groups``: the same means per label
    (``by_camera = {"static": ..., "moving": ...}`` for MarineLife-16K). ``judge``: rubric name,
    version and signature, the model requested and the model ids the server reported, tokens
    (recorded ones included for cache hits), cache hits and API calls of this run. ``items``
    (``return_items``): per item its scores and explanations, or why it failed.
    """
    interval_key(confidence)  # a level outside (0, 1) is refused before anything is computed
    items: list[JudgedItem | FailedJudgement] = []
    for i, r in enumerate(results):
        if r.ok:
            scored = rubric.score(r.value)
            items.append(
                JudgedItem(i, scored["criteria"], scored["score"], rubric.explanations(r.value), r.cached)
            )
        else:
            items.append(FailedJudgement(i, r.error or "failed", None if r.raw is None else r.raw[:1000]))
    ok = [item for item in items if isinstance(item, JudgedItem)]
    failed = [item for item in items if isinstance(item, FailedJudgement)]
    names = rubric.criterion_names
    breakdowns = {}
    if groups is not None:
        breakdowns[groups.name] = {
            label: JudgeScores.of(
                names, [item for item in ok if groups.of_item[item.index] == label], confidence
            )
            for label in groups.labels
        }
    return JudgeResult(
        overall=JudgeScores.of(names, ok, confidence),
        failed=failed,
        n_failed=len(failed),
        breakdowns=breakdowns,
        judge=judge_info(rubric, results, client),
        items=items if return_items else None,
        confidence=confidence,
    )


def judge_info(rubric: Rubric, results: Sequence[LLMResult], client: LLMClient | None) -> JudgeInfo:
    """Who judged and under which settings: enough to tell two result tables apart."""
    reported = sorted({r.model_reported for r in results if r.ok and r.model_reported})
    info = JudgeInfo(
        rubric=rubric.name,
        rubric_version=rubric.version,
        signature=rubric.signature,
        model_reported=reported[0] if len(reported) == 1 else reported or None,
        prompt_tokens=sum(r.usage.prompt_tokens for r in results),
        completion_tokens=sum(r.usage.completion_tokens for r in results),
        cache_hits=sum(r.cached for r in results),
    )
    if client is None:
        return info
    s = client.settings
    return replace(
        info,
        model=s.model,
        signature=f"{rubric.signature}|judge:{s.model}|t:{s.temperature}|seed:{s.seed}|max_tokens:{s.max_tokens}",
        api_calls=client.last_usage.api_calls,
    )
