"""Which frame indices a clip gives for ``num_frames`` or ``fps``: this project's rule and the two
evaluation harnesses' rules, by name.

A rule only chooses indices; the pixels always come from
:meth:`builders.video.sampler.ClipReader.get_frames_at`, so they are exact (a full sequential
decode's) whatever the rule. ``T`` below is the number of frames that decode yields; ``rate`` the
container's average frame rate (FFmpeg's ``avg_frame_rate``: what PyAV's ``average_rate`` and
decord's ``get_avg_fps()`` report).

``uniform`` (the default; the papers' setting)
    ``num_frames=N``: ``round(linspace(0, T-1, N))`` (numpy rounding, half to even), both ends
    included. ``fps=f``: the frame on screen at each ``k/f`` seconds from the first frame, up to
    the last frame's presentation time (exact times; see :func:`builders.video.index.fps_indices`).

``lmms-eval`` (lmms-eval v0.7.2, commit 75571cf, ``lmms_eval/models/model_utils/load_video.py``:
``read_video`` -> ``load_video_stream``, and ``_compute_sample_count`` / ``_compute_uniform_indices``)
    ``linspace(0, T-1, n)`` truncated toward zero (``dtype=int``), with ``n = min(N, T)``.
    With ``fps=f`` the count is capped at ``int(T / rate * f)`` (at least 1) and the frames are
    still spread over the whole clip; ``num_frames`` is then the cap the model was given
    (``max_num_frames``), and without one the fps count alone decides.

``lmms-eval-openai`` (same version, ``lmms_eval/models/simple/openai.py``, ``encode_video``: what
its OpenAI-compatible model sends)
    ``num_frames=N``: the truncated ``linspace(0, T-1, min(N, T))``, plus the last frame when that
    leaves it out (only when ``n = 1``), without repeats. ``fps=f``: every ``s``-th frame from 0
    with ``s = max(1, round(rate / f))``, plus the last frame; when ``num_frames`` caps that list,
    a truncated linspace over its positions keeps ``N`` of them, plus the last frame again.

``vlmevalkit`` (VLMEvalKit commit e8e78f0, 2026-08-18, ``vlmeval/dataset/video_base.py``,
``VideoBaseDataset.save_video_frames``)
    ``num_frames=N``: ``int(i * T / (N+1))`` for ``i = 1..N``: the ends are never taken. ``fps=f``:
    ``int(i * rate / f)`` for ``i`` in ``range(int(T / rate * f))``.

The harness formulas are reimplemented here from their published behaviour (same float operations,
so the same truncations), not copied; ``tests/test_frame_rules.py`` checks each rule against the
formula on many ``(T, N, fps)`` cases. Two differences remain by design: ``T`` is the decoded frame
count (lmms-eval's PyAV path reads the header's count, which a truncated file overstates), and a
rule never returns an index past the last frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from builders.video.sampler import ClipReader

DEFAULT_RULE = "uniform"


@dataclass(frozen=True)
class ClipTiming:
    """What a rule may look at: the decoded frame count, each frame's presentation time (seconds
    from the first frame) and the container's average frame rate (None when it declares none)."""

    total: int
    times: Sequence[Fraction]
    rate: float | None

    @classmethod
    def of_reader(cls, reader: ClipReader) -> ClipTiming:
        """The timing of an open :class:`~builders.video.sampler.ClipReader` (the rate is read from
        the container header again: the reader keeps its stream private)."""
        with reader.source.open() as container:
            rate = container.streams.video[0].average_rate
        return cls(reader.num_frames, reader.index.times(), float(rate) if rate else None)

    def duration_rate(self, rule: str) -> float:
        if not self.rate or self.rate <= 0:
            raise ValueError(
                f"the {rule} rule's fps mode needs the container's average frame rate; none is declared"
            )
        return self.rate


@dataclass(frozen=True)
class FrameRule:
    """A named way to choose frame indices. ``fps_spreads``: in fps mode the frames are spread over
    the whole clip (the prompt must not say "one per second"); ``fps_caps_with_num_frames``: fps mode
    also takes ``num_frames``, as a cap."""

    name: str
    pick: Callable[[ClipTiming, int | None, float | None], list[int]]
    source: str  # where the rule comes from, for --help and docs
    fps_spreads: bool = False
    fps_caps_with_num_frames: bool = False


NO_REQUEST = "give num_frames or fps"


def _truncated_linspace(stop: int, count: int) -> list[int]:
    """``np.linspace(0, stop, count, dtype=int)``: evenly spaced, truncated toward zero."""
    import numpy as np  # lazy, like every PyAV/numpy import here: FrameSpec's options import this module

    return [int(v) for v in np.linspace(0, stop, count).astype(int)]


def _uniform(clip: ClipTiming, num_frames: int | None, fps: float | None) -> list[int]:
    from builders.video.index import fps_indices, uniform_indices  # lazy: loads PyAV

    if num_frames is not None:
        return uniform_indices(clip.total, num_frames)
    if fps is None:
        raise ValueError(NO_REQUEST)
    return fps_indices(clip.times, fps)


