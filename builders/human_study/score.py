"""``human-study score``: what the raters' answers say.

BQA (the paper's "Human (Rand100)" row): accuracy over all ratings, Easy/Hard/Total, with 95%
Wilson intervals (each rating counted once; ratings of one item are not independent, so the
interval is optimistic when k > 1); accuracy of the majority vote per item (a tie is no majority
and counts as wrong); per-rater accuracy; agreement among raters on the choice position (A-D) as
Fleiss' kappa (every item needs the same number of ratings), Krippendorff's alpha (nominal) and
the observed share of agreeing pairs.

MarineLife-16K (the paper's judge validation): per item and criterion the mean of its experts'
scores, and the weighted score of the rubric; Krippendorff's alpha (interval) per criterion; and,
given the judge's per-item results, agreement of the judge with the expert mean per criterion and
on the weighted score through :func:`builders.scoring.agreement.agreement_stats` (Pearson,
Spearman, quadratic-weighted kappa, MAE).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping
from statistics import median
from typing import Any

from builders.files.jsonio import read_json_object
from builders.human_study.answers import RaterAnswers
from builders.human_study.study import Study
from builders.report.inputs import preview
from builders.scoring.agreement import agreement_stats
from builders.scoring.inter_rater import category_counts, fleiss_kappa, krippendorff_alpha, observed_agreement
from builders.scoring.judge_results import FailedJudgement, JudgeResult
from builders.scoring.stats import proportion

DIFFICULTIES = ("Easy", "Hard")
TOTAL = "Total"
SCORE = "score"  # the rubric's weighted score, compared like a criterion


def _rate(k: int, n: int) -> dict[str, Any]:
    value, ci = proportion(k, n)
    return {"accuracy": value, "ci95": ci, "correct": k, "n": n}


def _ratings_by_item(study: Study, raters: Mapping[str, RaterAnswers]) -> dict[str, dict[str, Any]]:
    """item id -> {rater: answer}, in the study's item order."""
    return {item.id: {r: raters[r].answers[item.id] for r in item.raters} for item in study.items}


def _check_references(study: Study, references: Mapping[str, Mapping[str, Any]], source: str) -> None:
    missing = [i.id for i in study.items if i.id not in references]
    if missing:
        raise ValueError(
            f"{source}: {len(missing)} study item(s) are not in the {study.split} split: {preview(missing)}"
        )
    for item in study.items:
        if list(references[item.id]["choices"]) != list(item.shown["choices"]):
            raise ValueError(
                f"{source}, item {item.id}: the choices are {list(references[item.id]['choices'])} now but "
                f"{item.shown['choices']} in the study: the data changed since the study was made"
            )


def _time_summary(raters: Mapping[str, RaterAnswers]) -> dict[str, Any]:
    seconds = [t / 1000 for r in raters.values() for t in r.time_ms.values()]
    return {
        "median_seconds_per_item": median(seconds) if seconds else None,
        "total_hours": sum(seconds) / 3600,
    }


