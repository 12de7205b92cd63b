"""The statistics a MarineLife-16K release reports about itself, as the paper does for its own.

The paper's Table 1 row (hours of video, sentences per caption, caption length, video-text pairs),
its "Statistics" paragraph (questions, multiple-choice and open-ended) and Figure 5 (frequencies of
the object instances, objects 1 to 4, and of the fine-grained attributes), computed from a release's
files: the durations are measured from the clips themselves (:func:`clip_seconds`), never taken from
a header or the paper. Every count is per split and in total. :data:`PAPER` holds the paper's own
figures and :data:`PAPER_NOTES` the places where they disagree with the paper's own rules
(:mod:`marinelife16k.paper`), so a card and ``vqabench marinelife stats`` can show both.

Definitions (the paper gives none): a caption's length is its whitespace-separated words (the unit
of the caption rule "fewer than 80 words"); its sentences end at ``.``, ``!`` or ``?`` followed by
white space and a capital letter or digit, or by the end of the caption. Attribute values are
counted case- and space-insensitively (``"Clear "`` and ``"clear"`` are one value).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import median
from typing import Any

from builders.video.sampler import ClipReader
from builders.video.source import SourceLike
from marinelife16k.paper import PAPER, PAPER_NOTES
from marinelife16k.splits import SPLITS
from marinelife16k.vocabulary import (
    CAMERA_KINDS,
    COLLECTIONS,
    DIMENSION_OF_TYPE,
    MULTIPLE_CHOICE,
    QUESTION_TYPES,
    SECONDARY_OBJECTS,
)

TOTAL = "total"
#: Object instance slots as Figure 5 names them (object 1 is the central object).
OBJECT_SLOTS: dict[str, str] = {
    "object 1": "central_object",
    "object 2": SECONDARY_OBJECTS[0],
    "object 3": SECONDARY_OBJECTS[1],
    "object 4": SECONDARY_OBJECTS[2],
}
#: The fine-grained attributes whose value frequencies Figure 5 shows (objects have their own).
FINE_GRAINED: tuple[str, ...] = (
    "texture", "color", "size_shape", "environment", "lighting", "video_clarity", "movement_behavior",
    "camera_position", "camera_angle",
)  # fmt: skip
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def clip_seconds(source: SourceLike) -> float:
    """A clip's duration in seconds, measured from its frames: the presentation time of the last frame
    plus one frame interval (the median gap between frames; a one-frame clip counts 0 s). The
    packets are demuxed, not decoded (a damaged or timestamp-less file is decoded to count)."""
    with ClipReader(source, threads=1) as reader:
        times = reader.index.times()
    if len(times) < 2:
        return 0.0
    gaps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
    step = median(gaps) if gaps else Fraction(0)
    return float(times[-1] - times[0] + step)


def clip_durations(sources: Mapping[str, SourceLike]) -> dict[str, float]:
    """:func:`clip_seconds` of every video (id -> source); an unreadable clip is a ValueError naming it."""
    out = {}
    for video_id, source in sources.items():
        try:
            out[video_id] = clip_seconds(source)
        except Exception as err:  # a clip that cannot be read: name it, never count it as 0 s
            raise ValueError(f"video {video_id}: cannot measure its duration: {err}") from None
    return out


def sentence_count(caption: str) -> int:
    """Sentences in a caption (see the module doc); 0 for an empty caption."""
    return sum(bool(part.strip()) for part in _SENTENCE_BREAK.split(caption.strip()))


def word_count(caption: str) -> int:
    """Whitespace-separated words: the unit of the caption rule (fewer than 80 words)."""
    return len(caption.split())


def _value(text: Any) -> str:
    return " ".join(str(text or "").split()).casefold()


def _counts(values: Iterable[Any]) -> dict[str, int]:
    """Value -> count, most frequent first (ties by value); empty values left out."""
    counter = Counter(v for v in map(_value, values) if v)
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _summary(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": sum(values) / len(values), "min": min(values), "max": max(values)}


def _part(
    videos: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    durations: Mapping[str, float] | None,
) -> dict[str, Any]:
    captions = [str(v.get("caption") or "") for v in videos]
    captioned = [c for c in captions if c.strip()]
    sentences = [sentence_count(c) for c in captioned]
    words = [word_count(c) for c in captioned]
    seconds = [durations[v["id"]] for v in videos if durations and v["id"] in durations]
    types = Counter(r["type"] for r in records)
    mcq = sum(n for t, n in types.items() if QUESTION_TYPES[t].question_format == MULTIPLE_CHOICE)
    return {
        "videos": len(videos),
        "video_text_pairs": len(captioned),
        "hours": sum(seconds) / 3600 if durations is not None else None,
        "videos_measured": len(seconds) if durations is not None else 0,
        "seconds": _summary(seconds),
        "sentences_per_caption": {
            **_summary(sentences),
            "distribution": dict(sorted(Counter(sentences).items())),
        },
        "caption_words": {**_summary(words), "distribution": dict(sorted(Counter(words).items()))},
        "questions": len(records),
        "multiple_choice": mcq,
        "open_ended": len(records) - mcq,
        "per_type": {t: types[t] for t in QUESTION_TYPES},
        "per_dimension": {
            d: sum(types[t] for t in QUESTION_TYPES if DIMENSION_OF_TYPE[t] == d)
            for d in dict.fromkeys(DIMENSION_OF_TYPE.values())
        },
        "camera_kind": _tally(videos, "camera_kind", CAMERA_KINDS),
        "collection": _tally(videos, "collection", COLLECTIONS),
    }


def _tally(videos: Sequence[Mapping[str, Any]], field: str, known: Sequence[str]) -> dict[str, int]:
    """Videos per value of ``field``, in ``known``'s order; a value outside ``known`` is an error naming
    the video (counted nowhere, it would leave the table short of a video without a word)."""
    for v in videos:
        if v.get(field) not in known:
            raise ValueError(
                f"video {v.get('id', v.get('video_id'))!r}: {field} {v.get(field)!r} is not one of {list(known)}"
            )
    return {k: sum(v.get(field) == k for v in videos) for k in known}


def release_stats(
    videos: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    *,
    durations: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Every statistic of a release (JSON): ``splits`` (each split's and the ``total``'s counts),
    ``objects`` (per slot, object 1-4: value -> videos), ``objects_per_video`` (how many videos have
    1, 2, 3, 4 objects), ``attributes`` (per fine-grained attribute: value -> videos),
    ``central_object_motion`` (videos asked type 7; not asked because ``movement_behavior`` is empty, or
    because the QA generation found it is not about the central object), ``paper`` and ``paper_notes``.

    ``videos``: video rows with ``split``; ``records``: their QA records; ``durations``: video id ->
    seconds (:func:`clip_durations`; None: hours not measured).
    """
    split_of = {v["id"]: v["split"] for v in videos}
    present = list(dict.fromkeys(v["split"] for v in videos))
    names = [s for s in SPLITS if s in present] + [s for s in present if s not in SPLITS]
    parts = {
        name: _part(
            [v for v in videos if v["split"] == name],
            [r for r in records if split_of.get(r["id"]) == name],
            durations,
        )
        for name in names
    }
    parts[TOTAL] = _part(videos, records, durations)
    objects = Counter(sum(bool(_value(v.get(a))) for a in OBJECT_SLOTS.values()) for v in videos)
    asked = {r["id"] for r in records if r["type"] == "central_object_motion"}
    return {
        "splits": parts,
        "objects": {
            slot: _counts(v.get(attribute) for v in videos) for slot, attribute in OBJECT_SLOTS.items()
        },
        "objects_per_video": {k: objects[k] for k in range(1, len(OBJECT_SLOTS) + 1)},
        "attributes": {name: _counts(v.get(name) for v in videos) for name in FINE_GRAINED},
        "central_object_motion": {
            "asked": len(asked),
            "movement_behavior_empty": sum(not _value(v.get("movement_behavior")) for v in videos),
            "not_about_the_central_object": sum(
                bool(_value(v.get("movement_behavior"))) and v["id"] not in asked for v in videos
            ),
        },
        "paper": PAPER,
        "paper_notes": list(PAPER_NOTES),
    }


