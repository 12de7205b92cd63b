"""Frame rules by name: each rule against its formula on many (T, N, fps) cases, the issue's
hand-worked cases, and exact pixels for whatever indices a rule picks.

Expected indices come from the harnesses' formulas written out here as the sources state them
(lmms-eval v0.7.2 ``load_video.py`` / ``openai.py``; VLMEvalKit ``video_base.py``) or from exact
integer arithmetic, never from :mod:`builders.video.frame_rules`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import av
import numpy as np
import pytest

from builders.testing.clips import read_frame_code, write_clip
from builders.video.frame_rules import RULES, ClipTiming, rule_indices
from builders.video.frame_spec import FrameSpec

TOTALS = [1, 2, 3, 7, 16, 17, 25, 30, 48, 97, 125, 150, 301, 1000, 1801]
COUNTS = [1, 2, 3, 4, 8, 15, 16, 32, 64]
RATES = [Fraction(24000, 1001), Fraction(25), Fraction(30), Fraction(60), Fraction(12)]
FPS = [0.25, 0.5, 1.0, 2.0, 3.0, 10.0]


def timing(total: int, rate: Fraction) -> ClipTiming:
    return ClipTiming(total, [Fraction(i) / rate for i in range(total)], float(rate))


def exact_round_linspace(total: int, n: int) -> list[int]:
    """round(linspace(0, T-1, N)) with exact fractions and Python's half-to-even round."""
    if n == 1:
        return [0]
    return [round(Fraction(i * (total - 1), n - 1)) for i in range(n)]


def test_issue_example_125_frames():
    clip = timing(125, Fraction(25))
    uniform = rule_indices("uniform", clip, 16)
    lmms = rule_indices("lmms-eval", clip, 16)
    vlm = rule_indices("vlmevalkit", clip, 16)
    assert uniform == exact_round_linspace(125, 16)
    # by hand: floor(i * 124 / 15) and floor(i * 125 / 17)
    assert lmms == [0, 8, 16, 24, 33, 41, 49, 57, 66, 74, 82, 90, 99, 107, 115, 124]
    assert vlm == [7, 14, 22, 29, 36, 44, 51, 58, 66, 73, 80, 88, 95, 102, 110, 117]
    assert sum(a != b for a, b in zip(uniform, lmms, strict=True)) == 7
    assert sum(a != b for a, b in zip(uniform, vlm, strict=True)) == 14
    # 1 fps over 5 s: lmms-eval spreads int(5 * 1) frames over the whole clip
    assert rule_indices("lmms-eval", clip, 64, 1.0) == [0, 31, 62, 93, 124]
    assert rule_indices("lmms-eval", clip, None, 1.0) == [0, 31, 62, 93, 124]
    assert rule_indices("uniform", clip, None, 1.0) == [0, 25, 50, 75, 100]
    assert rule_indices("vlmevalkit", clip, None, 1.0) == [0, 25, 50, 75, 100]
    assert rule_indices("lmms-eval-openai", clip, None, 1.0) == [0, 25, 50, 75, 100, 124]
    assert rule_indices("lmms-eval-openai", clip, 16) == lmms


@pytest.mark.parametrize("total", TOTALS)
def test_uniform_is_rounded_linspace(total):
    for n in COUNTS:
        if n <= total:
            got = rule_indices("uniform", timing(total, Fraction(25)), n)
            assert got == np.round(np.linspace(0, total - 1, n)).astype(int).tolist()
            # Exact half-to-even rounding, except at exact ties, where the float linspace decides
            # (T=30, N=15: 14.5 comes out a hair above, so 15).
            exact = exact_round_linspace(total, n)
            ties = {i for i in range(n) if n > 1 and Fraction(i * (total - 1), n - 1).denominator == 2}
            assert all(got[i] == exact[i] for i in range(n) if i not in ties)