def score_bqa_study(
    study: Study,
    raters: Mapping[str, RaterAnswers],
    references: Mapping[str, Mapping[str, Any]],
    source: str,
) -> dict[str, Any]:
    _check_references(study, references, source)
    by_item = _ratings_by_item(study, raters)
    difficulty = {i: references[i]["difficulty"] for i in by_item}
    right = {i: references[i]["choices"].index(references[i]["answer"]) for i in by_item}

    def accuracy(correct: Mapping[str, list[bool]]) -> dict[str, Any]:
        out = {}
        for label in (*DIFFICULTIES, TOTAL):
            cells = [c for i, cs in correct.items() if label in (TOTAL, difficulty[i]) for c in cs]
            out[label] = _rate(sum(cells), len(cells))
        return out

    pooled = accuracy({i: [c == right[i] for c in rs.values()] for i, rs in by_item.items()})
    majority: dict[str, list[bool]] = {}
    ties = []
    for i, rs in by_item.items():
        top = Counter(rs.values()).most_common()
        if len(top) > 1 and top[0][1] == top[1][1]:
            ties.append(i)
            majority[i] = [False]
        else:
            majority[i] = [top[0][0] == right[i]]
    per_rater = {
        r: accuracy({i: [a.answers[i] == right[i]] for i in study.assigned(r)}) for r, a in raters.items()
    }
    k = {len(rs) for rs in by_item.values()}
    n_choices = max(len(i.shown["choices"]) for i in study.items)
    table = category_counts([list(rs.values()) for rs in by_item.values()], n_choices)
    equal = len(k) == 1 and k.pop() >= 2
    reliability = [[by_item[i].get(r) for i in by_item] for r in study.raters]
    multi = any(len(rs) >= 2 for rs in by_item.values())
    return {
        "benchmark": "BQA",
        "study_id": study.study_id,
        "data": source,
        "split": study.split,
        "n_items": len(by_item),
        "draw": study.draw,
        "raters": study.raters,
        "ratings_per_item": study.ratings_per_item,
        "interval": "95% Wilson score interval",
        "human": pooled,
        "majority_vote": {**accuracy(majority), "ties": ties},
        "per_rater": per_rater,
        "agreement": {
            "categories": "choice position (A-D) as shown",
            "fleiss_kappa": fleiss_kappa(table) if equal else None,
            "krippendorff_alpha_nominal": krippendorff_alpha(reliability, "nominal") if multi else None,
            "observed_agreement": observed_agreement(table) if equal else None,
        },
        "time": _time_summary(raters),
    }


# --- MarineLife-16K ---------------------------------------------------------------------------------
def read_judge_items(
    path: str | os.PathLike[str], model: str | None
) -> tuple[str, dict[str, dict[str, Any]]]:
    """``(model, {question_id: {"rubric", "rubric_version", "criteria", "score"} or {"error"}})``
    from the judge results JSON that ``vqabench marinelife judge --items`` writes
    (``{model: {task: result}}``, each result with per-item ``items`` carrying ``question_id``)."""
    data = read_json_object(path)
    if model is None:
        if len(data) != 1:
            raise ValueError(
                f"{path}: judge results for several models {sorted(data)}; name one (--judge-model)"
            )
        model = next(iter(data))
    if model not in data:
        raise ValueError(f"{path}: no judge results for model {model!r} (models: {sorted(data)})")
    out: dict[str, dict[str, Any]] = {}
    tasks = data[model]
    if not isinstance(tasks, dict):
        raise ValueError(f"{path}: {model}: expected an object of judge results per task")
    for task, raw in tasks.items():
        where = f"{path}: {model}.{task}"
        result = JudgeResult.from_dict(raw, where)
        if result.items is None:
            raise ValueError(
                f"{where}: no per-item judge scores; run 'vqabench marinelife judge' with --items"
            )
        info = result.judge
        for n, item in enumerate(result.items):
            qid = item.question_id
            if qid is None:
                raise ValueError(
                    f"{where}.items[{n}]: no question_id (judge results written without --items?)"
                )
            if qid in out:
                raise ValueError(f"{where}.items[{n}]: question {qid} is judged twice")
            if isinstance(item, FailedJudgement):
                out[qid] = {"error": item.error}
                continue
            out[qid] = {
                "rubric": None if info is None else info.rubric,
                "rubric_version": str(None if info is None else info.rubric_version),
                "criteria": dict(item.criteria),
                SCORE: item.score,
            }
    return model, out


def _weighted(rubric: Mapping[str, Any], scores: Mapping[str, float]) -> float:
    total = math.fsum(c["weight"] for c in rubric["criteria"])
    return math.fsum(c["weight"] * scores[c["name"]] for c in rubric["criteria"]) / total


