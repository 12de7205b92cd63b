"""Run any OpenAI-compatible VideoLLM on a BQA split and write its predictions (STEP4's act, for users).

Input: a split opened by :func:`bqa.data.open_split` from a work folder with a release
(``<work>/release/``) or an exported Hub-layout folder (videos read as bytes, no torch). For each row
the model gets the frames (N uniform or per second), the question and the four choices, in one of
the styles of :mod:`builders.evaluation.bqa_answers` (``single_word``, the paper's; the two-stage
``multimodal_cot`` and ``multimodal_cot_no_answer``; the one-request ``reason_then_answer``), and its
reply is read with the shared answer parser. A two-stage style sends two requests per row (stage 1,
the rationale, possibly to another model; stage 2, the answer, given it), both over the frames of one
decode, both cached. Output, one JSON object per row in split order::

    {"id", "style", "raw_output", "parsed_answer" (a choice or "unparsed"), "parse_reason" (why, one
     of builders.scoring.answer_parsing.REASONS), "answer_parser" (the parser's signature),
     "rationale" (or null), "answer_leaking" (stage 1 saw the correct answer), "reference", "choices",
     "difficulty", "gender", "age", "ethnicity", "correct", "model" (as reported), "prompt",
     "prompt_version", "usage": [prompt_tokens, completion_tokens],
     two-stage styles also "rationale_model", "rationale_prompt", "rationale_prompt_version",
     "rationale_usage",
     "provenance": {"tool", "data" (folder + fingerprint, or repo_id + revision + commit), "split",
                    "style", "answer_leaking", "frames", "limit", "model_asked",
                    "rationale_model_asked" (two-stage), "videos" (only on a named subset of the
                    split's clips)}}

so that ``metrics/bqa_accuracy`` can score it from the file alone (``predictions=raw_output``,
``rationales=rationale``: the leakage check runs on every style that has rationales).
Resumable like the build: records go to ``<eval work>/steps/predictions.*`` as they finish, replies
to the LLM cache; the predictions file is written (atomically) once every row has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bqa.accuracy import BQA_PARSER, bqa_accuracy
from bqa.data import BQASplitData
from bqa.predictions import accuracy_inputs, item_fields
from builders.evaluation.bqa_answers import (
    ANSWER_LEAK_NOTE,
    answer_request,
    get_style,
    rationale_request,
    read_answer,
    stage2_request,
)
from builders.evaluation.run import PredictionRun, run_predictions, save_run_summary
from builders.hub.subset import FIELD, VideoSelection, filter_by_video
from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.runs.frames import FrameImages, Images
from builders.runs.llm_step import FollowUp, Outcome, llm_fields
from builders.video.frame_spec import FrameSpec

STEP = "predictions"
_QUICK_RATES = ("accuracy", "accuracy_easy", "accuracy_hard")  # of quick_scores: printed as rates


class EvalSummary(PredictionRun):
    """A BQA evaluation run; ``scores``: accuracy, accuracy_easy, accuracy_hard, n, n_unparsed, style,
    answer_leaking."""

    def format(self) -> str:
        score_line = None
        if self.scores:
            s = {k: "-" if v is None else f"{v:.3f}" for k, v in self.scores.items() if k in _QUICK_RATES}
            score_line = (
                f"  accuracy {s['accuracy']} (Easy {s['accuracy_easy']}, Hard {s['accuracy_hard']}), "
                f"{self.scores['n_unparsed']} unparsed; score fully with metrics/bqa_accuracy"
            )
            if self.scores.get("answer_leaking"):
                score_line += f"\n  ANSWER-LEAKING ({self.scores['style']}): {ANSWER_LEAK_NOTE}"
        return self._lines(f"BQA evaluation: {self.predicted} of {self.rows} rows predicted", score_line)


def prediction_record(row: Mapping[str, Any], style: str, raw: str | None) -> dict[str, Any]:
    """One line of the predictions file (without the LLM provenance fields)."""
    s = get_style(style)
    read = read_answer(raw, row["choices"], s.name)
    return {
        **item_fields(row),
        "style": s.name,
        "raw_output": raw,
        "parsed_answer": read.parsed,
        "parse_reason": read.reason,
        "answer_parser": BQA_PARSER.signature,
        "rationale": read.rationale,
        "answer_leaking": s.answer_leaking,
        "correct": read.answer == row["answer"],
    }


def quick_scores(
    predictions: Sequence[Mapping[str, Any]], data: BQASplitData, style: str = "single_word"
) -> dict[str, Any] | None:
    """Easy/Hard/Total accuracy of a predictions file's rows, by the project's BQA metric."""
    if not predictions:
        return None
    result = bqa_accuracy(
        **accuracy_inputs(predictions),
        group_mapping=data.group_mapping,
        demographic_codes=data.demographic_codes,
    )
    s = get_style(style)
    return {
        "accuracy": result.accuracy.value,
        "accuracy_easy": result.easy.value,
        "accuracy_hard": result.hard.value,
        "n": result.n,
        "n_unparsed": result.n_unparsed,
        "answer_parser": result.answer_parser,
        "style": s.name,
        "answer_leaking": s.answer_leaking,
    }


def evaluate(
    data: BQASplitData,
    client: LLMClient,
    work_dir: str | Path,
    out: str | Path,
    *,
    style: str = "single_word",
    frames: FrameSpec | None = None,
    limit: int | None = None,
    ahead: int | None = None,
    reject_failures: bool = False,
    identity: Mapping[str, Any] | None = None,
    images_of: Images | None = None,
    rationale_client: LLMClient | None = None,
    videos: VideoSelection | None = None,
) -> EvalSummary:
    """Predict every row (the first ``limit``) of ``data``; write ``out`` once all have a record.

    ``identity``: what names the data (e.g. folder and split), checked against ``<work>/eval.json``
    with the style, frames and LLM settings, so one work folder never mixes two evaluations.
    ``images_of``: how frames are made (:mod:`builders.runs.frames`; ``--estimate`` probes them);
    by default decoded once per clip and frame spec (:class:`~builders.runs.frames.FrameImages`, keyed
    by the clip's content): BoLD clips with several annotated persons are several rows, and every
    request a row makes of its clip shares that one decode (a two-stage style's two stages show the
    same frames).
    ``rationale_client``: who writes stage 1 of a two-stage style (default: ``client``).
    ``videos``: only the rows of a named subset of the split's clips (a BQA item is one clip: its
    ``id``), recorded in every line's provenance as ``videos`` (:mod:`builders.hub.subset`).
    """
    s = get_style(style)
    if rationale_client is not None and not s.two_stage:
        raise ValueError(
            f"style {s.name!r} has no rationale stage: a rationale model applies to two-stage styles"
        )
    stage1 = rationale_client or client
    frames = frames or FrameSpec(fps=None, num_frames=16)
    subset = videos.choose(list(data.videos), split=data.split, source=data.source) if videos else None
    images = images_of or FrameImages()
    config: dict[str, Any] = {
        **(identity or {"source": data.source}),
        "style": s.name,
        "answer_leaking": s.answer_leaking,
        "frames": frames.to_json(),
        "limit": limit,
        **({FIELD: subset.provenance()} if subset else {}),
    }
    if s.two_stage:
        config["rationale_model_asked"] = stage1.settings.model
        if stage1 is not client and stage1.estimate is None:
            config["rationale_llm"] = stage1.settings.cache_identity()
    rows = filter_by_video(data.rows, lambda row: row["id"], subset)
    rows = rows[:limit] if limit else rows

    def record(row: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> dict[str, Any]:
        return {**prediction_record(row, s.name, result.value), **llm_fields(result, request, client)}

    def request_of(row: Mapping[str, Any]) -> LLMRequest | FollowUp:
        video = data.video(row["id"])
        if not s.two_stage:
            return answer_request(row["question"], row["choices"], video, frames, s.name, images_of=images)
        first = rationale_request(
            row["question"], row["choices"], row["answer"], video, frames, s.name, images_of=images
        )
        return FollowUp(first, lambda request, result: answer_stage(row, request, result), stage1)

    def answer_stage(row: Mapping[str, Any], first: LLMRequest, rationale: LLMResult) -> FollowUp:
        second = stage2_request(first, rationale.value, row["question"], row["choices"], frames, s.name)
        stage1_fields = {f"rationale_{k}": v for k, v in llm_fields(rationale, first, stage1).items()}

        def done(request: LLMRequest, result: LLMResult) -> Outcome:
            return Outcome({**record(row, request, result), "rationale": rationale.value, **stage1_fields})

        return FollowUp(second, done, client)

    def outcome(row: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        return Outcome(record(row, request, result))

    run, predictions = run_predictions(
        work_dir, out, rows, client, request_of, outcome, config=config, step=STEP,
        ahead=ahead, reject_failures=reject_failures, desc=f"predict ({s.name})",
        other_clients=[stage1],
    )  # fmt: skip
    summary = EvalSummary(**vars(run))
    summary.scores = quick_scores(predictions, data, s.name)
    summary.videos = subset.label if subset else None
    save_run_summary(work_dir, summary)
    return summary