# --- the statistics as tables (the card and ``vqabench marinelife stats`` render the same ones) ---------
@dataclass(frozen=True)
class StatTable:
    title: str
    header: list[str]
    rows: list[list[Any]]
    note: str = ""


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _hours(part: Mapping[str, Any]) -> str:
    if part["hours"] is None:
        return "not measured"
    seconds = part["seconds"]
    return (
        f"{part['hours']:.3f} ({part['videos_measured']} clips; mean {_num(seconds['mean'], 1)} s, "
        f"{_num(seconds['min'], 1)}-{_num(seconds['max'], 1)} s)"
    )


def stat_tables(stats: Mapping[str, Any], top: int = 10) -> list[StatTable]:
    """The statistics of :func:`release_stats` as titled tables, in reading order: the paper's Table 1
    row beside this release's, the splits, questions per type and dimension, caption lengths, type 7,
    the object instances (objects 1-4) and the fine-grained attributes (``top`` values each)."""
    total, paper, parts = stats["splits"][TOTAL], stats["paper"], stats["splits"]
    splits = [name for name in parts if name != TOTAL]
    sentences, words = total["sentences_per_caption"], total["caption_words"]
    table1 = StatTable(
        "The paper's Table 1 row and statistics, and this release",
        ["", "this release", "the paper (full release)"],
        [
            ["hours of video (measured from the clips)", _hours(total), paper["hours"]],
            ["videos", total["videos"], f"{paper['videos']:,}"],
            ["video-text pairs", total["video_text_pairs"], f"{paper['video_text_pairs']:,}"],
            ["sentences per caption (mean)", _num(sentences["mean"]), paper["sentences_per_caption"]],
            [
                "caption length in words (mean)",
                f"{_num(words['mean'], 1)} (min {words['min']}, max {words['max']})",
                paper["caption_words"],
            ],
            ["questions", total["questions"], f"{paper['questions']:,}"],
            ["multiple-choice", total["multiple_choice"], f"{paper['multiple_choice']:,}"],
            ["open-ended", total["open_ended"], f"{paper['open_ended']:,}"],
            *[[f"videos in {s}", parts[s]["videos"], f"{paper['splits'].get(s, '–'):,}"] for s in splits],
        ],
        "Sentences end at . ! or ? before a capital letter or digit; words are whitespace-separated.",
    )
    per_split = StatTable(
        "Per split",
        ["split", "videos", "video-text pairs", "hours", "questions", "multiple-choice", "open-ended",
         *(f"{k} camera" for k in CAMERA_KINDS), *COLLECTIONS],
        [
            [name, p["videos"], p["video_text_pairs"], _num(p["hours"], 3), p["questions"], p["multiple_choice"],
             p["open_ended"], *(p["camera_kind"][k] for k in CAMERA_KINDS), *(p["collection"][c] for c in COLLECTIONS)]
            for name, p in parts.items()
        ],
    )  # fmt: skip
    types = StatTable(
        "Questions per type and dimension",
        ["type", "dimension", "format", *parts],
        [
            [t, q.dimension, q.question_format, *(parts[s]["per_type"][t] for s in parts)]
            for t, q in QUESTION_TYPES.items()
        ],
    )
    captions = StatTable(
        "Captions: sentences and words",
        ["", "mean", "min", "max", "distribution (value: captions)"],
        [
            ["sentences per caption", _num(sentences["mean"]), sentences["min"], sentences["max"],
             ", ".join(f"{k}: {n}" for k, n in sentences["distribution"].items())],
            ["words per caption", _num(words["mean"], 1), words["min"], words["max"],
             ", ".join(f"{lo}-{lo + 9}: {n}" for lo, n in _binned(words["distribution"]).items())],
        ],
    )  # fmt: skip
    motion = stats["central_object_motion"]
    obk = StatTable(
        "Type 7 (central_object_motion, OBK): videos",
        [
            "asked",
            "not asked: movement_behavior empty",
            "not asked: movement_behavior not about the central object",
        ],
        [[motion["asked"], motion["movement_behavior_empty"], motion["not_about_the_central_object"]]],
        "The paper asks type 7 only if movement_behavior describes the movement or state of the central object.",
    )
    objects = stats["objects"]
    object_rows = [[rank + 1, *(_nth(objects[slot], rank) for slot in objects)] for rank in range(top)]
    object_rows = [row for row in object_rows if any(cell != "" for cell in row[1:])]
    per_video = ", ".join(
        f"{k} object{'s' if k > 1 else ''}: {n}" for k, n in stats["objects_per_video"].items()
    )
    instances = StatTable(
        "Object instances (objects 1-4; Figure 5)", ["rank", *objects], object_rows,
        f"Videos by number of objects: {per_video}. Object 1 is the central object; cells are value (videos).",
    )  # fmt: skip
    attributes = stats["attributes"]
    attribute_rows = [
        [name, len(values), "; ".join(f"{v} ({n})" for v, n in list(values.items())[:top])]
        for name, values in attributes.items()
    ]
    fine = StatTable(
        "Fine-grained attribute values (Figure 5)", ["attribute", "distinct values", f"most frequent (videos), top {top}"],
        attribute_rows,
    )  # fmt: skip
    return [table1, per_split, types, captions, obk, instances, fine]


def _nth(counts: Mapping[str, int], rank: int) -> str:
    items = list(counts.items())
    return f"{items[rank][0]} ({items[rank][1]})" if rank < len(items) else ""


def _binned(distribution: Mapping[int, int], width: int = 10) -> dict[int, int]:
    out: dict[int, int] = {}
    for value, n in sorted(distribution.items()):
        low = (int(value) // width) * width
        out[low] = out.get(low, 0) + n
    return out
