"""Named subsets of a split's videos: ``--videos FILE`` (ids, one a line) or ``--video-sample N --seed S``.

The MarineLife-16K paper scored its models on a small subset of the test videos (most cells of its
Table 3 are k/30, SM-l's k/17; see ``marinelife16k.paper.PAPER_NOTES``). ``--limit`` cannot say that: it takes the first
N *questions*, which cuts a video's questions in half. A subset is a set of *videos*; every command
that reads a split (the evaluation runners, ``marinelife judge``, ``report``) takes the same options
(:func:`add_subset_arguments`, for both benchmarks; a BQA item is one clip, its ``id``), keeps the
items of those videos and records the subset where results go: in every predictions line and judge
result (:meth:`VideoSubset.provenance`: size, hash, how it was chosen), in a report's ``metrics.json``
(:meth:`VideoSubset.record`: the same with the ids) and in ``.eval_results`` notes
(:func:`notes_text`). Results made on different subsets are refused side by side unless
``--allow-mixed`` (:func:`subset_key` is what is compared).

A subset is its ids: :attr:`VideoSubset.sha256` hashes the sorted ids, so a file and a sample that
pick the same videos are the same subset, and ``--video-sample N --seed S`` draws the same videos on
any machine (``random.Random`` with a string seed over the sorted ids is stable across Python versions).

Argparse-level imports only.
"""

from __future__ import annotations

import argparse
import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.files.arguments import existing_file
from builders.files.jsonio import read_text
from builders.options.numbers import POSITIVE_INT

#: What a run records when it used every video of its split.
ALL = "all"
#: Where runs record their subset (predictions lines' ``provenance``, judge results, reports).
FIELD = "videos"
_PREVIEW = 8


def _preview(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_PREVIEW])
    return f"[{shown}]" + (f" and {len(ids) - _PREVIEW} more" if len(ids) > _PREVIEW else "")


@dataclass(frozen=True)
class VideoSubset:
    """The videos chosen from a split, and how they were chosen."""

    ids: tuple[str, ...]  # sorted
    of: int | None  # videos in the split (None: not known, e.g. judging a file without --data)
    split: str | None
    file: str | None = None  # --videos FILE (its name)
    sample: int | None = None  # --video-sample N
    seed: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256("\n".join(self.ids).encode("utf-8")).hexdigest()

    def how(self) -> dict[str, Any]:
        return {"file": self.file} if self.file is not None else {"sample": self.sample, "seed": self.seed}

    def provenance(self) -> dict[str, Any]:
        """What every result line records: size, split size, hash and how it was chosen (no ids)."""
        return {"n": len(self.ids), "of": self.of, "sha256": self.sha256, **self.how()}

    def record(self) -> dict[str, Any]:
        """What a report records: :meth:`provenance` and the ids themselves."""
        return {**self.provenance(), "ids": list(self.ids)}

    @property
    def label(self) -> str:
        return describe(self.provenance(), self.split)


def subset_key(value: Any) -> str | None:
    """What must be equal for two results to sit side by side: ``"all"`` or the subset's hash (None:
    not recorded, or not a subset record)."""
    if value == ALL:
        return ALL
    if isinstance(value, Mapping) and isinstance(value.get("sha256"), str):
        return value["sha256"]
    return None


def describe(value: Any, split: str | None = None) -> str:
    """A recorded subset in words: ``all videos`` or ``3 of 6 test videos (ids from f.txt; sha256 1a2b...)``."""
    if value == ALL:
        return "all videos"
    if not isinstance(value, Mapping):
        return str(value)
    of = f" of {value['of']}" if value.get("of") is not None else ""
    how = (
        f"ids from {value['file']}"
        if value.get("file")
        else f"--video-sample {value.get('sample')} --seed {value.get('seed')}"
    )
    where = f" {split}" if split else ""
    return f"{value.get('n')}{of}{where} videos ({how}; sha256 {str(value.get('sha256', ''))[:12]})"


def notes_text(value: Any) -> str:
    """A recorded subset as one ``.eval_results`` notes value (no ``;``): ``all`` or
    ``3/6,sha256:<12 hex>,file:f.txt`` / ``30/500,sha256:<12 hex>,sample:30,seed:0``."""
    if value == ALL or not isinstance(value, Mapping):
        return str(value)
    parts = [f"{value.get('n')}/{value.get('of') if value.get('of') is not None else '?'}"]
    parts.append(f"sha256:{str(value.get('sha256', ''))[:12]}")
    if value.get("file"):
        parts.append(f"file:{value['file']}")
    else:
        parts += [f"sample:{value.get('sample')}", f"seed:{value.get('seed')}"]
    return ",".join(p.replace(";", ",") for p in parts)


