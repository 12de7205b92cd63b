"""MarineLife-16K as a Hub benchmark: the tasks its ``eval.yaml`` declares, as the paper reports them.

Table 3: accuracy per multiple-choice dimension on a 0-100 scale (MBC-so, MBC-mo, PMT, PDO, OBK,
SM-e, SM-l) and the OEMU judge score (0-5). Table 4: caption scores BEH, AH, ECF (0-5), for static and
moving cameras; each is a task here, and so is each criterion over all test captions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from builders.hub.benchmark import Benchmark, Reader, Reading, Task, lookup
from builders.scoring.judge_results import JudgeResult
from marinelife16k.card import DIMENSION_DESCRIPTIONS
from marinelife16k.features import DEFAULT_CONFIG
from marinelife16k.rubrics import CAMERA_GROUP
from marinelife16k.vocabulary import (
    CAMERA_KINDS,
    CAPTION_CRITERIA,
    CAPTION_CRITERION_DEFINITIONS,
    CAPTION_CRITERION_NAMES,
    CAPTION_CRITERION_TITLES,
    DIMENSIONS,
    MCQ_DIMENSIONS,
)


def _slug(name: str) -> str:
    return name.lower().replace("-", "_")


def _accuracy(dimension: str) -> Task:
    return Task(
        id=_slug(dimension),
        name=f"{dimension} accuracy",
        config=DEFAULT_CONFIG,
        split="test",
        metric="accuracy",
        scale=(0.0, 100.0),
        higher_is_better=True,
        description=f"{DIMENSION_DESCRIPTIONS[dimension]}. Accuracy (percent of questions answered with "
        "the right option letter) on the test split's multiple-choice questions of this dimension.",
        value=("accuracy", dimension),
        interval=("accuracy", "ci95", dimension),
        n=("accuracy", "n", dimension),
    )


def _read_judged(task: str, camera: str | None, criterion: str | None) -> Reader:
    """The judge task's score (``criterion`` None) or criterion mean over ``camera`` (None: all), read
    from the report's typed judge result, with the rubric and judge that gave it."""

    def read(entry: Mapping[str, Any]) -> Reading:
        data = lookup(entry, ("judge", task))
        if data is None:
            return Reading(None)
        result = JudgeResult.from_dict(data, f"judge.{task}")
        cell = result.scores(CAMERA_GROUP, camera)
        if cell is None:
            return Reading(None)
        info = result.judge
        notes = (
            {} if info is None else {"rubric": info.rubric_label, "judge": info.model_reported or info.model}
        )
        return Reading(cell.score if criterion is None else cell.criteria.get(criterion), None, cell.n, notes)

    return read


def _judged(
    task_id: str, name: str, what: str, judge_task: str, camera: str | None, criterion: str | None
) -> Task:
    where = ("by_camera", camera) if camera else ()
    return Task(
        id=task_id,
        name=name,
        config=DEFAULT_CONFIG,
        split="test",
        metric="LLM-judge score",
        scale=(0.0, 5.0),
        higher_is_better=True,
        description=f"{what} Mean LLM-judge score over the test split (the judge model and rubric are "
        "named in each result's notes).",
        # where the number sits in metrics.json (named in messages); read through the typed result
        value=("judge", judge_task, *where, *(("criteria", criterion) if criterion else ("score",))),
        reader=_read_judged(judge_task, camera, criterion),
    )


def _caption(criterion: str, camera: str | None) -> Task:
    label = f" ({camera} camera)" if camera else ""
    short = f" ({camera})" if camera else ""
    return _judged(
        f"caption_{criterion.lower()}" + (f"_{camera}" if camera else ""),
        f"Caption {criterion}{short}",
        f"Video captioning{label} judged on {criterion}, {CAPTION_CRITERION_NAMES[criterion]} "
        f"({CAPTION_CRITERION_TITLES[criterion].lower()}): {CAPTION_CRITERION_DEFINITIONS[criterion]}",
        "caption",
        camera,
        criterion,
    )


BENCHMARK = Benchmark(
    name="MarineLife-16K",
    description=(
        "MarineLife-16K: motion-aware question answering and captioning over 2,000 marine videos (MVK and "
        "MSC). Multiple-choice dimensions are scored by accuracy, 0-100; open-ended answers (OEMU) and "
        "captions (BEH, AH, ECF, for static and moving cameras) by an LLM judge, 0-5; all on the test split, "
        "as in Tables 3 and 4 of the MarineLife-16K paper."
    ),
    tasks=(
        *(_accuracy(d) for d in DIMENSIONS if d in MCQ_DIMENSIONS),  # the paper's order
        _judged("oemu", "OEMU judge score", f"{DIMENSION_DESCRIPTIONS['OEMU']}.", "oemu", None, None),
        *(_caption(c, None) for c in CAPTION_CRITERIA),
        *(_caption(c, camera) for camera in CAMERA_KINDS for c in CAPTION_CRITERIA),
    ),
)
#: The name of the ``.eval_results/<stem>.yaml`` file a model repo gets for this benchmark.
RESULTS_FILE_STEM = "marinelife16k"