@pytest.mark.parametrize("total", TOTALS)
def test_lmms_eval_num_frames(total):
    for n in COUNTS:
        got = rule_indices("lmms-eval", timing(total, Fraction(25)), n)
        count = min(n, total)
        # lmms-eval: np.linspace(0, total_frames - 1, sampled_frm, dtype=int)
        assert got == np.linspace(0, total - 1, count, dtype=int).tolist()
        # and, away from float ties, the exact floor
        exact = [0] if count == 1 else [i * (total - 1) // (count - 1) for i in range(count)]
        assert all(abs(a - b) <= 1 for a, b in zip(got, exact, strict=True))
        assert sum(a != b for a, b in zip(got, exact, strict=True)) <= 1


@pytest.mark.parametrize(("total", "rate"), list(itertools.product(TOTALS, RATES)))
def test_lmms_eval_fps_caps_the_count(total, rate):
    for fps, cap in itertools.product(FPS, [None, 8, 32]):
        got = rule_indices("lmms-eval", timing(total, rate), cap, fps)
        count = min(total if cap is None else min(cap, total), int(total / float(rate) * fps))
        assert got == np.linspace(0, total - 1, max(1, count), dtype=int).tolist()


@pytest.mark.parametrize("total", TOTALS)
def test_vlmevalkit_num_frames(total):
    for n in COUNTS:
        got = rule_indices("vlmevalkit", timing(total, Fraction(30)), n)
        step = total / (n + 1)  # VLMEvalKit: step_size = len(vid) / (self.nframe + 1)
        assert got == [int(i * step) for i in range(1, n + 1)]
        assert got == [i * total // (n + 1) for i in range(1, n + 1)] or any(
            math.isclose(i * total / (n + 1), round(i * total / (n + 1))) for i in range(1, n + 1)
        )
        assert 0 <= min(got) and max(got) < total


@pytest.mark.parametrize(("total", "rate"), list(itertools.product(TOTALS, RATES)))
def test_vlmevalkit_fps(total, rate):
    for fps in FPS:
        clip = timing(total, rate)
        required = int(total / float(rate) * fps)
        if required == 0:
            with pytest.raises(ValueError, match="picks no frame"):
                rule_indices("vlmevalkit", clip, None, fps)
            continue
        step = float(rate) / fps
        assert rule_indices("vlmevalkit", clip, None, fps) == [int(i * step) for i in range(required)]


@pytest.mark.parametrize(("total", "rate"), list(itertools.product(TOTALS, RATES)))
def test_lmms_eval_openai(total, rate):
    last = total - 1
    for n in COUNTS:
        chosen = np.linspace(0, last, min(n, total), dtype=int).tolist()
        assert rule_indices("lmms-eval-openai", timing(total, rate), n) == sorted({*chosen, last})
    for fps, cap in itertools.product(FPS, [None, 4, 16]):
        step = max(1, int(round(float(rate) / fps)))
        idx = list(range(0, total, step))
        if idx[-1] != last:
            idx.append(last)
        if cap is not None and len(idx) > cap:
            idx = [idx[k] for k in np.linspace(0, len(idx) - 1, cap, dtype=int)]
            if idx[-1] != last:
                idx.append(last)
        assert rule_indices("lmms-eval-openai", timing(total, rate), cap, fps) == sorted(set(idx))


def test_bad_requests_are_clear():
    clip = timing(50, Fraction(25))
    with pytest.raises(ValueError, match="unknown frame rule 'decord'"):
        rule_indices("decord", clip, 4)
    with pytest.raises(ValueError, match="not both"):
        rule_indices("vlmevalkit", clip, 4, 1.0)
    with pytest.raises(ValueError, match="positive integer"):
        rule_indices("lmms-eval", clip, 0)
    with pytest.raises(ValueError, match="average frame rate"):
        rule_indices("lmms-eval", ClipTiming(50, clip.times, None), None, 1.0)
    with pytest.raises(ValueError, match="exactly one"):
        FrameSpec(fps=1.0, num_frames=4)
    with pytest.raises(ValueError, match="unknown frame rule"):
        FrameSpec(fps=1.0, rule="nope")
    FrameSpec(fps=1.0, num_frames=4, rule="lmms-eval")  # lmms-eval's cap


def test_frame_spec_records_the_rule():
    spec = FrameSpec(fps=None, num_frames=8, rule="vlmevalkit", video_input="video")
    assert spec.to_json() == {"fps": None, "num_frames": 8, "max_side": None, "rule": "vlmevalkit",
                              "video_input": "video"}  # fmt: skip
    assert FrameSpec.from_json(spec.to_json()) == spec
    assert FrameSpec.from_json({"fps": 1.0, "num_frames": None, "max_side": None}) == FrameSpec(fps=1.0)
    assert FrameSpec(fps=1.0, rule="lmms-eval").describe(5) == "5 frames spread evenly over the clip"
    assert FrameSpec(fps=1.0, rule="vlmevalkit").describe(5) == "5 frames taken at 1 frame per second"


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """4.84 s at 25 fps with B-frames: each frame carries its number (read_frame_code)."""
    return write_clip(tmp_path_factory.mktemp("rules") / "clip.mp4", num_frames=121, gop=20)


def full_decode(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize(("num_frames", "fps"), [(16, None), (7, None), (None, 1.0), (None, 2.5)])
def test_pixels_exact_for_every_rule(clip, rule, num_frames, fps):
    everything = full_decode(clip)
    frames = FrameSpec(fps=fps, num_frames=num_frames, rule=rule).sample(clip)
    with av.open(str(clip)) as container:
        rate = container.streams.video[0].average_rate
    expected = rule_indices(rule, timing(len(everything), Fraction(rate)), num_frames, fps)
    assert frames.indices == expected
    for k, index in enumerate(frames.indices):
        assert np.array_equal(frames.frames[k], everything[index])
        assert read_frame_code(frames.frames[k]) == index