def notes_key(text: str | None) -> str | None:
    """:func:`subset_key` of a notes value written by :func:`notes_text` (``all`` or the short hash)."""
    if not text:
        return None
    if text.strip() == ALL:
        return ALL
    for part in text.split(","):
        if part.strip().startswith("sha256:"):
            return part.strip()[len("sha256:") :]
    return None


@dataclass(frozen=True)
class VideoSelection:
    """What was asked for: ids from a file, or N videos drawn with a seed."""

    file: Path | None = None
    sample: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if (self.file is None) == (self.sample is None):
            raise ValueError("a video subset is either --videos FILE or --video-sample N, exactly one")
        if self.sample is not None and (isinstance(self.sample, bool) or self.sample < 1):
            raise ValueError(f"--video-sample must be a positive number of videos, got {self.sample}")

    def file_ids(self) -> list[str]:
        """The ids of ``--videos FILE``: one a line; blank lines and ``#`` comments skipped."""
        assert self.file is not None
        if not Path(self.file).is_file():
            raise FileNotFoundError(f"--videos {self.file}: no such file")
        ids: list[str] = []
        seen: dict[str, int] = {}
        for number, line in enumerate(read_text(self.file).splitlines(), start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if text in seen:
                raise ValueError(
                    f"--videos {self.file}, line {number}: video {text!r} is already at line {seen[text]}"
                )
            seen[text] = number
            ids.append(text)
        if not ids:
            raise ValueError(f"--videos {self.file}: no video ids (one a line)")
        return ids

    def choose(self, available: Sequence[str] | None, *, split: str | None, source: str) -> VideoSubset:
        """The subset of ``available`` (the split's video ids; None when not known: then only
        ``--videos`` works, unchecked). Unknown ids are a ValueError naming them and the split."""
        if self.file is not None:
            ids = self.file_ids()
            if available is not None:
                known = set(available)
                unknown = [i for i in ids if i not in known]
                if unknown:
                    raise ValueError(
                        f"--videos {self.file}: {len(unknown)} id(s) are not videos of the {split} split of "
                        f"{source}: {_preview(unknown)}; its videos are ids like {_preview(sorted(known)[:3])}"
                    )
            return VideoSubset(
                tuple(sorted(ids)),
                len(set(available)) if available is not None else None,
                split,
                file=Path(self.file).name,
            )
        if available is None:
            raise ValueError("--video-sample draws from the split's videos: give --data (and --split)")
        pool = sorted(set(available))
        assert self.sample is not None
        if self.sample > len(pool):
            raise ValueError(
                f"--video-sample {self.sample}: the {split} split of {source} has only {len(pool)} videos"
            )
        drawn = random.Random(f"vqabench:video-sample:{self.seed}").sample(pool, self.sample)
        return VideoSubset(tuple(sorted(drawn)), len(pool), split, sample=self.sample, seed=self.seed)


def add_subset_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, unit: str = "videos"
) -> None:
    """``--videos FILE`` | ``--video-sample N`` (``--seed S``): a named subset of the split's videos."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--videos",
        type=existing_file,
        metavar="FILE",
        help=f"only these {unit} of the split: a text file of ids, one a line (MarineLife-16K: the videos' "
        "id, e.g. MVK--mvk-0103; BQA: the item id); recorded with the results, which are then not laid "
        "beside results on other videos unless --allow-mixed",
    )
    group.add_argument(
        "--video-sample",
        type=POSITIVE_INT,
        metavar="N",
        help=f"only N {unit} of the split, drawn at random with --seed (the same N and seed draw the same "
        "videos anywhere); recorded like --videos",
    )
    parser.add_argument(
        "--seed", type=int, default=None, metavar="S", help="seed of --video-sample (default 0)"
    )


def selection_from_args(args: argparse.Namespace) -> VideoSelection | None:
    """The :class:`VideoSelection` of :func:`add_subset_arguments` (None: the whole split)."""
    file, sample, seed = (
        getattr(args, "videos", None),
        getattr(args, "video_sample", None),
        getattr(args, "seed", None),
    )
    if file is None and sample is None:
        if seed is not None:
            raise ValueError("--seed is the seed of --video-sample N; give --video-sample too")
        return None
    if file is not None and seed is not None:
        raise ValueError("--seed goes with --video-sample, not with --videos FILE")
    return VideoSelection(file=file, sample=sample, seed=0 if seed is None else seed)


def filter_by_video(items: Sequence[Any], video_of: Any, subset: VideoSubset | None) -> list[Any]:
    """The ``items`` whose video (``video_of(item)``) is in ``subset`` (all of them when None)."""
    if subset is None:
        return list(items)
    chosen = set(subset.ids)
    return [item for item in items if video_of(item) in chosen]


def recorded(subset: VideoSubset | None) -> Any:
    """What a result records about its videos: the subset's provenance, or ``"all"``."""
    return subset.provenance() if subset is not None else ALL
