"""Run any OpenAI-compatible VideoLLM on a BQA split and write its predictions (STEP4's act, for users).

Input: a work folder with a release (``<work>/release/``) or an exported Hub-layout folder
(``load_dataset`` on it, videos read as bytes, no torch). For each row the model gets the frames
(N uniform or per second), the question and the four choices, in the paper's single-word or
rationale style (:mod:`builders.bqa_pipeline.answers`), and its reply is read with the shared
answer parser. Output, one JSON object per row in split order::

    {"id", "style", "raw_output", "parsed_answer" (a choice or "unparsed"), "parse_reason" (why, one
     of builders.scoring.answer_parsing.REASONS), "answer_parser" (the parser's signature),
     "rationale" (or null), "reference", "choices", "difficulty", "gender", "age", "ethnicity", "correct",
     "model" (as reported), "prompt", "prompt_version", "usage": [prompt_tokens, completion_tokens]}

so that ``metrics/bqa_accuracy`` can score it from the file alone (``predictions=raw_output``).
Resumable like the build: records go to ``<eval work>/steps/predictions.*`` as they finish, replies
to the LLM cache; the predictions file is written (atomically) once every row has one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bqa.features import SPLITS
from bqa.workdir import meta_path, read_release
from builders.bqa_pipeline.answers import STYLES, answer_request, read_answer
from builders.frame_spec import FrameSpec
from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.llm_step import (
    DEFAULT_BATCH_SIZE,
    Outcome,
    PredictionRun,
    llm_fields,
    run_predictions,
    save_run_summary,
)
from builders.scoring.bqa_accuracy import BQA_PARSER, bqa_accuracy
from builders.video_source import SourceLike

STEP = "predictions"
ROW_FIELDS = ("id", "question", "choices", "answer", "difficulty", "gender", "age", "ethnicity")


@dataclass
class EvalData:
    """The text rows of one split and a way to get each row's video (by position)."""

    rows: list[dict[str, Any]]
    video: Callable[[int], SourceLike]
    source: str

    @classmethod
    def open(cls, path: str | Path, split: str, cache_dir: str | Path | None = None) -> EvalData:
        """A work folder's release, or an exported Hub-layout folder (README.md + data/)."""
        path = Path(path)
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {list(SPLITS)}")
        if meta_path(path).is_file():
            release = read_release(path)
            records = release.splits[split]
            rows = [{k: v for k, v in r.to_json().items() if k in ROW_FIELDS} for r in records]
            return cls(rows, lambda i: release.clip_path(records[i]), f"work folder {path}")
        if (path / "README.md").is_file() and (path / "data").is_dir():
            import datasets

            cache = str(cache_dir) if cache_dir else tempfile.mkdtemp(prefix="bqa-eval-")
            ds = datasets.load_dataset(str(path), split=split, cache_dir=cache)
            rows = ds.select_columns(list(ROW_FIELDS)).to_list()
            videos = ds.select_columns(["video"]).cast_column("video", datasets.Video(decode=False))
            return cls(rows, lambda i: videos[i]["video"], f"Hub-layout folder {path}")
        raise FileNotFoundError(
            f"{path}: neither a BQA work folder (no release/meta.json) nor an exported Hub-layout folder "
            "(README.md and data/)"
        )


class EvalSummary(PredictionRun):
    """A BQA evaluation run; ``scores``: accuracy, accuracy_easy, accuracy_hard, n, n_unparsed."""

    def format(self) -> str:
        score_line = None
        if self.scores:
            s = {
                k: "-" if v is None else f"{v:.3f}"
                for k, v in self.scores.items()
                if k.startswith("accuracy")
            }
            score_line = (
                f"  accuracy {s['accuracy']} (Easy {s['accuracy_easy']}, Hard {s['accuracy_hard']}), "
                f"{self.scores['n_unparsed']} unparsed; score fully with metrics/bqa_accuracy"
            )
        return self._lines(f"BQA evaluation: {self.predicted} of {self.rows} rows predicted", score_line)


def prediction_record(row: Mapping[str, Any], style: str, raw: str) -> dict[str, Any]:
    """One line of the predictions file (without the LLM provenance fields)."""
    read = read_answer(raw, row["choices"], style)
    return {
        "id": row["id"],
        "style": style,
        "raw_output": raw,
        "parsed_answer": read.parsed,
        "parse_reason": read.reason,
        "answer_parser": BQA_PARSER.signature,
        "rationale": read.rationale,
        "reference": row["answer"],
        "choices": list(row["choices"]),
        "difficulty": row["difficulty"],
        "gender": row["gender"],
        "age": row["age"],
        "ethnicity": row["ethnicity"],
        "correct": read.answer == row["answer"],
    }


def quick_scores(predictions: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Easy/Hard/Total accuracy of a predictions file's rows, by the project's BQA metric."""
    if not predictions:
        return None
    result = bqa_accuracy(
        [p["raw_output"] for p in predictions],
        [p["reference"] for p in predictions],
        [p["choices"] for p in predictions],
        [p["difficulty"] for p in predictions],
    )
    keys = ("accuracy", "accuracy_easy", "accuracy_hard", "n", "n_unparsed", "answer_parser")
    return {k: result[k] for k in keys}


def evaluate(
    data: EvalData,
    client: LLMClient,
    work_dir: str | Path,
    out: str | Path,
    *,
    style: str = "single_word",
    frames: FrameSpec | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    reject_failures: bool = False,
    identity: Mapping[str, Any] | None = None,
) -> EvalSummary:
    """Predict every row (the first ``limit``) of ``data``; write ``out`` once all have a record.

    ``identity``: what names the data (e.g. folder and split), checked against ``<work>/eval.json``
    with the style, frames and LLM settings, so one work folder never mixes two evaluations.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; expected one of {list(STYLES)}")
    frames = frames or FrameSpec(fps=None, num_frames=16)
    config = {
        **(identity or {"source": data.source}),
        "style": style,
        "frames": frames.to_json(),
        "limit": limit,
    }
    rows = data.rows[:limit] if limit else data.rows
    items = [{"id": row["id"], "index": i} for i, row in enumerate(rows)]

    def request_of(item: Mapping[str, Any]) -> LLMRequest:
        row = rows[item["index"]]
        return answer_request(row["question"], row["choices"], data.video(item["index"]), frames, style)

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        return Outcome(
            {
                **prediction_record(rows[item["index"]], style, result.value),
                **llm_fields(result, request, client),
            }
        )

    run, predictions = run_predictions(
        work_dir, out, items, client, request_of, outcome, config=config, step=STEP,
        batch_size=batch_size, reject_failures=reject_failures, desc=f"predict ({style})",
    )  # fmt: skip
    summary = EvalSummary(**vars(run))
    summary.scores = quick_scores(predictions)
    save_run_summary(work_dir, summary)
    return summary
