"""What both harness integrations share: a split opened once, each item's video as a file, the
predictions line of one reply, and the scores of many lines.

A line is exactly what the project's evaluation runners write (``builders.evaluation.bqa`` /
``builders.evaluation.marinelife`` ``prediction_record``), so the scores a harness prints come from
the same parser and metric functions as ``vqabench report``, and the lines a harness logs can be
read back as a predictions file (:mod:`builders.report.harness_outputs`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bqa import data as bqa_data
from bqa.accuracy import DEMOGRAPHIC_FIELDS, BQAAccuracy, bqa_accuracy
from bqa.predictions import accuracy_inputs as bqa_inputs
from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES
from builders import tool_version
from builders.evaluation.bqa import prediction_record as bqa_record
from builders.evaluation.bqa_answers import answer_prompt, format_options
from builders.evaluation.marinelife import PROMPT_NAME, judge
from builders.evaluation.marinelife import prediction_record as marinelife_record
from builders.files.jsonio import write_bytes_atomic, write_file_atomic, write_text_atomic  # noqa: F401 - write_text_atomic: the harness plug-ins' (it.write_text_atomic)
from builders.hub.source import resolve_data
from builders.hub.split_data import SplitData
from builders.llm.prompts import load_prompt
from builders.scoring.judge_results import JudgeResult
from builders.video.source import SourceLike
from marinelife16k import data as marinelife_data
from marinelife16k.accuracy import ACCURACY_DIMENSIONS, OVERALL, MarineLifeAccuracy, marinelife_accuracy
from marinelife16k.predictions import accuracy_inputs as marinelife_inputs
from marinelife16k.vocabulary import MULTIPLE_CHOICE

#: Where videos stored inside Parquet (a Hub folder) are written out for a harness that wants a
#: file path; files are named by content hash, so concurrent workers share them safely.
VIDEO_CACHE_ENV = "VQABENCH_VIDEO_CACHE"
#: The prompt's frame description when the harness, not this project, picks the frames.
HARNESS_FRAMES = "frames"


def video_cache_dir() -> Path:
    return Path(os.environ.get(VIDEO_CACHE_ENV) or Path.home() / ".cache" / "vqabench" / "videos")


def video_file(source: SourceLike) -> str:
    """A file path for a video value: a path as it is, a ``{"path", "bytes"}`` value with bytes
    written once to :func:`video_cache_dir` as ``<sha256>.mp4`` (harnesses dispatch on the suffix)."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    if isinstance(source, Mapping):
        data = source.get("bytes")
        if data is None:
            path = source.get("path")
            if not path or not Path(path).is_file():
                raise FileNotFoundError(f"video value has neither bytes nor a readable path: {path!r}")
            return str(path)
    else:
        data = bytes(source)
    target = video_cache_dir() / f"{hashlib.sha256(data).hexdigest()}.mp4"
    if not target.is_file():
        write_bytes_atomic(target, data)
    return str(target)


def write_png(path: Path, rgb: Any) -> None:
    """One RGB frame as a PNG file, written atomically under a temporary name of its own."""
    from PIL import Image  # lazy: only the frame writers need it

    write_file_atomic(path, lambda tmp: Image.fromarray(rgb).save(tmp, format="PNG"))


@lru_cache(maxsize=16)
def data_provenance(location: str) -> dict[str, Any]:
    """What a harness run records about its data: the folder and its fingerprint (as the runners)."""
    return resolve_data(location).provenance()


def harness_provenance(
    harness: str, frames: Mapping[str, Any] | None, location: str, split: str, images: str | None = None
) -> dict[str, Any]:
    """The ``provenance`` of a predictions line written through a harness: the frames the model was
    really sent (a :class:`~builders.video.frame_spec.FrameSpec` as JSON, or
    :func:`unknown_frames`), the harness, this tool's version, the data and the split; ``images``:
    what the harness does to the frames' pixels on their way to the model, when it changes them."""
    out = {"tool": tool_version(), "harness": harness, "frames": frames,
           "data": data_provenance(location), "split": split}  # fmt: skip
    return {**out, "images": images} if images else out


def unknown_frames(sampled_by: str) -> dict[str, Any]:
    """The frames record of a run whose frames no registered rule names (the model sampled them)."""
    return {"rule": None, "sampled_by": sampled_by}


# -- BQA ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BQAItems:
    data: bqa_data.BQASplitData

    def row(self, item_id: str) -> dict[str, Any]:
        try:
            return self.data.videos[item_id]  # one question per clip: the clip's row is the item
        except KeyError:
            raise KeyError(
                f"{self.data.source}: no item {item_id!r} in the {self.data.split} split"
            ) from None

    def video(self, item_id: str) -> str:
        return video_file(self.data.video(self.row(item_id)["id"]))


@lru_cache(maxsize=8)
def bqa_items(location: str, split: str) -> BQAItems:
    """The BQA split at ``location`` (work folder or Hub-layout folder), opened once per process."""
    return BQAItems(bqa_data.open_split(location, split, check_clips=False))


