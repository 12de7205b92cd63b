"""The BQA build: BoLD rows -> STEP1..STEP4 -> split -> a work folder's release, resumably.

Steps, in order (each writes ``<work>/steps/<step>.jsonl`` and ``<step>.rejects.jsonl`` when done):

``candidates`` (STEP1) -> ``clips`` (audio removed) -> ``questions`` (STEP2, LLM) -> ``filter``
(STEP3, rules then LLM) -> ``difficulty`` (STEP4, LLM) -> ``split`` (6:2:2 by film, written as the
release with :func:`bqa.workfolder.write_release`).

A killed build restarted with the same options ends with the same files: finished items are
never redone, and replies that validated come from the LLM cache. ``<work>/build.json`` records
the options that shape the records (source, limit, seed, frames, group mapping, codes) and the
LLM identity (model, endpoint, sampling); a rerun with different ones is refused rather than mixing
two builds in one folder. ``<work>/summary.json`` holds the last run's
:class:`builders.runs.summary.BuildSummary` (with :class:`BQABuildDetails`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bqa.bold import ANNOTATIONS_DIR, BOLD_FILES, read_bold
from bqa.candidates import Candidates
from bqa.features import SPLITS
from bqa.records import BoLDAnnotation, BQARecord, Provenance, StepProvenance
from bqa.sample import sample_root
from bqa.vocabulary import (
    DEFAULT_DEMOGRAPHIC_CODES,
    DEFAULT_GROUP_MAPPING,
    DIFFICULTIES,
    DIFFICULTY_REASONS,
    GroupMapping,
)
from bqa.workfolder import ReleaseMeta, make_record, meta_path, read_release, write_release
from builders.files.jsonio import write_json_atomic
from builders.files.text import plural
from builders.llm import LLMClient, UsageSummary
from builders.llm.prompts import prompt_overrides
from builders.pipelines.bqa.prepare import CANDIDATES, CLIPS, run_candidates, run_clips
from builders.pipelines.bqa.split import SPLIT_RULE, split_release
from builders.pipelines.bqa.step2_questions import run_questions
from builders.pipelines.bqa.step3_filter import run_filter
from builders.pipelines.bqa.step4_difficulty import HARD, STEP4_UNPARSED, UNANSWERED, run_difficulty
from builders.runs.frames import FrameImages, Images, frames_dir
from builders.runs.lock import locks_work_folder
from builders.runs.steps import StepRecords, bind_work_folder
from builders.runs.summary import BuildSummary, step_summaries
from builders.video.frame_spec import FrameSpec

log = logging.getLogger(__name__)

QUESTIONS, FILTER, DIFFICULTY, SPLIT = "questions", "filter", "difficulty", "split"
STEPS: tuple[str, ...] = (CANDIDATES, CLIPS, QUESTIONS, FILTER, DIFFICULTY, SPLIT)
LLM_STEPS: frozenset[str] = frozenset({QUESTIONS, FILTER, DIFFICULTY})
RECORD_STEPS: tuple[str, ...] = STEPS[:-1]  # the split writes the release, not step records
CONFIG_FILE, SUMMARY_FILE = "build.json", "summary.json"


@dataclass(frozen=True)
class BuildOptions:
    """What shapes the records of a build (all of it is checked against ``<work>/build.json``)."""

    bold_root: Path
    limit: int | None = None  # the first N BoLD rows (train.csv, then val.csv)
    seed: int = 0  # STEP1 draws and the split
    frames: FrameSpec = field(default_factory=FrameSpec)
    skip_missing: bool = False
    group_mapping: GroupMapping = DEFAULT_GROUP_MAPPING
    demographic_codes: Mapping[str, Mapping[int, str]] = field(
        default_factory=lambda: DEFAULT_DEMOGRAPHIC_CODES
    )
    step4_unanswered: str = HARD  # a STEP4 reply naming no choice, or two: Hard (the paper) or drop (old)
    preset: Mapping[str, Any] | None = None  # what --preset set (recorded in build.json and the release)
    # How the run goes; these do not change the records.
    ahead: int | None = None
    reject_llm_failures: bool = False
    source_note: str = "BoLD"  # the release's "source", shown in the card
    accept_changed_source: bool = False  # resume although the BoLD CSVs changed (records made stay)

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if self.step4_unanswered not in UNANSWERED:
            raise ValueError(
                f"step4_unanswered must be one of {list(UNANSWERED)}, got {self.step4_unanswered!r}"
            )

    def identity(self) -> dict[str, Any]:
        # Settings added after releases were built enter the identity only when not the default, so a
        # folder built before them resumes as it was.
        later = {"step4_unanswered": self.step4_unanswered} if self.step4_unanswered != HARD else {}
        return _plain(
            {
                "bold_root": str(Path(self.bold_root).resolve()),
                "limit": self.limit,
                "seed": self.seed,
                "frames": self.frames.to_json(),
                "skip_missing": self.skip_missing,
                "group_mapping": self.group_mapping.to_dict(),
                "demographic_codes": {
                    k: {str(c): v for c, v in t.items()} for k, t in self.demographic_codes.items()
                },
                **later,
                **({"preset": dict(self.preset)} if self.preset else {}),
            }
        )


SAMPLE_REASON = "built from the bundled synthetic BoLD-format sample (bqa/sample), not from BoLD"
CHANGED_SOURCE_HINT = (
    "the BoLD annotation files changed since this folder was built (edited scores or added rows leave "
    "stale records here): start over in a new work folder (pass --llm-cache with this folder's cache so "
    "the unchanged rows' replies are reused), or pass --accept-changed-source to resume over them anyway"
)


def source_fingerprint(bold_root: str | Path) -> dict[str, str]:
    """sha256 of each BoLD annotation file, so a rerun over edited CSVs is noticed, not ignored."""
    folder = Path(bold_root) / ANNOTATIONS_DIR
    return {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
        for name in BOLD_FILES.values()
        if (folder / name).is_file()
    }


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


@dataclass(frozen=True)
class BQABuildDetails:
    """BQA's own part of its :class:`~builders.runs.summary.BuildSummary`."""

    missing_clips: list[str]  # rows left out by skip_missing: "file, line, column 1 (video): ..."
    # Easy/Hard of the labelled items, plus "unparsed" (rejected with --step4-unanswered drop)
    difficulty: dict[str, int] = field(default_factory=dict)
    # STEP4's reasons: right_choice, wrong_choice, no_answer, ambiguous
    difficulty_reasons: dict[str, int] = field(default_factory=dict)

    def note(self) -> str:
        if not self.missing_clips:
            return ""
        return f" ({len(self.missing_clips)} left out, clip missing; first: {self.missing_clips[0]})"

    def lines(self) -> list[str]:
        lines = []
        if self.difficulty:
            lines.append("difficulty: " + ", ".join(f"{k} {v}" for k, v in self.difficulty.items()))
        if self.difficulty_reasons:
            lines.append(
                "STEP4 reasons: " + ", ".join(f"{k} {v}" for k, v in self.difficulty_reasons.items())
            )
        return lines

    def split_note(self, counts: Mapping[str, int]) -> str:
        return f"{counts['Easy']} Easy / {counts['Hard']} Hard, {plural(counts['films'], 'film')}"

    def to_json(self) -> dict[str, Any]:
        return {
            "missing_clips": self.missing_clips,
            "difficulty": self.difficulty,
            "difficulty_reasons": self.difficulty_reasons,
        }


