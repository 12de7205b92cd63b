"""Record the scripted baseline's MarineLife-16K answers and the scripted judge's scores of them, which
``vqabench demo`` replays: ``python -m builders.testing.samples.record_marinelife_baseline``.

There is no model here. The sample is rebuilt from its recorded pipeline replies and exported (as
the demo does); the MarineLife-16K evaluation runner then asks every question of every split of a
local :class:`~builders.testing.chat_server.ChatServer` answering with
:class:`builders.scripted.baseline_responder.BaselineModel` (it recognises each video by its frames
and knows the answers: right per question type at uneven rates, open-ended answers and captions of
four levels of quality), and the judge metric's rubrics score the open-ended answers through
:class:`~builders.scripted.baseline_responder.ScriptedJudge` (scores from word overlap with the
ground truth). Writes next to this file (or under ``--out``):

* ``baseline_replies.jsonl`` / ``baseline_settings.json`` - the answers and their settings (frames, splits);
* ``judge_replies.jsonl`` / ``judge_settings.json`` - the judge's scores and its settings (rubrics).

Replies are exported with times zeroed, so recording again without changes gives the same bytes.
Both settings name fixed, never-resolving endpoints (``http://scripted-*.invalid/v1``), reached
through the server as the client's proxy (:attr:`ChatServer.proxy_url`). Rerun after changing the runner's prompt, a judge rubric,
the responders, the sample or its recorded pipeline replies.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import datasets

from builders.demo.baseline import predict_marinelife
from builders.demo.recordings import BASELINE, JUDGE, MARINE_SAMPLE_DIR, SCRIPTED_NOTE
from builders.demo.samples import rebuild_marinelife
from builders.evaluation.marinelife import judge
from builders.files.jsonio import read_jsonl
from builders.llm import Recording
from builders.scripted.baseline_responder import BaselineModel, ScriptedJudge
from builders.scripted.chat_requests import frames_digest
from builders.testing.recorder import recording_session, scripted_settings
from builders.video.frame_spec import FrameSpec
from marinelife16k.data import open_split
from marinelife16k.rubrics import JUDGE_TASKS
from marinelife16k.splits import SPLITS

BASELINE_RECORDING = Recording(
    folder=MARINE_SAMPLE_DIR,
    name=BASELINE,
    settings=scripted_settings("scripted-baseline"),
    options={"frames": FrameSpec(fps=None, num_frames=8).to_json(), "splits": list(SPLITS)},
    note=f"MarineLife-16K answers of a {SCRIPTED_NOTE} (builders/scripted/baseline_responder.py) on the bundled "
    "sample, recorded by 'python -m builders.testing.samples.record_marinelife_baseline' for 'vqabench demo'.",
)
JUDGE_RECORDING = Recording(
    folder=MARINE_SAMPLE_DIR,
    name=JUDGE,
    settings=scripted_settings("scripted-judge"),
    options={"rubrics": {task: judged.rubric for task, judged in JUDGE_TASKS.items()}},
    note="Judge scores of the scripted baseline's open-ended answers from a scripted judge (word overlap with "
    "the ground truth; builders/scripted/baseline_responder.py), not from an LLM judge.",
)
REPORTED = {BASELINE: "scripted-baseline-responder", JUDGE: "scripted-judge-responder"}


def oracle(
    hub: str | Path, frames: FrameSpec
) -> dict[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]:
    """Frames digest of each video, as the runner sends them -> (video row, its QA records)."""
    videos: dict[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]] = {}
    for split in BASELINE_RECORDING.options["splits"]:
        data = open_split(hub, split)
        for video_id, row in data.videos.items():
            digest = frames_digest(frames.data_urls(data.video(video_id)))
            videos[digest] = (row, [r for r in data.rows if r["id"] == video_id])
    return videos


def record(
    out_dir: str | Path = MARINE_SAMPLE_DIR, hub: str | Path | None = None
) -> tuple[Recording, Recording]:
    """Record both into ``out_dir``; ``hub``: an exported sample folder to evaluate (default: rebuild one)."""
    baseline = replace(BASELINE_RECORDING, folder=Path(out_dir))
    judge_recording = replace(JUDGE_RECORDING, folder=Path(out_dir))
    frames = FrameSpec.from_json(baseline.options["frames"])
    with tempfile.TemporaryDirectory(prefix="marinelife-baseline-") as tmp:
        root = Path(tmp)
        if hub is None:
            hub = rebuild_marinelife(root / "work", root / "hub", root / "cache").hub
        model = BaselineModel(marine_videos=oracle(hub, frames))
        session = recording_session(baseline, model, root / "baseline.sqlite", REPORTED[BASELINE])
        with session as (client, _):
            paths = predict_marinelife(baseline, hub, client, root / "eval", root / "predictions")
        predictions = [row for path in paths.values() for row in read_jsonl(path)]
        session = recording_session(judge_recording, ScriptedJudge(), root / "judge.sqlite", REPORTED[JUDGE])
        with session as (client, _):
            results = judge(predictions, client)
            failed = {task: r.failed[:3] for task, r in results.items() if r.n_failed}
            if failed:  # raised inside the session: nothing is exported
                raise RuntimeError(f"judgements failed while recording: {failed}")
    return baseline, judge_recording


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=MARINE_SAMPLE_DIR, help="folder for the four files")
    args = parser.parse_args(argv)
    datasets.disable_progress_bars()
    for recording in record(args.out):
        print(f"wrote {recording.replies_path} and {recording.settings_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
