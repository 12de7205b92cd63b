"""Run any OpenAI-compatible VideoLLM on a MarineLife-16K split and write its predictions; judge them.

Input: a split opened by :func:`marinelife16k.data.open_split` from a MarineLife-16K work folder
(``<work>/release/``) or an exported Hub-layout folder (the ``qa`` and ``videos`` configs, videos read
as bytes, no torch). Every QA
record of the split is asked as the dataset states it: the video's frames (N uniform or per second),
then the record's own ``prompt`` field (multiple-choice prompts already list the options and ask for
the letter; open-ended prompts are the question), in one versioned prompt
(``builders/llm/prompts/marinelife_answer.md``). Output, one JSON object per record in split order::

    {"id" and "question_id" (both the question id), "video" (the qa config's ``id``), "type",
     "dimension", "question_format", "camera_kind", "question", "options" (texts A-D; [] when
     open-ended), "raw_output", "parsed_answer" (multiple choice: a letter or "unparsed"; else null),
     "parse_reason" and "answer_parser" (multiple choice: why, and the parser's signature; else null),
     "reference" (the answer letter, or the reference text of an open-ended question),
     "correct" (multiple choice: bool; open-ended: null), "evidence" (the record's evidence attributes),
     "model" (as reported), "prompt", "prompt_version", "usage": [prompt_tokens, completion_tokens],
     "provenance": {"tool", "data" (folder + fingerprint, or repo_id + revision + commit), "split",
                    "frames", "limit", "prompt", "model_asked", "videos" (only on a named subset of the
                    split's videos: n, of, sha256 and the file or sample and seed)}}

so that ``metrics/marinelife_qa`` scores the multiple-choice rows and ``metrics/judge`` the
open-ended ones (:func:`judge_inputs`) from the file alone, and ``vqabench report marinelife`` reads
it as is. Resumable like the BQA runner (same loop, :func:`builders.runs.llm_step.run_llm_step`):
records go to ``<eval work>/steps/predictions.*`` as they finish, replies to the LLM cache; the
predictions file is written (atomically) once every record has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from builders.evaluation.rubrics import get_rubric
from builders.evaluation.run import PredictionRun, run_predictions, save_run_summary
from builders.hub.split_data import SplitData
from builders.hub.subset import FIELD, VideoSelection, filter_by_video
from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.llm.prompts import load_prompt
from builders.runs.frames import FrameImages, Images
from builders.runs.llm_step import Outcome, llm_fields
from builders.scoring.answer_parsing import ParsedChoice
from builders.scoring.judge import judge_predictions
from builders.scoring.judge_results import JudgeResult
from builders.video.frame_spec import FrameSpec
from marinelife16k.accuracy import MARINELIFE_PARSER, OVERALL, marinelife_accuracy
from marinelife16k.predictions import accuracy_inputs, item_fields
from marinelife16k.rubrics import JUDGE_TASKS, camera_groups
from marinelife16k.vocabulary import MULTIPLE_CHOICE, OPTION_LABELS

STEP = "predictions"
PROMPT_NAME = "marinelife_answer"
#: The paper's captioner input, and a common VideoLLM setting.
DEFAULT_FRAMES = FrameSpec(fps=None, num_frames=8)
#: Expected reply lengths, for cost estimates: a letter; a sentence or two (open-ended, captions).
MCQ_OUTPUT_TOKENS, OPEN_OUTPUT_TOKENS = 4, 80


def answer_request(record: Mapping[str, Any], images: Sequence[str], frames: FrameSpec) -> LLMRequest:
    """The request for one QA record: its video's frames (JPEG data URLs), then its ``prompt``."""
    variables = {"frame_description": frames.describe(frames.frame_count(images)), "prompt": record["prompt"]}
    request = LLMRequest.from_prompt(load_prompt(PROMPT_NAME), variables, images=images)
    mcq = record["question_format"] == MULTIPLE_CHOICE
    return replace(request, output_tokens=MCQ_OUTPUT_TOKENS if mcq else OPEN_OUTPUT_TOKENS)