def score_marinelife_study(
    study: Study,
    raters: Mapping[str, RaterAnswers],
    judge: tuple[str, Mapping[str, Mapping[str, Any]]] | None = None,
    judge_source: str | None = None,
) -> dict[str, Any]:
    by_item = _ratings_by_item(study, raters)
    items: dict[str, dict[str, Any]] = {}
    rubrics: dict[str, dict[str, Any]] = {}
    for item in study.items:
        rubric = study.rubrics[item.shown["rubric"]]
        names = [c["name"] for c in rubric["criteria"]]
        rated = by_item[item.id]
        mean = {n: math.fsum(s[n] for s in rated.values()) / len(rated) for n in names}
        items[item.id] = {
            "type": item.stratum,
            "rubric": rubric["name"],
            "n_raters": len(rated),
            "criteria": mean,
            SCORE: math.fsum(_weighted(rubric, s) for s in rated.values()) / len(rated),
        }
        rubrics.setdefault(rubric["name"], {"items": []})["items"].append(item.id)
    for name, part in rubrics.items():
        rubric = study.rubrics[name]
        ids = part["items"]
        part["version"] = rubric["version"]
        part["signature"] = rubric["signature"]
        part["n_items"] = len(ids)
        part["expert_mean"] = {
            n: math.fsum(items[i]["criteria"][n] for i in ids) / len(ids)
            for n in (c["name"] for c in rubric["criteria"])
        }
        part["expert_mean"][SCORE] = math.fsum(items[i][SCORE] for i in ids) / len(ids)
        alpha = {}
        for c in rubric["criteria"]:
            data = [
                [by_item[i][r][c["name"]] if r in by_item[i] else None for i in ids] for r in study.raters
            ]
            multi = any(len(by_item[i]) >= 2 for i in ids)
            alpha[c["name"]] = krippendorff_alpha(data, "interval") if multi else None
        part["krippendorff_alpha_interval"] = alpha
        if judge is not None:
            part["judge"] = _judge_agreement(
                study, rubric, ids, items, judge, judge_source or "judge results"
            )
    out = {
        "benchmark": "MarineLife-16K",
        "study_id": study.study_id,
        "data": study.source,
        "split": study.split,
        "model": study.model,
        "n_items": len(items),
        "raters": study.raters,
        "ratings_per_item": study.ratings_per_item,
        "rubrics": rubrics,
        "items": items,
        "time": _time_summary(raters),
    }
    if judge is not None:
        out["judge_model"] = judge[0]
    return out


def _judge_agreement(
    study: Study,
    rubric: Mapping[str, Any],
    ids: list[str],
    items: Mapping[str, Mapping[str, Any]],
    judge: tuple[str, Mapping[str, Mapping[str, Any]]],
    source: str,
) -> dict[str, Any]:
    model, judged = judge
    if model != study.model:
        raise ValueError(
            f"{source}: judge results are for model {model!r}, the experts rated {study.model!r}"
        )
    missing = [i for i in ids if i not in judged]
    if missing:
        raise ValueError(f"{source}: no judge score for {len(missing)} study item(s): {preview(missing)}")
    failed = [i for i in ids if "error" in judged[i]]
    ok = [i for i in ids if i not in failed]
    for i in ok:
        j = judged[i]
        if (j["rubric"], j["rubric_version"]) != (rubric["name"], rubric["version"]):
            raise ValueError(
                f"{source}, item {i}: judged with rubric {j['rubric']} v{j['rubric_version']}, the experts "
                f"rated with {rubric['name']} v{rubric['version']}"
            )
    names = [c["name"] for c in rubric["criteria"]]
    lo = min(c["min"] for c in rubric["criteria"])
    hi = max(c["max"] for c in rubric["criteria"])
    stats = {}
    pairs = {}
    for n in [*names, SCORE]:
        j_scores = [float(judged[i][SCORE] if n == SCORE else judged[i]["criteria"][n]) for i in ok]
        h_scores = [float(items[i][SCORE] if n == SCORE else items[i]["criteria"][n]) for i in ok]
        stats[n] = agreement_stats(j_scores, h_scores, lo, hi) if ok else None
        pairs[n] = {"judge": j_scores, "expert_mean": h_scores}
    judge_mean = {n: (math.fsum(p["judge"]) / len(ok) if ok else None) for n, p in pairs.items()}
    return {"model": model, "n_failed": len(failed), "failed": failed, "items": ok, "judge_mean": judge_mean,
            "stats": stats, "pairs": pairs}  # fmt: skip