def _kept(work_dir: Path, step: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in StepRecords(work_dir, step).kept()}


def _provenance(record: Mapping[str, Any]) -> StepProvenance:
    return StepProvenance(record["model"], record["prompt"], record["prompt_version"])


def release_records(work_dir: Path, rows: Mapping[str, BoLDAnnotation]) -> list[BQARecord]:
    """The final rows, from the step records of a work folder (in BoLD order)."""
    candidates = _kept(work_dir, CANDIDATES)
    questions = _kept(work_dir, QUESTIONS)
    filtered = _kept(work_dir, FILTER)
    records = []
    for item in StepRecords(work_dir, DIFFICULTY).kept():
        i = item["id"]
        if i not in rows:
            raise ValueError(f"{work_dir}: step records name {i}, which is not among the BoLD rows read")
        c = candidates[i]
        cands = Candidates(c["answer"], c["answer_group"], tuple(c["choices"]), tuple(c["choice_groups"]))
        provenance = Provenance(
            question=_provenance(questions[i]), filter=_provenance(filtered[i]), difficulty=_provenance(item)
        )
        records.append(
            make_record(
                rows[i], cands, question=filtered[i]["question"], difficulty=item["difficulty"],
                difficulty_reason=item["difficulty_reason"], provenance=provenance,
                extra={"step4_answer": item["parsed"]},
            )
        )  # fmt: skip
    return records


