"""Record the scripted baseline's BQA answers that ``vqabench demo`` scores: ``python -m builders.testing.samples.record_bqa_baseline``.

There is no model here. The sample is rebuilt from its recorded pipeline replies and exported (as
the demo does), then the BQA evaluation runner asks every question of every split in both prompt
styles of a local :class:`~builders.testing.chat_server.ChatServer`, whose replies come from
:class:`builders.scripted.baseline_responder.BaselineModel` with the release's answers as its oracle
(right more often on Easy items than on Hard ones, some replies unparsable, some rationales giving
the answer away). Writes next to this file (or under ``--out``):

* ``baseline_replies.jsonl`` - the reply cache, exported with times zeroed (re-recording without
  changes gives the same bytes);
* ``baseline_settings.json`` - the LLM settings of the cache keys and the evaluation options
  (frames, styles, splits), which the demo's replay uses.

The settings name a fixed, never-resolving endpoint (``http://scripted-baseline.invalid/v1``); the
requests reach the local server as the client's proxy (:attr:`ChatServer.proxy_url`). Rerun after changing a
BQA answer prompt, the runner, the responder, the sample or its recorded pipeline replies (the
frames' bytes and the questions are part of every key).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

import datasets

from bqa.features import SPLITS
from builders.demo.baseline import predict_bqa
from builders.demo.recordings import BASELINE, BQA_SAMPLE_DIR, SCRIPTED_NOTE
from builders.demo.samples import rebuild_bqa
from builders.hub.splits import read_split
from builders.llm import Recording
from builders.scripted.baseline_responder import BaselineModel
from builders.testing.recorder import recording_session, scripted_settings
from builders.video.frame_spec import FrameSpec

REPORTED_MODEL = "scripted-baseline-responder"
RESPONDER = {"easy": 0.8, "hard": 0.4, "unparsed": 0.06}
RECORDING = Recording(
    folder=BQA_SAMPLE_DIR,
    name=BASELINE,
    settings=scripted_settings("scripted-baseline"),
    options={
        "frames": FrameSpec(fps=None, num_frames=16).to_json(),  # the paper's setting for open models
        "styles": ["single_word", "multimodal_cot"],  # the paper's Test and Test (CoT) columns
        "splits": list(SPLITS),
        "responder": RESPONDER,
    },
    note=f"BQA answers of a {SCRIPTED_NOTE} (builders/scripted/baseline_responder.py) on the bundled sample, "
    "recorded by 'python -m builders.testing.samples.record_bqa_baseline' for 'vqabench demo'; they say nothing about any model.",
)


def oracle(hub: str | Path) -> dict[tuple[str, ...], tuple[str, str]]:
    """Every item's choices (in the order shown) -> (correct label, difficulty), over all splits."""
    answers = {}
    for split in RECORDING.options["splits"]:
        for row in read_split(hub, split, "default", ["choices", "answer", "difficulty"]):
            answers[tuple(row["choices"])] = (row["answer"], row["difficulty"])
    return answers


def record(out_dir: str | Path = BQA_SAMPLE_DIR, hub: str | Path | None = None) -> Recording:
    """Record into ``out_dir``; ``hub``: an exported sample folder to evaluate (default: rebuild one)."""
    recording = replace(RECORDING, folder=Path(out_dir))
    with tempfile.TemporaryDirectory(prefix="bqa-baseline-") as tmp:
        root = Path(tmp)
        if hub is None:
            hub = rebuild_bqa(root / "work", root / "hub", root / "cache").hub
        handler = BaselineModel(
            bqa=oracle(hub), easy=RESPONDER["easy"], hard=RESPONDER["hard"], unparsed=RESPONDER["unparsed"]
        )
        session = recording_session(recording, handler, root / "llm-cache.sqlite", REPORTED_MODEL)
        with session as (client, _):
            predict_bqa(recording, hub, client, root / "eval", root / "predictions")
    return recording


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BQA_SAMPLE_DIR, help="folder for the two files")
    args = parser.parse_args(argv)
    datasets.disable_progress_bars()
    recording = record(args.out)
    print(f"wrote {recording.replies_path} and {recording.settings_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