def _lmms_eval(clip: ClipTiming, num_frames: int | None, fps: float | None) -> list[int]:
    count = clip.total if num_frames is None else min(num_frames, clip.total)
    if fps is not None:
        rate = clip.duration_rate("lmms-eval")
        count = min(count, int(clip.total / rate * fps))
    return _truncated_linspace(clip.total - 1, max(1, count))


def _lmms_eval_openai(clip: ClipTiming, num_frames: int | None, fps: float | None) -> list[int]:
    last = clip.total - 1
    if fps is None:
        if num_frames is None:
            raise ValueError(NO_REQUEST)
        chosen = _truncated_linspace(last, min(num_frames, clip.total))
        return sorted(set([*chosen, last]))
    step = max(1, int(round(clip.duration_rate("lmms-eval-openai") / fps)))
    chosen = list(range(0, clip.total, step))
    if chosen[-1] != last:
        chosen.append(last)
    if num_frames is not None and len(chosen) > num_frames:
        chosen = [chosen[k] for k in _truncated_linspace(len(chosen) - 1, num_frames)]
        if chosen[-1] != last:
            chosen.append(last)
    return sorted(set(chosen))


def _vlmevalkit(clip: ClipTiming, num_frames: int | None, fps: float | None) -> list[int]:
    if num_frames is not None:
        step = clip.total / (num_frames + 1)
        return [int(i * step) for i in range(1, num_frames + 1)]
    if fps is None:
        raise ValueError(NO_REQUEST)
    rate = clip.duration_rate("vlmevalkit")
    required = int(clip.total / rate * fps)
    step = rate / fps
    return [min(int(i * step), clip.total - 1) for i in range(required)]


RULES: dict[str, FrameRule] = {
    rule.name: rule
    for rule in (
        FrameRule("uniform", _uniform, "this project and the papers: round(linspace(0, T-1, N)); exact fps times"),
        FrameRule(
            "lmms-eval", _lmms_eval, "lmms-eval v0.7.2 read_video: int(linspace(0, T-1, N)); fps caps N",
            fps_spreads=True, fps_caps_with_num_frames=True,
        ),
        FrameRule(
            "lmms-eval-openai", _lmms_eval_openai,
            "lmms-eval v0.7.2 OpenAI-compatible model: int(linspace) + last frame; fps: every round(rate/fps)-th",
            fps_caps_with_num_frames=True,
        ),
        FrameRule("vlmevalkit", _vlmevalkit, "VLMEvalKit VideoBaseDataset: int(i*T/(N+1)), i=1..N; fps: int(i*rate/fps)"),
    )
}  # fmt: skip


def get_rule(name: str) -> FrameRule:
    try:
        return RULES[name]
    except KeyError:
        raise ValueError(f"unknown frame rule {name!r}; expected one of {sorted(RULES)}") from None


def check_request(rule: str, num_frames: int | None, fps: float | None) -> None:
    """A clear ValueError unless ``rule`` takes this combination of ``num_frames`` and ``fps``."""
    spec = get_rule(rule)
    if fps is None and num_frames is None:
        raise ValueError(NO_REQUEST)
    if fps is not None and num_frames is not None and not spec.fps_caps_with_num_frames:
        raise ValueError(f"the {rule} frame rule takes num_frames or fps, not both")
    if fps is not None and (isinstance(fps, bool) or not math.isfinite(fps) or fps <= 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    if num_frames is not None and (
        isinstance(num_frames, bool) or not isinstance(num_frames, int) or num_frames < 1
    ):
        raise ValueError(f"num_frames must be a positive integer, got {num_frames!r}")


def rule_indices(
    rule: str, clip: ClipTiming, num_frames: int | None = None, fps: float | None = None
) -> list[int]:
    """The frame indices ``rule`` picks from ``clip`` (ValueError on a bad request or clip)."""
    check_request(rule, num_frames, fps)
    if clip.total < 1:
        raise ValueError("the clip has no frames")
    indices = get_rule(rule).pick(clip, num_frames, fps)
    if not indices:
        raise ValueError(f"the {rule} rule picks no frame from a clip of {clip.total} frames at fps={fps}")
    return indices


def reader_indices(
    reader: ClipReader, rule: str, num_frames: int | None = None, fps: float | None = None
) -> list[int]:
    """``rule``'s indices for an open reader; ``uniform`` is the reader's own
    :meth:`~builders.video.sampler.ClipReader.sample_indices` (VideoError naming the clip on failure)."""
    if rule == DEFAULT_RULE and (num_frames is None) != (fps is None):
        return reader.sample_indices(num_frames, fps)
    from builders.video.source import VideoError  # lazy: loads PyAV

    try:
        return rule_indices(rule, ClipTiming.of_reader(reader), num_frames, fps)
    except ValueError as err:
        if isinstance(err, VideoError):
            raise
        raise VideoError(f"cannot sample {reader.name}: {err}") from err