def _items(work_dir: Path, step: str) -> list[dict[str, Any]]:
    """The input items of an LLM step, joined from the records of the steps before it."""
    candidates = _kept(work_dir, CANDIDATES)
    clips = _kept(work_dir, CLIPS)
    if step == QUESTIONS:
        return [{"id": i, "clip": r["clip"], "choices": candidates[i]["choices"]} for i, r in clips.items()]
    source = QUESTIONS if step == FILTER else FILTER
    return [
        {
            "id": i,
            "clip": clips[i]["clip"],
            "question": r["question"],
            "choices": candidates[i]["choices"],
            "answer": candidates[i]["answer"],
        }
        for i, r in _kept(work_dir, source).items()
    ]


def _normalise_steps(steps: Iterable[str]) -> list[str]:
    wanted = list(dict.fromkeys(steps))
    unknown = [s for s in wanted if s not in STEPS]
    if unknown or not wanted:
        raise ValueError(f"unknown step(s) {unknown}; choose from {', '.join(STEPS)}")
    return [s for s in STEPS if s in wanted]


@locks_work_folder
def build(
    work_dir: str | Path,
    options: BuildOptions,
    client: LLMClient | None = None,
    steps: Iterable[str] = STEPS,
    images_of: Images | None = None,
) -> BuildSummary[BQABuildDetails]:
    """Run ``steps`` (all by default) of the build in ``work_dir``; stops after a step whose LLM calls
    failed (its items stay pending; see
    :attr:`builders.runs.summary.BuildSummary.failed`). ``images_of``: how STEP2 and
    STEP4 get frames (default: decoded once into ``<work>/frames``, removed when STEP4 is done)."""
    work_dir = Path(work_dir)
    todo = _normalise_steps(steps)
    needs_llm = LLM_STEPS.intersection(todo)
    if needs_llm and client is None:
        raise ValueError(f"steps {sorted(needs_llm)} need an LLM client")
    for step in todo:
        previous = STEPS[STEPS.index(step) - 1] if step != STEPS[0] else None
        # <work>/steps/<step>.jsonl marks a finished step (builders.runs.steps); checked without creating folders.
        if previous and previous not in todo and not (work_dir / "steps" / f"{previous}.jsonl").is_file():
            raise ValueError(
                f"step {step!r} needs step {previous!r} finished first in {work_dir}; "
                "add it to the steps (or run all steps)"
            )
    source = read_bold(options.bold_root, codes=options.demographic_codes, skip_missing=options.skip_missing)
    work_dir.mkdir(parents=True, exist_ok=True)
    # An estimate sends nothing and records no reply: it does not bind the folder to a model.
    llm = (
        client.settings.cache_identity()
        if client is not None and needs_llm and client.estimate is None
        else None
    )
    prompts = prompt_overrides()
    bind_work_folder(
        work_dir,
        {
            "data": options.identity(),
            "llm": llm,
            "inputs": source_fingerprint(options.bold_root),
            "prompts": prompts,
        },
        CONFIG_FILE,
        accept=("inputs",) if options.accept_changed_source else (),
        hints={"inputs": CHANGED_SOURCE_HINT},
    )
    rows = source.annotations[: options.limit] if options.limit else source.annotations
    by_id = {a.id: a for a in rows}
    before = client.usage.snapshot() if client is not None else None
    failures: dict[str, dict[str, str]] = {}
    ahead, reject = options.ahead, options.reject_llm_failures
    images = images_of or FrameImages(frames_dir(work_dir))  # one for both steps: shared in memory too
    for step in todo:
        log.info("BQA build: step %s", step)
        if step == CANDIDATES:
            run_candidates(work_dir, rows, seed=options.seed, mapping=options.group_mapping)
        elif step == CLIPS:
            run_clips(work_dir, list(_kept(work_dir, CANDIDATES)), by_id)
        elif step == QUESTIONS:
            failures[step] = run_questions(
                work_dir, _items(work_dir, step), client, options.frames, images_of=images,
                ahead=ahead, reject_failures=reject,
            )  # fmt: skip
        elif step == FILTER:
            failures[step] = run_filter(
                work_dir, _items(work_dir, step), client, ahead=ahead, reject_failures=reject
            )
        elif step == DIFFICULTY:
            failures[step] = run_difficulty(
                work_dir, _items(work_dir, step), client, options.frames, images_of=images,
                unanswered=options.step4_unanswered, ahead=ahead, reject_failures=reject,
            )  # fmt: skip
            if not failures[step]:
                shutil.rmtree(frames_dir(work_dir), ignore_errors=True)  # no later step shows frames
        else:
            _write_split(work_dir, options, by_id)
        if failures.get(step):
            break
    not_run = tuple(todo[todo.index(step) + 1 :]) if failures.get(step) else ()
    run = client.usage.since(before) if client is not None and needs_llm else None
    summary = summarize(work_dir, len(rows), [str(m) for m in source.missing], failures, run, not_run)
    write_json_atomic(work_dir / SUMMARY_FILE, summary.to_json())
    return summary