def bqa_prompt(row: Mapping[str, Any], style: str, frame_description: str = HARNESS_FRAMES) -> str:
    """The runner's prompt for one item (``single_word`` or ``reason_then_answer``: one request each), after the frames."""
    variables = {"frame_description": frame_description, "question": row["question"],
                 "options": format_options(row["choices"])}  # fmt: skip
    return answer_prompt(style).render(**variables)


def bqa_line(row: Mapping[str, Any], reply: str | None, style: str) -> dict[str, Any]:
    """The predictions line the runner writes for this reply."""
    return bqa_record(row, style, reply)


def bqa_scores(lines: Sequence[Mapping[str, Any]], items: BQAItems | None = None) -> BQAAccuracy:
    """``bqa_accuracy`` over the lines, with the split's own group mapping and codes (as the report)."""
    data = items.data if items else None
    return bqa_accuracy(
        **bqa_inputs(list(lines)),
        group_mapping=data.group_mapping if data else None,
        demographic_codes=data.demographic_codes if data else None,
    )


#: The BQA numbers a harness reports: overall, Easy, Hard accuracy (0-1, as ``metrics/bqa_accuracy``),
#: unparsed replies, and the error rate of every demographic group (the report's bias tables).
BQA_GROUPS: dict[str, tuple[str, ...]] = {
    field: tuple(DEFAULT_DEMOGRAPHIC_CODES[field].values()) for field in DEMOGRAPHIC_FIELDS
}


def metric_slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label.lower()).strip("_")


def bqa_metric_names() -> list[str]:
    names = ["accuracy", "accuracy_easy", "accuracy_hard", "n_unparsed"]
    for field, labels in BQA_GROUPS.items():
        names += [f"error_rate_{field}_{metric_slug(label)}" for label in labels]
    return names


def bqa_metric(result: BQAAccuracy, name: str) -> float | None:
    """One :func:`bqa_metric_names` number from a ``bqa_accuracy`` result (None: no item in that group)."""
    totals = {
        "accuracy": result.accuracy.value,
        "accuracy_easy": result.easy.value,
        "accuracy_hard": result.hard.value,
        "n_unparsed": result.n_unparsed,
    }
    if name in totals:
        return totals[name]
    for field, labels in BQA_GROUPS.items():
        for label in labels:
            if name == f"error_rate_{field}_{metric_slug(label)}":
                breakdown = result.breakdown(field)
                group = None if breakdown is None else breakdown.groups.get(label)
                return None if group is None else group.rate.value
    raise KeyError(f"unknown BQA metric {name!r}; expected one of {bqa_metric_names()}")


# -- MarineLife-16K ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MarineLifeItems:
    data: SplitData
    position: dict[str, int]

    def record(self, question_id: str) -> dict[str, Any]:
        try:
            return self.data.rows[self.position[question_id]]
        except KeyError:
            raise KeyError(
                f"{self.data.source}: no question {question_id!r} in the {self.data.split} split"
            ) from None

    def video_row(self, question_id: str) -> dict[str, Any]:
        return self.data.videos[self.record(question_id)["id"]]

    def video(self, question_id: str) -> str:
        return video_file(self.data.video(self.record(question_id)["id"]))

    def records(self, mcq: bool) -> list[dict[str, Any]]:
        return [r for r in self.data.rows if (r["question_format"] == MULTIPLE_CHOICE) == mcq]


@lru_cache(maxsize=8)
def marinelife_items(location: str, split: str) -> MarineLifeItems:
    data = marinelife_data.open_split(location, split, check_videos=False)
    return MarineLifeItems(data, {row["question_id"]: i for i, row in enumerate(data.rows)})


def marinelife_prompt(record: Mapping[str, Any], frame_description: str = HARNESS_FRAMES) -> str:
    """The runner's prompt for one QA record (its own ``prompt`` field, after the frames)."""
    return load_prompt(PROMPT_NAME).render(frame_description=frame_description, prompt=record["prompt"])


def marinelife_line(items: MarineLifeItems, question_id: str, reply: str | None) -> dict[str, Any]:
    """The predictions line the runner writes for this reply."""
    return marinelife_record(items.record(question_id), items.video_row(question_id), reply)


#: MarineLife-16K multiple-choice numbers: accuracy (0-100, as ``metrics/marinelife_qa``) per dimension and overall.
MARINELIFE_MCQ_METRICS: tuple[str, ...] = (OVERALL, *ACCURACY_DIMENSIONS)


def marinelife_scores(lines: Sequence[Mapping[str, Any]]) -> MarineLifeAccuracy:
    return marinelife_accuracy(**marinelife_inputs(list(lines)))


def marinelife_judged(lines: Sequence[Mapping[str, Any]], client: Any) -> dict[str, JudgeResult]:
    """The judge's results per task (``oemu``, ``caption``) over open-ended lines, as ``vqabench
    marinelife judge`` computes them (same rubrics, cache and aggregation)."""
    return judge(list(lines), client)
