"""Record the LLM replies that rebuild the bundled sample offline; run ``python -m bqa.sample.record_replies``.

It builds the sample with the full pipeline against a local :class:`ChatServer` whose replies come
from the scripted test responder (:class:`builders.testing.bqa_responder.BQAResponder`, with STEP1's
answers as its oracle so that some STEP4 answers are right), then exports the reply cache to
``replies.jsonl`` and the settings to ``llm_settings.json`` next to this file. Nothing here is a
model's output: the sample exercises the tooling.

The settings name a fixed endpoint, ``http://scripted-bqa-sample.invalid/v1``, because the LLM cache
key includes the base URL and a test server's port changes every run. The requests reach the local
server through an HTTP proxy setting (``HTTP_PROXY``, honoured by the OpenAI SDK's HTTP client), so
the keys recorded are those a replay computes, whatever port the server had.

Rerun it after changing a BQA prompt, the responder, the frame settings or the sample's clips (the
frames' bytes are part of every key).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bqa.bold import read_bold
from bqa.candidates import CandidateError, extract_candidates
from bqa.sample import sample_root
from builders.bqa_pipeline.runner import BuildSummary, build
from builders.bqa_pipeline.sample_replay import REPLIES_FILE, SAMPLE_DIR, SETTINGS_FILE, SampleRecording
from builders.frame_spec import FrameSpec
from builders.jsonio import write_json_atomic
from builders.llm import LLMClient, LLMSettings, export_replies
from builders.steps import DEFAULT_CACHE
from builders.testing.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer

RECORDING = SampleRecording(
    settings=LLMSettings(
        model="scripted-bqa-sample",
        base_url="http://scripted-bqa-sample.invalid/v1",
        api_key_env=None,
        temperature=0.0,
        seed=0,
        progress=False,
    ),
    seed=0,
    frames=FrameSpec(fps=1.0),
    limit=None,
    responder={"accuracy": 0.6},
)


def oracle(recording: SampleRecording = RECORDING) -> dict[tuple[str, ...], str]:
    """STEP1's answer of each sample row, keyed by its choices in the order shown."""
    answers = {}
    for row in read_bold(sample_root()).annotations:
        try:
            c = extract_candidates(row.emotions, key=row.id, seed=recording.seed)
        except CandidateError:
            continue
        answers[c.choices] = c.answer
    return answers


def record(
    out_dir: str | Path = SAMPLE_DIR,
    work_dir: str | Path | None = None,
    recording: SampleRecording = RECORDING,
) -> tuple[BuildSummary, ChatServer]:
    """Build the sample against the scripted responder, write ``replies.jsonl`` and ``llm_settings.json``
    to ``out_dir``; returns the build summary and the (stopped) server, whose request log stays readable."""
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="bqa-record-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp) / "work"
        with ChatServer(model=None) as server, server.as_http_proxy():
            server.handler = BQAResponder(answers=oracle(recording), **recording.responder)
            with LLMClient(recording.settings, cache_path=work / DEFAULT_CACHE) as client:
                summary = build(work, recording.options(), client)
        if server.errors:
            raise RuntimeError(f"the scripted responder failed: {server.errors[:3]}")
        if not summary.ok:
            raise RuntimeError(f"the recording build did not finish:\n{summary.format()}")
        export_replies(work / DEFAULT_CACHE, out_dir / REPLIES_FILE, stable=True)
        write_json_atomic(out_dir / SETTINGS_FILE, recording.to_json())
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
    print(f"{len(server.chat_requests)} requests recorded to {args.out / REPLIES_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