def _write_split(work_dir: Path, options: BuildOptions, rows: Mapping[str, BoLDAnnotation]) -> None:
    records = release_records(work_dir, rows)
    splits = split_release(records, seed=options.seed)
    config = json.loads((work_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    meta = ReleaseMeta(
        group_mapping=options.group_mapping,
        demographic_codes=options.demographic_codes,
        seed=options.seed,
        source=options.source_note,
        split_rule=SPLIT_RULE,
        extra={
            "frames": options.frames.to_json(),
            "limit": options.limit,
            "llm": config.get("llm"),
            "step4_unanswered": options.step4_unanswered,
            "pipeline": pipeline_counts(work_dir),
            **({"preset": dict(options.preset)} if options.preset else {}),
            **({"prompts": config["prompts"]} if config.get("prompts") else {}),
            **(
                {"sample": SAMPLE_REASON}
                if Path(options.bold_root).resolve() == sample_root().resolve()
                else {}
            ),
        },
    )
    write_release(work_dir, splits, meta)
    empty = [s for s in SPLITS if not splits[s]]
    if empty:
        log.warning(
            "split(s) %s are empty: too few films (%d) for 6:2:2",
            empty,
            len({r.source.film_id for r in records}),
        )


def summarize(
    work_dir: Path,
    rows: int,
    missing: list[str],
    failures: Mapping[str, Mapping[str, str]] | None = None,
    run: UsageSummary | None = None,
    not_run: tuple[str, ...] = (),
) -> BuildSummary[BQABuildDetails]:
    """The state of a work folder's steps and release (plus this run's failures and usage)."""
    steps = step_summaries(work_dir, RECORD_STEPS, failures)
    tokens = [0, 0]
    difficulty: dict[str, int] = {}
    difficulty_reasons: dict[str, int] = {}
    for name in LLM_STEPS.intersection(steps):
        records = StepRecords(work_dir, name)
        if records.complete:
            for r in [*records.kept(), *records.rejects()]:
                usage = r.get("usage") or (0, 0)
                tokens[0] += usage[0]
                tokens[1] += usage[1]
    if DIFFICULTY in steps and steps[DIFFICULTY].complete:
        labelled = StepRecords(work_dir, DIFFICULTY).kept()
        labels = Counter(r["difficulty"] for r in labelled)
        difficulty = {d: labels.get(d, 0) for d in DIFFICULTIES}
        difficulty["unparsed"] = steps[DIFFICULTY].rejected.get(STEP4_UNPARSED, 0)
        reasons = Counter(r.get("difficulty_reason") for r in labelled)
        difficulty_reasons = {reason: reasons.get(reason, 0) for reason in DIFFICULTY_REASONS}
    splits, folder = None, None
    if meta_path(work_dir).is_file():
        folder = meta_path(work_dir).parent
        release = read_release(work_dir, check_clips=False)
        splits = {
            name: {
                "rows": len(records),
                "videos": len(records),  # one clip per question
                "films": len({r.source.film_id for r in records}),
                **{d: sum(r.difficulty == d for r in records) for d in DIFFICULTIES},
            }
            for name, records in release.splits.items()
        }
    return BuildSummary(
        "BQA", Path(work_dir), rows, "BoLD row", steps, folder, splits, (tokens[0], tokens[1]), run,
        BQABuildDetails(missing, difficulty, difficulty_reasons), not_run,
    )  # fmt: skip


def pipeline_counts(work_dir: Path) -> dict[str, Any]:
    """What each step kept and removed, for the release's statistics (the paper's Figure 5): per step
    ``{"in", "kept", "rejected": {reason: n}}``; STEP4's kept items by difficulty and reason."""
    out: dict[str, Any] = {}
    for name in RECORD_STEPS:
        tally = StepRecords(work_dir, name).tally()
        rejected = dict(sorted(tally.rejected.items()))
        kept = tally.kept
        out[name] = {"in": kept + sum(rejected.values()), "kept": kept, "rejected": rejected}
    labelled = StepRecords(work_dir, DIFFICULTY).kept()
    out[DIFFICULTY]["labels"] = {d: sum(r["difficulty"] == d for r in labelled) for d in DIFFICULTIES}
    out[DIFFICULTY]["reasons"] = {
        reason: sum(r.get("difficulty_reason") == reason for r in labelled) for reason in DIFFICULTY_REASONS
    }
    return out