def read_mcq(raw: str | None, record: Mapping[str, Any]) -> ParsedChoice:
    """How ``metrics/marinelife_qa`` reads a reply to this record (letter or option text), and why."""
    return MARINELIFE_PARSER.parse(raw, [o["text"] for o in record["options"]], OPTION_LABELS)


def prediction_record(record: Mapping[str, Any], video: Mapping[str, Any], raw: str | None) -> dict[str, Any]:
    """One line of the predictions file (without the LLM provenance fields)."""
    mcq = record["question_format"] == MULTIPLE_CHOICE
    read = read_mcq(raw, record) if mcq else None
    parsed = read.answer(OPTION_LABELS) if read else None
    return {
        **item_fields(record, video),
        "raw_output": raw,
        "parsed_answer": parsed,
        "parse_reason": read.reason if read else None,
        "answer_parser": MARINELIFE_PARSER.signature if read else None,
        "correct": (parsed == record["answer"]) if mcq else None,
    }


def quick_scores(predictions: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Overall multiple-choice accuracy (0-100) and unparsed count, by the project's metric."""
    inputs = accuracy_inputs(predictions)
    if not inputs["predictions"]:
        return None
    result = marinelife_accuracy(**inputs)
    return {
        "accuracy": result.overall.value,
        "n": result.overall.n,
        "n_unparsed": result.n_unparsed[OVERALL],
        "answer_parser": result.answer_parser,
    }


class MarineEvalSummary(PredictionRun):
    """A MarineLife-16K evaluation run; ``scores``: multiple-choice accuracy (0-100), n, n_unparsed."""

    def format(self) -> str:
        score_line = None
        if self.scores:
            score_line = (
                f"  multiple-choice accuracy {self.scores['accuracy']:.1f} on {self.scores['n']} questions "
                f"({self.scores['n_unparsed']} unparsed); per dimension: metrics/marinelife_qa, open-ended "
                "answers: vqabench marinelife judge"
            )
        header = f"MarineLife-16K evaluation: {self.predicted} of {self.rows} questions predicted"
        return self._lines(header, score_line)


def evaluate(
    data: SplitData,
    client: LLMClient,
    work_dir: str | Path,
    out: str | Path,
    *,
    frames: FrameSpec | None = None,
    limit: int | None = None,
    ahead: int | None = None,
    reject_failures: bool = False,
    identity: Mapping[str, Any] | None = None,
    images_of: Images | None = None,
    videos: VideoSelection | None = None,
) -> MarineEvalSummary:
    """Predict every record (the first ``limit``) of ``data``; write ``out`` once all have one.

    ``identity``: what names the data (e.g. folder and split), checked against ``<work>/eval.json``
    with the frames and LLM settings, so one work folder never mixes two evaluations.
    ``images_of``: how frames are made (default: decoded once per video and frame spec while its
    records are being asked, :class:`~builders.runs.frames.FrameImages`).
    ``videos``: only the records of a named subset of the split's videos (recorded in every line's
    provenance as ``videos``; :mod:`builders.hub.subset`).
    """
    frames = frames or DEFAULT_FRAMES
    images = images_of or FrameImages()
    subset = videos.choose(list(data.videos), split=data.split, source=data.source) if videos else None
    config = {**(identity or {"source": data.source, "split": data.split}), "frames": frames.to_json(),
              "limit": limit, "prompt": "@".join(load_prompt(PROMPT_NAME).ref),
              **({FIELD: subset.provenance()} if subset else {})}  # fmt: skip
    rows = filter_by_video(data.rows, lambda row: row["id"], subset)
    rows = rows[:limit] if limit else rows
    items = [{"id": row["question_id"], "index": i} for i, row in enumerate(rows)]  # keyed by question

    def request_of(item: Mapping[str, Any]) -> LLMRequest:
        row = rows[item["index"]]
        return answer_request(row, images(data.video(row["id"]), frames), frames)

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        row = rows[item["index"]]
        return Outcome(
            {
                **prediction_record(row, data.videos[row["id"]], result.value),
                **llm_fields(result, request, client),
            }
        )

    run, predictions = run_predictions(
        work_dir, out, items, client, request_of, outcome, config=config, step=STEP,
        ahead=ahead, reject_failures=reject_failures, desc="predict",
    )  # fmt: skip
    summary = MarineEvalSummary(**vars(run))
    summary.scores = quick_scores(predictions)
    summary.videos = subset.label if subset else None
    save_run_summary(work_dir, summary)
    return summary


# -- judging the open-ended answers -------------------------------------------------------------


def judge_inputs(predictions: Sequence[Mapping[str, Any]], task: str) -> dict[str, list[Any]] | None:
    """The judge metric's inputs for one task (``oemu`` or ``caption``) from predictions rows:
    ``predictions``, ``references``, ``questions``, ``camera`` (+ ``evidence`` for OEMU); None when
    the rows hold no question of that task."""
    if task not in JUDGE_TASKS:
        raise ValueError(f"unknown judge task {task!r}; expected one of {list(JUDGE_TASKS)}")
    qtype = JUDGE_TASKS[task].question_type
    rows = [p for p in predictions if p["type"] == qtype]
    if not rows:
        return None
    for p in rows:
        if not isinstance(p.get("raw_output"), str) or not isinstance(p.get("reference"), str):
            raise ValueError(f"prediction {p.get('question_id')}: raw_output and reference must be text")
    inputs = {
        "predictions": [p["raw_output"] for p in rows],
        "references": [p["reference"] for p in rows],
        "questions": [p["question"] for p in rows],
        "camera": [p["camera_kind"] for p in rows],
    }
    if task == "oemu":
        inputs["evidence"] = [p["evidence"] for p in rows]
    return inputs


def judge(
    predictions: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    return_items: bool = False,
    confidence: float = 0.95,
) -> dict[str, JudgeResult]:
    """Judge results per task (``{"oemu": ..., "caption": ...}``; their ``to_dict()`` is the shape
    ``--judge-results`` reads), with the same rubrics and aggregation as ``metrics/judge``. Every
    failed judgement, and with ``return_items`` every per-item score, carries the ``question_id`` it
    judged (what ``human-study score`` compares with the experts)."""
    results = {}
    for task, judged in JUDGE_TASKS.items():
        inputs = judge_inputs(predictions, task)
        if inputs is not None:
            result = judge_marinelife(
                judged.rubric, inputs, client, return_items=return_items, confidence=confidence
            )
            # judge_inputs keeps the task's rows in file order: index i is its i-th row
            ids = [p["question_id"] for p in predictions if p["type"] == judged.question_type]
            results[task] = replace(
                result,
                failed=[replace(f, question_id=ids[f.index]) for f in result.failed],
                items=None
                if result.items is None
                else [replace(item, question_id=ids[item.index]) for item in result.items],
            )
    return results


def judge_marinelife(
    rubric: str,
    inputs: Mapping[str, Any],
    client: LLMClient,
    *,
    return_items: bool = False,
    confidence: float = 0.95,
) -> JudgeResult:
    """One rubric's judge result over :func:`judge_inputs` (its ``camera`` column splits the means
    by camera kind), as ``metrics/judge`` computes it; ``return_items`` adds the per-item scores."""
    columns = {k: v for k, v in inputs.items() if k not in ("predictions", "references", "camera")}
    return judge_predictions(
        inputs["predictions"],
        inputs["references"],
        get_rubric(rubric),
        client,
        groups=camera_groups(inputs.get("camera")),
        return_items=return_items,
        confidence=confidence,
        **columns,
    )
