"""``human-study make``: draw a study from a split and write one static folder per rater."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from builders.files.folders import atomic_directory, check_replaceable
from builders.files.jsonio import copy_file_atomic, write_json_atomic, write_text_atomic
from builders.hub.checksums import sha256_file
from builders.human_study.draw import RANDOM, assign, draw_items, rater_order
from builders.human_study.page import render_page
from builders.human_study.rubric_page import page_rubric
from builders.human_study.source import Candidates, bqa_candidates, marinelife_candidates
from builders.human_study.study import (
    BQA,
    CLIPS_DIR,
    MARINELIFE,
    PAGE_FILE,
    RATERS_DIR,
    STUDY_FILE,
    STUDY_MARKER,
    Study,
    StudyItem,
    check_rater_ids,
    page_data,
)
from builders.video.remux import remove_audio

TITLES = {
    BQA: "BQA human study: how does the person feel?",
    MARINELIFE: "MarineLife-16K expert study: rate the answer",
}


def draw_study(
    candidates: Candidates,
    benchmark: str,
    data: str | os.PathLike[str],
    *,
    size: int,
    seed: int,
    raters: Sequence[str],
    ratings_per_item: int,
    model: str | None = None,
    predictions: str | os.PathLike[str] | None = None,
    draw: str = RANDOM,
    design: str | None = None,
) -> Study:
    """The study record: the draw (``random`` or ``stratified``), a balanced assignment and each
    rater's order; ``design`` names the design it follows (recorded)."""
    raters = check_rater_ids(raters)
    strata: dict[str, list[str]] = {}
    by_id = {}
    for c in candidates.items:
        if c.id in by_id:
            raise ValueError(
                f"{candidates.source}: item id {c.id} appears twice in the {candidates.split} split"
            )
        by_id[c.id] = c
        strata.setdefault(c.stratum, []).append(c.id)
    drawn = draw_items(strata, size, seed, draw)
    who = assign(drawn, raters, ratings_per_item)
    items = [StudyItem(i, by_id[i].stratum, by_id[i].shown, who[i]) for i in drawn]
    order = {r: rater_order([i for i in drawn if r in who[i]], r, seed) for r in raters}
    counts = {
        s: {"available": len(ids), "drawn": sum(by_id[i].stratum == s for i in drawn)}
        for s, ids in sorted(strata.items())
    }
    rubrics = {}
    if benchmark == MARINELIFE:
        rubrics = {name: page_rubric(name) for name in sorted({i.shown["rubric"] for i in items})}
    return Study(
        benchmark=benchmark,
        data=str(Path(data).resolve()),
        source=candidates.source,
        split=candidates.split,
        seed=seed,
        size=size,
        stratify_by="difficulty" if benchmark == BQA else "type",
        strata=counts,
        ratings_per_item=ratings_per_item,
        raters=list(raters),
        items=items,
        order=order,
        model=model,
        predictions={"path": str(Path(predictions).resolve()), "sha256": sha256_file(predictions)}
        if predictions
        else None,
        rubrics=rubrics,
        draw=draw,
        design=design,
    )


def make_study(
    benchmark: str,
    data: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    split: str = "test",
    size: int = 100,
    seed: int = 0,
    raters: Sequence[str] = ("r1", "r2", "r3"),
    ratings_per_item: int | None = None,
    predictions: str | os.PathLike[str] | None = None,
    model: str | None = None,
    types: tuple[str, ...] | None = None,
    draw: str = RANDOM,
    design: str | None = None,
) -> Study:
    """Draw the study and write ``out`` (replaced as a whole, atomically): the record and one
    self-contained folder per rater. ``ratings_per_item`` defaults to every rater rating every item
    (the BQA paper's three people on Rand100). ``draw``: ``random`` (both papers') or ``stratified``
    (:mod:`builders.human_study.draw`); ``design``: the name of the design followed, recorded
    (:mod:`builders.human_study.designs`)."""
    raters = check_rater_ids(raters)  # before any data is read
    inputs = {"the dataset": data, **({"the predictions file": predictions} if predictions else {})}
    legacy = (STUDY_FILE, RATERS_DIR)
    # and again when it is replaced: a folder that is not ours stays
    check_replaceable(out, marker=STUDY_MARKER, protect=inputs, legacy=legacy)
    if benchmark == BQA:
        if predictions is not None:
            raise ValueError(
                "a BQA study rates the questions themselves; --predictions is for MarineLife-16K"
            )
        candidates = bqa_candidates(data, split)
    elif benchmark == MARINELIFE:
        if predictions is None:
            raise ValueError("a MarineLife-16K study rates a model's answers: give --predictions FILE")
        candidates = marinelife_candidates(data, split, predictions, types=types)
        model = model or Path(predictions).stem
    else:
        raise ValueError(f"unknown benchmark {benchmark!r}; expected {BQA} or {MARINELIFE}")
    study = draw_study(
        candidates, benchmark, data, size=size, seed=seed, raters=raters,
        ratings_per_item=len(raters) if ratings_per_item is None else ratings_per_item,
        model=model, predictions=predictions, draw=draw, design=design,
    )  # fmt: skip
    by_id = {c.id: c for c in candidates.items}
    with atomic_directory(out, marker=STUDY_MARKER, protect=inputs, legacy=legacy) as tmp:
        staged: dict[str, Path] = {}  # clip key -> one audio-free copy, reused for every rater
        for rater in study.raters:
            folder = tmp / RATERS_DIR / rater
            clips = {}
            for item_id in study.assigned(rater):
                c = by_id[item_id]
                name = hashlib.sha256(c.clip_key.encode()).hexdigest()[:16] + ".mp4"
                target = folder / CLIPS_DIR / name
                target.parent.mkdir(parents=True, exist_ok=True)
                if c.clip_key not in staged:
                    staged[c.clip_key] = remove_audio(c.clip(), target)
                elif not target.exists():
                    copy_file_atomic(staged[c.clip_key], target)
                clips[item_id] = f"{CLIPS_DIR}/{name}"
            data_for_page = page_data(study, rater, clips)
            write_json_atomic(folder / STUDY_FILE, data_for_page)
            title = f"{TITLES[benchmark]} ({rater})"
            write_text_atomic(folder / PAGE_FILE, render_page(data_for_page, title))
        study.write(tmp)
    return study
