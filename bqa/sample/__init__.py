"""A small bundled BoLD-format source for the demo and the tests.

``bold/`` has BoLD's layout (see :mod:`bqa.bold`): 38 annotation rows (``annotations/train.csv``,
``annotations/val.csv``) over 36 synthetic 5 s clips (125 frames at 25 fps, 160x120 H.264, with an
AAC audio track that the pipeline removes) from 6 "films" in 3 folders. The rows cover all 26
emotions as the top score (so all 4 groups are answers), every gender, age and ethnicity code,
a clip with two annotated persons, and a tie for the top score (decided by BoLD order).
The frames carry their own index (:func:`builders.testing.clips.read_frame_code`).

It was written by ``python -m builders.testing.samples.make_bqa_sample`` (deterministic; see that module).

``pipeline_replies.jsonl`` and ``pipeline_settings.json`` are the LLM replies (and the settings they were recorded
with) that rebuild the sample release offline: ``vqabench bqa build --sample --replay --work DIR``.
They come from a scripted test responder, not from a model (``python -m builders.testing.samples.record_bqa_pipeline``).

``baseline_replies.jsonl`` and ``baseline_settings.json`` are the recorded answers of a *scripted
baseline* (not a model) to the rebuilt release's questions, which ``vqabench demo`` replays and scores
(``python -m builders.testing.samples.record_bqa_baseline`` re-records them after the release changes).
"""

from __future__ import annotations

from pathlib import Path


def sample_root() -> Path:
    """The bundled BoLD root (``annotations/`` and ``videos/``), ready for :func:`bqa.bold.read_bold`."""
    return Path(__file__).resolve().parent / "bold"
