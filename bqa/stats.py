"""The statistics a BQA release reports about itself, as the paper does for its own release.

Per split: size, Easy/Hard counts and STEP4's reasons (Table 3), answer-group, answer-label and
demographic distributions (Figure 3), number of source films, the Self-BLEU of the questions (Table 2,
:func:`builders.scoring.self_bleu.self_bleu`; an export may switch it off, and the card then says it
was not computed), how the questions begin (A.4: mostly wh-words), and the clips' durations and frame
rates *measured from the clips* (the paper: 5-10 s, 25 fps). For the whole build: what STEP3 removed
and how STEP4 labelled what was kept (Figure 5), when the release records it.

:func:`format_stats` is the readable summary ``vqabench bqa stats`` prints (and the demo shows).
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bqa.features import SPLITS
from bqa.paper import published
from bqa.records import BQARecord
from bqa.vocabulary import DIFFICULTIES, DIFFICULTY_REASONS, EMOTIONS
from bqa.workfolder import ReleaseMeta
from builders.scoring.self_bleu import self_bleu as project_self_bleu

log = logging.getLogger(__name__)

DEMOGRAPHICS: tuple[str, ...] = ("gender", "age", "ethnicity")
TOTAL = "total"
#: The wh-words A.4 names ("What, Where, When, Who, Why, How, Which"), with Who's other forms.
WH_WORDS: tuple[str, ...] = ("What", "Where", "When", "Who", "Whom", "Whose", "Why", "How", "Which")
_FIRST_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


@dataclass(frozen=True)
class ClipStats:
    """Measured from the clips: frames counted by demuxing (the frames a full decode outputs), frame
    rate from their timestamps, duration = frames / rate."""

    n: int
    seconds: dict[str, float]  # min, median, mean, max
    fps: dict[str, int]  # measured rate (rounded to 0.01) -> clips
    frames: dict[str, float]  # min, median, max frames per clip
    histogram: dict[str, int] = field(default_factory=dict)  # duration bin -> clips (DURATION_BINS)


#: Duration bins of :attr:`ClipStats.histogram`, in seconds (the paper: 5-10 s; BoLD: about 5 s).
DURATION_BINS: tuple[tuple[float, float | None], ...] = ((0, 4), (4, 5), (5, 6), (6, 8), (8, 10), (10, None))


def duration_bin(lo: float, hi: float | None) -> str:
    return f"{lo:g}-{hi:g} s" if hi is not None else f"{lo:g} s or more"


@dataclass(frozen=True)
class SplitStats:
    size: int
    films: int
    difficulty: dict[str, int]
    answer_group: dict[str, int]
    answer: dict[str, int]
    gender: dict[str, int]
    age: dict[str, int]
    ethnicity: dict[str, int]
    self_bleu: float | None = None
    difficulty_reason: dict[str, int] = field(default_factory=dict)
    openings: dict[str, int] = field(default_factory=dict)  # first word of the question -> count
    wh_share: float | None = None  # share of questions that begin with a wh-word
    clips: ClipStats | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReleaseStats:
    """Statistics of each split and of the whole release (key ``"total"``, no Self-BLEU)."""

    splits: dict[str, SplitStats]
    self_bleu_note: str  # how Self-BLEU was computed, or why it was not
    shared_films: list[str]  # films with rows in more than one split (a split by film has none)
    pipeline: dict[str, Any] | None = None  # per step: in, kept, rejected by reason (Figure 5)

    def to_json(self) -> dict[str, Any]:
        return {
            "splits": {k: v.to_json() for k, v in self.splits.items()},
            "self_bleu_note": self.self_bleu_note,
            "shared_films": self.shared_films,
            "pipeline": self.pipeline,
        }


def _counts(values: Iterable[str], vocabulary: Sequence[str]) -> dict[str, int]:
    """Counts in vocabulary order, zeros included; values outside the vocabulary come last."""
    counter = Counter(values)
    out = {label: counter.pop(label, 0) for label in vocabulary}
    out.update(sorted(counter.items()))
    return out


def question_opening(question: str) -> str:
    """The first word of a question, capitalised (``"what's"`` -> ``What's``); ``""`` if none."""
    match = _FIRST_WORD.search(question)
    return match.group(0).capitalize() if match else ""


def is_wh(opening: str) -> bool:
    return re.split(r"['-]", opening)[0] in WH_WORDS


def measure_clip(path: Any) -> tuple[int, float]:
    """``(frames, fps)`` of one clip: the frames a full decode outputs (:class:`builders.video.index`),
    and the rate their timestamps give (frames - 1 intervals over the first-to-last span)."""
    from builders.video.sampler import ClipReader  # lazy: PyAV

    with ClipReader(path, threads=1) as reader:
        times = reader.index.timestamps()
    n = len(times)
    span = times[-1] - times[0] if n > 1 else 0.0
    return n, ((n - 1) / span if span > 0 else 0.0)


def clip_stats(measured: Sequence[tuple[int, float]]) -> ClipStats | None:
    """Durations and frame rates of clips measured by :func:`measure_clip` (one entry per record)."""
    if not measured:
        return None
    seconds = [n / fps for n, fps in measured if fps > 0]
    frames = [float(n) for n, _ in measured]
    rates = Counter(f"{fps:.2f}" for _, fps in measured)

    def summary(values: list[float], mean: bool = True) -> dict[str, float]:
        if not values:
            return {}
        out = {"min": min(values), "median": statistics.median(values), "max": max(values)}
        return {**out, "mean": statistics.fmean(values)} if mean else out

    histogram = {
        duration_bin(lo, hi): sum(lo <= d and (hi is None or d < hi) for d in seconds)
        for lo, hi in DURATION_BINS
    }
    return ClipStats(
        len(measured), summary(seconds), dict(sorted(rates.items())), summary(frames, mean=False), histogram
    )


def split_stats(
    records: Sequence[BQARecord],
    meta: ReleaseMeta,
    self_bleu: float | None = None,
    clips: Callable[[BQARecord], Any] | None = None,
) -> SplitStats:
    """``clips``: a record's clip, measured (:func:`measure_clip`; None: not measured)."""

    def labels(key: str) -> list[str]:
        return list(
            dict.fromkeys(meta.demographic_codes[key][c] for c in sorted(meta.demographic_codes[key]))
        )

    openings = Counter(question_opening(r.question) for r in records)
    return SplitStats(
        size=len(records),
        films=len({r.source.film_id for r in records}),
        difficulty=_counts((r.difficulty for r in records), DIFFICULTIES),
        answer_group=_counts((r.answer_group for r in records), meta.group_mapping.group_names),
        answer=_counts((r.answer for r in records), EMOTIONS),
        **{key: _counts((getattr(r, key) for r in records), labels(key)) for key in DEMOGRAPHICS},
        self_bleu=self_bleu,
        difficulty_reason=_counts((r.difficulty_reason for r in records), list(DIFFICULTY_REASONS)),
        openings=dict(openings.most_common()),
        wh_share=sum(n for word, n in openings.items() if is_wh(word)) / len(records) if records else None,
        clips=clip_stats([clips(r) for r in records]) if clips else None,
    )


def release_stats(
    splits: Mapping[str, Sequence[BQARecord]],
    meta: ReleaseMeta,
    *,
    self_bleu: bool | Callable[[list[str]], Any] = True,
    clips: Callable[[BQARecord], Any] | None = None,
) -> ReleaseStats:
    """Statistics of every split and of the total.

    ``self_bleu``: False, True (the project's scorer) or a function of the questions returning a
    float or an object with ``score`` (and ``signature``, recorded in the note). ``clips``: a
    record's clip file, to measure durations and frame rates (None: not measured).
    """
    measured = _measured_once(clips) if clips else None
    scorer: Callable[[list[str]], Any] | None
    if callable(self_bleu):
        scorer, note = self_bleu, "Self-BLEU-4 (custom scorer)"
    elif self_bleu:
        scorer = project_self_bleu
        note = "Texygen Self-BLEU-4, each question against all other questions of its split"
    else:
        scorer, note = None, "not computed (disabled for this export)"
    out = {}
    signatures = set()
    for name, records in splits.items():
        score = None
        if scorer is not None and len(records) > 1:
            log.info("Self-BLEU of %d %s questions", len(records), name)
            result: Any = scorer([r.question for r in records])  # a float or an object with .score
            score = float(getattr(result, "score", result))
            signature = getattr(result, "signature", None)
            if signature:  # the sentence count differs per split; the settings do not
                signatures.add("|".join(p for p in signature.split("|") if not p.startswith("n:")))
        out[name] = split_stats(records, meta, score, measured)
    if signatures:
        note += f" (signature {', '.join(sorted(signatures))})"
    out[TOTAL] = split_stats([r for records in splits.values() for r in records], meta, clips=measured)
    splits_of_film: dict[str, set[str]] = {}
    for name, records in splits.items():
        for r in records:
            splits_of_film.setdefault(r.source.film_id, set()).add(name)
    shared = sorted(film for film, names in splits_of_film.items() if len(names) > 1)
    pipeline = meta.extra.get("pipeline") if isinstance(meta.extra, Mapping) else None
    if pipeline is not None:
        check_pipeline(pipeline, out[TOTAL].size)
    return ReleaseStats(splits=out, self_bleu_note=note, shared_films=shared, pipeline=pipeline)


def check_pipeline(pipeline: Any, rows: int) -> None:
    """Figure 5's counts as the release's meta.json records them, checked before any share is drawn
    from them: every count a whole number, each step's kept + rejected = in, a step's in = the step
    before's kept, STEP4's labels and reasons each = its kept = the release's ``rows``. A ValueError
    names the field (a hand-edited or damaged meta.json once gave shares summing to 102.7%)."""
    where = "meta.json extra.pipeline"
    if not isinstance(pipeline, Mapping):
        raise ValueError(f"{where}: expected an object of steps, got {type(pipeline).__name__}")

    def count(value: Any, field: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{where}.{field}: expected a whole number of items, got {value!r}")
        return value

    previous = None
    for name, step in pipeline.items():
        if not isinstance(step, Mapping) or not isinstance(step.get("rejected", {}), Mapping):
            raise ValueError(f"{where}.{name}: expected {{in, kept, rejected}}, got {step!r}")
        n_in, kept = count(step.get("in"), f"{name}.in"), count(step.get("kept"), f"{name}.kept")
        rejected = sum(count(v, f"{name}.rejected.{k}") for k, v in step.get("rejected", {}).items())
        if kept + rejected != n_in:
            raise ValueError(f"{where}.{name}: kept {kept} + rejected {rejected} is not in {n_in}")
        if previous is not None and n_in != previous[1]:
            raise ValueError(f"{where}.{name}: in {n_in} is not {previous[0]}'s kept {previous[1]}")
        previous = (name, kept)
        for part in ("labels", "reasons"):
            if part in step:
                total = sum(count(v, f"{name}.{part}.{k}") for k, v in step[part].items())
                if total != kept:
                    raise ValueError(f"{where}.{name}.{part}: they add up to {total}, not its kept {kept}")
    if previous is not None and previous[1] != rows:
        raise ValueError(f"{where}.{previous[0]}: kept {previous[1]}, but the release has {rows} rows")


#: What only the build's work folder records: an exported or Hub copy has no statistics of it.
BUILD_ONLY = (
    "What STEP3 removed and how STEP4 labelled the items (Figure 5): not recorded here; only the work folder "
    "that built the release records it (bqa stats --data WORK_FOLDER)."
)


def stats_of_data(folder: str | Path, *, self_bleu: bool = True, clips: bool = True) -> ReleaseStats:
    """:func:`release_stats` of a work folder's release or of an exported / downloaded Hub-layout folder:
    the same numbers from either (the rows are the same records), except what only the build knows
    (:data:`BUILD_ONLY`: ``pipeline`` is None for a Hub folder). A Hub folder records no release
    settings: its rows' labels are counted against the default group mapping and demographic tables
    (labels outside them are listed after them). ``clips``: measure each clip (a Hub folder's embedded
    video bytes, or the file a row names inside the folder)."""
    from bqa.data import open_split  # lazy: the Hub reader
    from bqa.workfolder import meta_path, read_release
    from builders.hub.splits import NotAHubFolder, read_hub_folder

    folder = Path(folder)
    if meta_path(folder).is_file():
        release = read_release(folder, check_clips=clips)
        return release_stats(
            release.splits, release.meta, self_bleu=self_bleu, clips=release.clip_path if clips else None
        )
    try:
        hub = read_hub_folder(folder)
    except NotAHubFolder:
        raise FileNotFoundError(
            f"{folder}: neither a BQA work folder (no release/meta.json) nor a Hub-layout folder (no README.md card)"
        ) from None
    splits: dict[str, list[BQARecord]] = {}
    opened = {}
    for split in (s for s in SPLITS if s in hub.shards[hub.config_name(None)]):
        opened[split] = open_split(folder, split, check_clips=False)
        splits[split] = [BQARecord.from_json({**row, "clip": ""}) for row in opened[split].rows]
    where = {r.id: split for split, records in splits.items() for r in records}
    measure = (lambda r: opened[where[r.id]].video(r.id)) if clips else None
    return release_stats(splits, ReleaseMeta(), self_bleu=self_bleu, clips=measure)


def _measured_once(clips: Callable[[BQARecord], Any]) -> Callable[[BQARecord], tuple[int, float]]:
    """A record's clip measured, each distinct clip once: the splits' and the total's statistics share
    the measures (each clip was opened twice, once for its split and once for the total). A clip file
    is known by its path (rows that share it share one measure); a Hub row's video by its record."""
    measures: dict[object, tuple[int, float]] = {}

    def measured(record: BQARecord) -> tuple[int, float]:
        clip = clips(record)
        key = clip if isinstance(clip, (str, Path)) else ("record", record.id)
        if key not in measures:
            measures[key] = measure_clip(clip)
        return measures[key]

    return measured


# -- the readable summary ------------------------------------------------------------------------


def _share(n: int, total: int) -> str:
    return f"{n} ({100 * n / total:.1f}%)" if total else str(n)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in cells]  # fmt: skip
    return [lines[0], "  ".join("-" * w for w in widths), *lines[1:]]


def pipeline_shares(pipeline: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """Figure 5's bars: ``(what, items, out of)``: STEP3's removals by reason, STEP4's labels."""
    rows: list[tuple[str, int, int]] = []
    step3 = pipeline.get("filter") or {}
    for reason, n in (step3.get("rejected") or {}).items():
        rows.append((f"STEP3 removed: {reason}", n, step3["in"]))
    step4 = pipeline.get("difficulty") or {}
    if step4:
        for label, n in (step4.get("labels") or {}).items():
            rows.append((f"STEP4 {label}", n, step4["in"]))
        for reason, n in (step4.get("reasons") or {}).items():
            rows.append((f"STEP4 reason: {reason}", n, step4["in"]))
        for reason, n in (step4.get("rejected") or {}).items():
            rows.append((f"STEP4 rejected: {reason}", n, step4["in"]))
    return rows


def format_stats(stats: ReleaseStats) -> str:
    """A readable summary of a release's statistics (what ``vqabench bqa stats`` prints)."""
    columns = [s for s in (*SPLITS, TOTAL) if s in stats.splits]
    total = stats.splits[TOTAL]
    lines = ["Splits (Table 3):"]
    lines += _table(
        ["split", "rows", *DIFFICULTIES, *DIFFICULTY_REASONS, "films", "Self-BLEU-4"],
        [[s, stats.splits[s].size, *stats.splits[s].difficulty.values(),
          *(stats.splits[s].difficulty_reason.get(r, 0) for r in DIFFICULTY_REASONS), stats.splits[s].films,
          "-" if stats.splits[s].self_bleu is None else f"{stats.splits[s].self_bleu:.2f}"] for s in columns],
    )  # fmt: skip
    paper = " / ".join(f"{v['Score']:.2f}" for v in published().row_values("table2").values())
    lines.append(f"Self-BLEU: {stats.self_bleu_note}; the paper (Table 2): {paper}.")
    if total.clips:
        lines += ["", "Clips, measured (the paper: 5-10 s, 25 fps):"]
        rows = []
        for s in columns:
            c = stats.splits[s].clips
            if c and c.seconds:
                rates = ", ".join(f"{r} fps x{n}" for r, n in c.fps.items())
                rows.append([s, c.n, f"{c.seconds['min']:.2f}", f"{c.seconds['median']:.2f}",
                             f"{c.seconds['max']:.2f}", rates])  # fmt: skip
        lines += _table(["split", "clips", "min s", "median s", "max s", "frame rates"], rows)
    lines += ["", f"How questions begin (A.4): {total.wh_share:.1%} with a wh-word" if total.wh_share is not None
              else "", *_table(["first word", *columns], [[w, *(stats.splits[s].openings.get(w, 0) for s in columns)]
                                                          for w in list(total.openings)[:8]])]  # fmt: skip
    for key, title in (("answer_group", "Answer groups"), *((d, d.capitalize()) for d in DEMOGRAPHICS)):
        labels = list(getattr(total, key))
        lines += ["", f"{title} (Figure 3):"]
        lines += _table(
            [key, *columns],
            [[label, *(_share(getattr(stats.splits[s], key).get(label, 0), stats.splits[s].size) for s in columns)]
             for label in labels],
        )  # fmt: skip
    if stats.pipeline:
        lines += ["", "What the pipeline kept (Figure 5):"]
        lines += _table(["", "items", "share"], [[what, n, f"{100 * n / of:.1f}% of {of}" if of else "-"]
                                                 for what, n, of in pipeline_shares(stats.pipeline)])  # fmt: skip
    else:
        lines += ["", BUILD_ONLY]
    lines.append("")
    lines.append(
        "No source film has rows in two splits."
        if not stats.shared_films
        else f"{len(stats.shared_films)} source film(s) have rows in more than one split."
    )
    return "\n".join(lines)
