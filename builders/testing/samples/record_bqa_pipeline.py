"""Record the LLM replies that rebuild the bundled sample offline; run ``python -m builders.testing.samples.record_bqa_pipeline``.

It builds the sample with the full pipeline against a local :class:`ChatServer` whose replies come
from the scripted test responder (:class:`builders.scripted.bqa_responder.BQAResponder`, with STEP1's
answers as its oracle so that some STEP4 answers are right), then writes the recording ``pipeline``
next to this file (``pipeline_replies.jsonl``, ``pipeline_settings.json``). Nothing here is a model's
output: the sample exercises the tooling.

The settings name a fixed endpoint, ``http://scripted-bqa-sample.invalid/v1``, because the LLM cache
key includes the base URL and a test server's port changes every run; the requests reach the local
server as a proxy (:func:`builders.testing.recorder.recording_session`), so the keys recorded are
those a replay computes, whatever port the server had.

Rerun it after changing a BQA prompt, the responder, the frame settings or the sample's clips (the
frames' bytes are part of every key).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from bqa.bold import read_bold
from bqa.candidates import CandidateError, extract_candidates
from bqa.sample import sample_root
from builders.demo.bqa_sample import PIPELINE, SAMPLE_DIR, build_options
from builders.llm import Recording
from builders.pipelines.bqa.runner import BQABuildDetails, build
from builders.runs.steps import DEFAULT_CACHE
from builders.runs.summary import BuildSummary
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer
from builders.testing.recorder import recording_session, scripted_settings
from builders.video.frame_spec import FrameSpec

RECORDING = Recording(
    folder=SAMPLE_DIR,
    name=PIPELINE,
    settings=scripted_settings("scripted-bqa-sample"),
    options={
        "seed": 0,
        "frames": FrameSpec(fps=1.0).to_json(),
        "limit": None,
        "responder": {"accuracy": 0.6},
    },
    note="Replies of the scripted test responder (builders/scripted/bqa_responder.py), not of a model. "
    "`vqabench bqa build --sample --replay` rebuilds the sample release from them with no network.",
)


def oracle(recording: Recording = RECORDING) -> dict[tuple[str, ...], str]:
    """STEP1's answer of each sample row, keyed by its choices in the order shown."""
    answers = {}
    for row in read_bold(sample_root()).annotations:
        try:
            c = extract_candidates(row.emotions, key=row.id, seed=recording.options["seed"])
        except CandidateError:
            continue
        answers[c.choices] = c.answer
    return answers


def record(
    out_dir: str | Path = SAMPLE_DIR,
    work_dir: str | Path | None = None,
    recording: Recording = RECORDING,
) -> tuple[BuildSummary[BQABuildDetails], ChatServer]:
    """Build the sample against the scripted responder and write the recording to ``out_dir``;
    returns the build summary and the (stopped) server, whose request log stays readable."""
    recording = replace(recording, folder=Path(out_dir))
    with tempfile.TemporaryDirectory(prefix="bqa-record-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp) / "work"
        responder = BQAResponder(answers=oracle(recording), **recording.options["responder"])
        with recording_session(recording, responder, work / DEFAULT_CACHE) as (client, server):
            summary = build(work, build_options(recording), client)
            if not summary.ok:  # raised inside the session: nothing is written
                raise RuntimeError(f"the recording build did not finish:\n{summary.format()}")
    return summary, server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=SAMPLE_DIR, help="folder for the two files (default: bqa/sample)"
    )
    parser.add_argument("--work", type=Path, help="keep the recording build's work folder here")
    args = parser.parse_args(argv)
    summary, server = record(args.out, args.work)
    print(summary.format())
    print(
        f"{len(server.chat_requests)} requests recorded to {replace(RECORDING, folder=args.out).replies_path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
