"""The scripted baseline's evaluation runs over the rebuilt samples, shared by the demo (replayed) and
the recording scripts (live, against the scripted server): one code path, so both send the same
requests and the recorded replies answer every one.

Each run is the project's evaluation runner on an exported Hub-layout folder: BQA with
:func:`builders.evaluation.bqa.evaluate` (per split and prompt style), MarineLife-16K with
:func:`builders.evaluation.marinelife.evaluate` (per split). The recording's options fix the frames, the
styles and the splits, because the frames' bytes are part of every request's key.
"""

from __future__ import annotations

from pathlib import Path

from builders.llm import LLMClient, Recording
from builders.video.frame_spec import FrameSpec

BQA_DATA, MARINE_DATA = "bqa", "marinelife16k"


def bqa_predictions_path(out_dir: str | Path, split: str, style: str) -> Path:
    return Path(out_dir) / f"{split}.{style}.jsonl"


def marine_predictions_path(out_dir: str | Path, split: str) -> Path:
    return Path(out_dir) / f"{split}.jsonl"


def predict_bqa(
    recording: Recording, hub: str | Path, client: LLMClient, work: str | Path, out_dir: str | Path
) -> dict[str, dict[str, Path]]:
    """Predictions of every split and style in ``recording.options``: split -> style -> JSONL path."""
    from bqa.data import open_split
    from builders.evaluation.bqa import evaluate

    frames = FrameSpec.from_json(recording.options["frames"])
    paths: dict[str, dict[str, Path]] = {}
    for split in recording.options["splits"]:
        data = open_split(hub, split)
        for style in recording.options["styles"]:
            out = bqa_predictions_path(out_dir, split, style)
            summary = evaluate(data, client, Path(work) / f"{split}.{style}", out, style=style, frames=frames,
                               identity={"data": BQA_DATA, "split": split})  # fmt: skip
            if summary.out is None:
                raise RuntimeError(f"BQA {split} ({style}) did not finish:\n{summary.format()}")
            paths.setdefault(split, {})[style] = out
    return paths


def predict_marinelife(
    recording: Recording, hub: str | Path, client: LLMClient, work: str | Path, out_dir: str | Path
) -> dict[str, Path]:
    """Predictions of every split in ``recording.options``: split -> JSONL path."""
    from builders.evaluation.marinelife import evaluate
    from marinelife16k.data import open_split

    frames = FrameSpec.from_json(recording.options["frames"])
    paths = {}
    for split in recording.options["splits"]:
        out = marine_predictions_path(out_dir, split)
        data = open_split(hub, split)
        summary = evaluate(data, client, Path(work) / split, out, frames=frames,
                           identity={"data": MARINE_DATA, "split": split})  # fmt: skip
        if summary.out is None:
            raise RuntimeError(f"MarineLife-16K {split} did not finish:\n{summary.format()}")
        paths[split] = out
    return paths
