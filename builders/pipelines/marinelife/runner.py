"""The MarineLife-16K regeneration run: attributes + videos -> caption engine -> QA -> release.

A work folder holds everything a run needs to resume::

    <work>/pipeline.json           what the run was started with (config, model, input digest)
    <work>/llm-cache.sqlite        every validated LLM reply (the CLI's default cache)
    <work>/steps/<step>.jsonl      caption_drafts, caption_reviews, caption_refinements, qa
                                   (+ .rejects.jsonl; .partial.jsonl while a step runs)
    <work>/steps/captions.jsonl    one merged caption record per video (draft, S_c, path, final)
    <work>/release/                videos.jsonl, qa.jsonl, meta.json (marinelife16k.workfolder)
    <work>/summary.json            the last run's summary

Each step records every finished video at once (atomic appends), is finished atomically, and is
never run again; a killed run resumes with the videos that have no record, and the reply cache
means no successful call is paid twice. A call that still fails after its re-asks is reported and
stays pending (``reject_failures``: rejected with reason ``llm_failure`` instead). A work folder
belongs to one configuration: resuming it with another tau, seed, frame setting, model or
attribute file is refused.

Recorded runs (the bundled sample's replies): the :class:`builders.llm.Recording` ``pipeline`` of a
folder (its options are the pipeline configuration) rebuilds offline with :func:`replay_client`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from builders.files.jsonio import write_json_atomic
from builders.llm import LLMClient, Recording, UsageSummary
from builders.llm.prompts import load_prompt
from builders.pipelines.marinelife import captioner, qa_generation, refiner, reviewer
from builders.pipelines.marinelife.caption_engine import (
    CAPTION_STEPS,
    REFINED,
    TAU,
    CaptionSettings,
    captions_path,
    read_captions,
    run_caption_engine,
)
from builders.pipelines.marinelife.outcomes import Failure, total_cost
from builders.runs.lock import locks_work_folder
from builders.runs.steps import StepRecords, bind_work_folder
from builders.runs.summary import BuildSummary, step_summaries
from builders.video.frame_spec import FrameSpec
from marinelife16k.annotations import read_annotations
from marinelife16k.questions import MOTION_TYPE
from marinelife16k.sample import SAMPLE_REASON, sample_video_root
from marinelife16k.splits import SPLITS
from marinelife16k.vocabulary import MULTIPLE_CHOICE, QUESTION_TYPES
from marinelife16k.workfolder import META_FILE, RELEASE_DIR, read_release, write_release

CONFIG_FILE = "pipeline.json"
SUMMARY_FILE = "summary.json"
PIPELINE = "pipeline"  # the recording of a sample run: pipeline_replies.jsonl + pipeline_settings.json
STEPS: tuple[str, ...] = (*CAPTION_STEPS, qa_generation.STEP)


@dataclass(frozen=True)
class PipelineConfig:
    """Everything that changes what a run produces (``ahead``/``reject_failures`` change only how).

    ``frames``: what the captioner sees of each video (default: 8 uniform frames, both ends, longer
    side 512 px); ``seed``: option order and split; ``split_sizes``: as
    :func:`marinelife16k.splits.split_counts` (None: the paper's proportions); ``llm_reference``: the
    LLM writes the camera-object reference sentence (else the template of
    :func:`marinelife16k.questions.camera_object_reference`).
    """

    tau: float = TAU
    frames: FrameSpec = field(default_factory=captioner.frame_spec)
    seed: int = 0
    llm_reference: bool = True
    split_sizes: Mapping[str, int | float] | None = None
    ahead: int | None = None
    reject_failures: bool = False

    @property
    def caption_settings(self) -> CaptionSettings:
        return CaptionSettings(tau=self.tau, frames=self.frames)

    def outputs(self) -> dict[str, Any]:
        """The settings a work folder is bound to (and a release records). The frames are written as
        ``num_frames`` and ``max_side``, as before the frame spec existed, plus whatever differs from
        the captioner's uniform JPEG frames (``fps``, ``frame_rule``, ``video_input``): a work folder
        or recording made with the default frames reads the same, so it resumes (and replays) as it is."""
        out: dict[str, Any] = {
            "tau": self.tau,
            "num_frames": self.frames.num_frames,
            "max_side": self.frames.max_side,
        }
        plain = captioner.frame_spec()
        if self.frames.fps != plain.fps:
            out["fps"] = self.frames.fps
        if self.frames.rule != plain.rule:
            out["frame_rule"] = self.frames.rule
        if self.frames.video_input != plain.video_input:
            out["video_input"] = self.frames.video_input
        out.update(seed=self.seed, llm_reference=self.llm_reference)
        out["split_sizes"] = dict(self.split_sizes) if self.split_sizes is not None else None
        return out

    @classmethod
    def from_outputs(cls, data: Mapping[str, Any]) -> PipelineConfig:
        """The config of :meth:`outputs` (also of recordings and work folders made before the frame spec)."""
        frame_keys = {"num_frames": "num_frames", "max_side": "max_side", "fps": "fps", "frame_rule": "rule",
                      "video_input": "video_input"}  # fmt: skip
        known = {f.name for f in fields(cls)} - {"frames", "ahead", "reject_failures"} | set(frame_keys)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown pipeline settings {sorted(unknown)}; known: {sorted(known)}")
        plain = captioner.frame_spec()
        spec = {name: data[key] for key, name in frame_keys.items() if key in data}
        frames = replace(plain, **spec)
        return cls(frames=frames, **{k: v for k, v in data.items() if k not in frame_keys})


def prompt_versions() -> dict[str, str]:
    """name@version of every prompt the run sends (the reviewer: its rubric's signature)."""
    refs = {
        "captioner": load_prompt(captioner.PROMPT_NAME).ref,
        "refiner": load_prompt(refiner.PROMPT_NAME).ref,
        "qa": load_prompt(qa_generation.PROMPT_NAME).ref,
    }
    out = {role: f"{name}@{version}" for role, (name, version) in refs.items()}
    out["reviewer"] = reviewer.review_rubric().signature
    return out


def _digest(rows: Sequence[Mapping[str, Any]]) -> str:
    # The attributes, not the file bytes: a CSV and its JSONL twin are the same input. The input's
    # caption column is not part of it (the caption engine writes the captions).
    keep = [{k: v for k, v in row.items() if k != "caption"} for row in rows]
    return hashlib.sha256(json.dumps(keep, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass(frozen=True)
class MarineLifeBuildDetails:
    """MarineLife-16K's own part of its :class:`~builders.runs.summary.BuildSummary`: the caption
    engine's and the QA generation's counts, and the recorded LLM cost per step."""

    videos: dict[str, int]  # captioned, with_qa
    captions: dict[str, Any]  # tau, kept, refined, s_c (S_c value -> videos)
    qa: dict[str, Any]  # records, multiple_choice, open_ended, per_type, central_object_motion
    llm: dict[str, Any]  # per_step and total: requests, calls, reasks, tokens (as recorded)

    def note(self) -> str:
        return ""

    def lines(self) -> list[str]:
        v, c, q = self.videos, self.captions, self.qa
        return [
            f"videos: {v['captioned']} captioned, {v['with_qa']} with QA",
            f"captions: {c['kept']} kept, {c['refined']} refined (tau {c['tau']:g}); S_c counts {c['s_c']}",
            f"QA records: {q['records']} ({q['multiple_choice']} multiple-choice, {q['open_ended']} open-ended); "
            f"per type {q['per_type']}",
            "central_object_motion (OBK): {asked} asked; not asked: movement_behavior empty {movement_empty}, "
            "movement_behavior not about the central object {not_about_central_object}".format(
                **q[MOTION_TYPE]
            ),
            "LLM (whole build, as recorded): "
            + "; ".join(
                f"{step} {cost['requests']} req / {cost['reasks']} re-asks"
                for step, cost in self.llm["per_step"].items()
            ),
        ]

    def split_note(self, counts: Mapping[str, int]) -> str:
        return ""

    def to_json(self) -> dict[str, Any]:
        return {"videos": self.videos, "captions": self.captions, "qa": self.qa, "llm": self.llm}


@locks_work_folder
def build(
    work_dir: str | os.PathLike[str],
    client: LLMClient,
    *,
    attributes: str | os.PathLike[str],
    video_root: str | os.PathLike[str],
    config: PipelineConfig = PipelineConfig(),
    note: str | None = None,
) -> BuildSummary[MarineLifeBuildDetails]:
    """Run or resume the whole pipeline; write the release when every step has finished.

    ``note`` goes into the release's provenance (and so the dataset card), e.g. that the replies
    were scripted.

    Returns the summary (also in ``<work>/summary.json``); failed calls leave it not ``ok`` (run
    again to retry them).
    Raises ValueError/FileNotFoundError on bad input (naming file and row), ValueError when the work
    folder belongs to another configuration, and :class:`builders.llm.ReplayMissError` when a replay
    lacks a reply.
    """
    work = Path(work_dir)
    video_root = Path(video_root).resolve()
    rows = read_annotations(attributes, video_root=video_root)
    if not rows:
        raise ValueError(f"{attributes}: no videos")
    wanted = {"config": config.outputs(), "model": client.settings.model, "videos_sha256": _digest(rows),
              "prompts": prompt_versions()}  # fmt: skip
    bind_work_folder(work, wanted, CONFIG_FILE, llm_part="model")
    before = client.usage.snapshot()
    ahead, reject = config.ahead, config.reject_failures

    failures = run_caption_engine(
        work, rows, video_root, client, config.caption_settings, ahead=ahead, reject_failures=reject
    )
    if not failures:
        final = {c["id"]: c["final_caption"] for c in read_captions(work)}
        captioned = [{**row, "caption": final[row["id"]]} for row in rows if row["id"] in final]
        failed = qa_generation.run_qa(
            work, captioned, client, seed=config.seed, reference=config.llm_reference,
            ahead=ahead, reject_failures=reject,
        )  # fmt: skip
        failures = [Failure(i, qa_generation.STEP, e) for i, e in failed.items()]
        if not failures:
            _release(work, captioned, video_root, client, config, note)
    summary = summarize(work, rows, config, failures, client.usage.since(before))
    write_json_atomic(work / SUMMARY_FILE, summary.to_json())
    return summary


def _release(
    work: Path,
    captioned: Sequence[Mapping[str, Any]],
    video_root: Path,
    client: LLMClient,
    config: PipelineConfig,
    note: str | None,
) -> Path:
    """The release of the videos that made it through every step, with their QA records in order."""
    qa = {r["id"]: r for r in StepRecords(work, qa_generation.STEP).kept()}
    videos = [row for row in captioned if row["id"] in qa]
    if not videos:
        rejected = Counter(
            f"{name}: {r.get('_reason', '?')}" for name in STEPS for r in StepRecords(work, name).rejects()
        )
        counts = ", ".join(f"{k} {n}" for k, n in sorted(rejected.items())) or "no reasons recorded"
        raise RuntimeError(
            f"no video made it through the pipeline: every one of the {len(captioned)} captioned videos was "
            f"rejected ({counts}); see the rejects in {work / 'steps'}"
        )
    return write_release(
        work,
        videos,
        [record for row in videos for record in qa[row["id"]]["records"]],
        motion_not_asked={
            row["id"]: decision["reason"]
            for row in videos
            if (decision := qa[row["id"]].get(MOTION_TYPE)) and not decision["asked"]
        },
        seed=config.seed,
        sizes=config.split_sizes,
        video_root=video_root,
        provenance=_provenance(work, client, config, note, video_root),
    )


def _provenance(
    work: Path, client: LLMClient, config: PipelineConfig, note: str | None, video_root: Path
) -> dict[str, Any]:
    models = sorted(
        {
            c["llm"][stage]["model"]
            for c in read_captions(work)
            for stage in ("draft", "review", "refine")
            if c["llm"][stage]
        }
        | {r["llm"]["model"] for r in StepRecords(work, qa_generation.STEP).kept()}
    )
    return {
        "pipeline": "builders.pipelines.marinelife (caption engine + QA generation)",
        "model": client.settings.model,
        "models_reported": models,
        "prompts": prompt_versions(),
        **config.outputs(),
        "distractors": "LLM-written (three per multiple-choice question); all else computed from the attributes",
        **({"note": note} if note else {}),
        # the bundled sample's videos: the release says so on its card, and push refuses it by default
        **({"sample": SAMPLE_REASON} if video_root == sample_video_root().resolve() else {}),
    }


def summarize(
    work_dir: str | os.PathLike[str],
    rows: Sequence[Mapping[str, Any]],
    config: PipelineConfig,
    failures: Sequence[Failure] = (),
    run: UsageSummary | None = None,
) -> BuildSummary[MarineLifeBuildDetails]:
    """The run's numbers from its step records (so a resumed or replayed run reports the whole build)."""
    work = Path(work_dir)
    failed: dict[str, dict[str, str]] = {}
    for failure in failures:
        failed.setdefault(failure.step, {})[failure.id] = failure.error
    steps = step_summaries(work, STEPS, failed)
    records_of = {name: StepRecords(work, name).kept() if name in steps and steps[name].complete else []
                  for name in STEPS}  # fmt: skip
    captions = read_captions(work) if captions_path(work).is_file() else []
    qa = records_of[qa_generation.STEP]
    types = Counter(r["type"] for item in qa for r in item["records"])
    llm = {name: total_cost(r["llm"] for r in found) for name, found in records_of.items()}
    total = _sum(llm.values())
    details = MarineLifeBuildDetails(
        videos={"captioned": len(captions), "with_qa": len(qa)},
        captions={
            "tau": config.tau,
            "kept": sum(c["path"] != REFINED for c in captions),
            "refined": sum(c["path"] == REFINED for c in captions),
            "s_c": {str(k): v for k, v in sorted(Counter(c["s_c"] for c in captions).items())},
        },
        qa={
            "records": sum(types.values()),
            "multiple_choice": sum(
                n for t, n in types.items() if QUESTION_TYPES[t].question_format == MULTIPLE_CHOICE
            ),
            "open_ended": sum(
                n for t, n in types.items() if QUESTION_TYPES[t].question_format != MULTIPLE_CHOICE
            ),
            "per_type": {t: types[t] for t in QUESTION_TYPES if types[t]},
            MOTION_TYPE: _motion_counts(qa),
        },
        llm={"per_step": llm, "total": total},
    )
    # The steps a failure kept from running, and the release after them.
    first = min((STEPS.index(step) for step in failed if step in STEPS), default=len(STEPS))
    not_run = tuple(s for s in (*STEPS[first + 1 :], "release") if s not in failed) if failed else ()
    release, splits = None, None
    if not failed and (work / RELEASE_DIR / META_FILE).is_file():  # a run that fails writes none
        release = work / RELEASE_DIR
        written = read_release(work, check_videos=False, check_qa=False)
        split_of = written.splits()
        splits = {name: {"rows": 0, "videos": 0} for name in SPLITS if name in split_of.values()}
        for split in split_of.values():
            splits[split]["videos"] += 1
        for record in written.records:
            splits[split_of[record["id"]]]["rows"] += 1
    return BuildSummary(
        "MarineLife-16K", work, len(rows), "video", steps, release, splits,
        (total["prompt_tokens"], total["completion_tokens"]), run, details, not_run,
    )  # fmt: skip


def _motion_counts(qa: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Type 7 over the videos with QA: asked, not asked because movement_behavior is empty, and not asked
    because the QA generation found it does not describe the central object."""
    decisions = [item.get(MOTION_TYPE) for item in qa]
    return {
        "asked": sum(bool(d and d["asked"]) for d in decisions),
        "movement_empty": sum(d is None for d in decisions),
        "not_about_central_object": sum(bool(d and not d["asked"]) for d in decisions),
    }


def _sum(totals: Any) -> dict[str, int]:
    totals = list(totals)
    return {
        key: sum(t[key] for t in totals)
        for key in ("requests", "calls", "reasks", "prompt_tokens", "completion_tokens")
    }


# -- recorded runs ---------------------------------------------------------------------------


def load_recording(folder: str | os.PathLike[str]) -> Recording:
    """The recording ``pipeline`` in ``folder``: replies and the settings and config they answer."""
    return Recording.read(folder, PIPELINE)


def replay_client(folder: str | os.PathLike[str]) -> tuple[LLMClient, PipelineConfig, str]:
    """A client that answers only from ``folder``'s recorded pipeline replies, the pipeline config
    those replies need, and the recording's note (carried into provenance)."""
    recording = load_recording(folder)
    return recording.replay_client(), PipelineConfig.from_outputs(recording.options), recording.note
