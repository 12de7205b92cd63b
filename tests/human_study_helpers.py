"""Shared by the human-study tests: a model's answers to the MarineLife sample's open-ended questions,
a scripted LLM judge of them (a real local server), and answer files in the pages' export format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from builders.evaluation.marinelife import judge, prediction_record
from builders.files.jsonio import write_json_atomic, write_jsonl_atomic
from builders.human_study.study import ANSWERS_FORMAT, FORMAT_VERSION, Study
from builders.llm import LLMClient, LLMSettings
from builders.scripted.chat_requests import last_user_text, response_schema, with_item_id
from builders.testing.chat_server import ChatServer
from marinelife16k.data import open_split
from marinelife16k.vocabulary import MULTIPLE_CHOICE

_TAG = re.compile(r"\[answer (\d+)\]")


def write_marine_predictions(work: Path, split: str, path: Path) -> list[dict[str, Any]]:
    """Predictions rows (the runner's format) for every question of ``split``; open-ended answers are
    tagged ``[answer N]`` so the scripted judge can score each one differently."""
    data = open_split(work, split)
    rows = []
    for n, record in enumerate(data.rows):
        if record["question_format"] == MULTIPLE_CHOICE:
            raw = "A"
        else:
            raw = (
                f"[answer {n}] The camera stays level and close while the animal drifts slowly over the reef."
            )
        rows.append(prediction_record(record, data.videos[record["id"]], raw))
    write_jsonl_atomic(path, rows)
    return rows


def judge_score(n: int, criterion: int) -> int:
    """What the scripted judge gives answer ``n`` on its ``criterion``-th criterion."""
    return (n * 2 + criterion) % 6


def _scripted_judge(body: dict[str, Any]) -> dict[str, Any]:
    n = int(_TAG.search(last_user_text(body)).group(1))
    properties = response_schema(body)["properties"]
    scores = [name for name, p in properties.items() if p.get("type") == "integer"]
    reply: dict[str, Any] = {
        name: "scripted reason" for name, p in properties.items() if p.get("type") == "string"
    }
    reply.update({name: judge_score(n, k) for k, name in enumerate(scores)})
    return with_item_id(body, reply)


def write_judge_results(rows: list[dict[str, Any]], path: Path, model: str, cache: Path) -> dict[str, Any]:
    """Judge ``rows`` through ``builders.evaluation.marinelife.judge`` against a scripted local server,
    and write what ``marinelife judge --items`` writes."""
    with ChatServer() as server:
        server.handler = _scripted_judge
        settings = LLMSettings(model="scripted-judge", base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=cache) as client:
            results = judge(rows, client, return_items=True)
    written = {model: {task: result.to_dict() for task, result in results.items()}}
    write_json_atomic(path, written)
    return written


def write_answers(study: Study, rater: str, answers: dict[str, Any], path: Path, **overrides: Any) -> Path:
    """An answers file as the page exports it; ``answers``: item id -> choice index or score dict;
    ``overrides`` replace top-level fields (``study_id``, ``rater_id`` for ``rater``...)."""
    key = "choice" if study.benchmark == "bqa" else "scores"
    rows = [{"item_id": i, key: answers.get(i), "time_ms": 1200} for i in study.assigned(rater)]
    data = {
        "format": ANSWERS_FORMAT,
        "format_version": FORMAT_VERSION,
        "study_id": study.study_id,
        "benchmark": study.benchmark,
        "rater": rater,
        "answers": rows,
        **{("rater" if k == "rater_id" else k): v for k, v in overrides.items()},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def position_script(study: Study) -> dict[str, dict[str, int]]:
    """Three raters' choice positions, independent of the answers, with a hand-worked Fleiss' kappa
    (:data:`SCRIPTED_KAPPA`) on 10 items: item n (study order) has base position n % 4; r1 takes it,
    r2 takes the next position on items 0-2, r3 the position two on on odd items."""
    script: dict[str, dict[str, int]] = {"r1": {}, "r2": {}, "r3": {}}
    for n, item in enumerate(study.items):
        base = n % 4
        script["r1"][item.id] = base
        script["r2"][item.id] = (base + 1) % 4 if n < 3 else base
        script["r3"][item.id] = (base + 2) % 4 if n % 2 else base
    return script


# By hand for position_script on 10 items: P-bar = (6 * 1/3 + 0 + 3 * 1) / 10 = 0.5; category totals
# 8, 8, 6, 8 of 30 ratings, so P_e = 228/900; kappa = (0.5 - 228/900) / (1 - 228/900) = 37/112.
SCRIPTED_KAPPA = 37 / 112


def expert_script(study: Study) -> dict[str, dict[str, dict[str, int]]]:
    """Expert k (position in the item's raters) gives item n (study order), criterion j: (n + j + k) % 6."""
    script: dict[str, dict[str, dict[str, int]]] = {r: {} for r in study.raters}
    for n, item in enumerate(study.items):
        names = [c["name"] for c in study.rubrics[item.shown["rubric"]]["criteria"]]
        for k, rater in enumerate(item.raters):
            script[rater][item.id] = {c: (n + j + k) % 6 for j, c in enumerate(names)}
    return script
