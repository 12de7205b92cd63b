"""Frame sampling is exact: every path of ``builders.video.sampler`` gives the frames of a full sequential decode.

Clips are real MP4s written with PyAV (H.264 with B-frames and several keyframes, single-keyframe
clips with and without B-frames, HEVC, MPEG-4 Part 2, VP9). The reference is a plain PyAV decode
of every frame; the frame number painted into each frame checks indices independently of both.
"""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from builders.testing.clips import packet_summary, read_frame_code, write_clip
from builders.video.index import fps_indices, plan_segments, uniform_indices
from builders.video.remux import remove_audio
from builders.video.sampler import ClipReader, output_size, sample_frames

T = 125  # frames per test clip (5 s at 25 fps)

CLIPS = {
    # name: write_clip arguments
    "h264_gops_b": dict(gop=25, bframes=2, audio=True),
    "h264_one_key_p": dict(gop=1000, bframes=0),
    "h264_one_key_b": dict(gop=1000, bframes=3),
    "h264_gop7_b": dict(gop=7, bframes=3, width=150, height=100),
    "hevc_gops_b": dict(codec="libx265", gop=20, bframes=3),
    "mpeg4_gops_b": dict(codec="mpeg4", gop=25, bframes=2),
    "vp9_gops": dict(codec="libvpx-vp9", gop=30, bframes=0),
}
MULTI_GOP = ["h264_gops_b", "h264_gop7_b", "hevc_gops_b", "mpeg4_gops_b", "vp9_gops"]


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("clips")
    return {
        name: write_clip(folder / f"{name}.mp4", num_frames=T, seed=k, **kwargs)
        for k, (name, kwargs) in enumerate(CLIPS.items())
    }


@pytest.fixture(scope="module")
def reference(clips) -> dict[str, list[np.ndarray]]:
    """Every frame of every clip from a plain sequential PyAV decode."""
    out = {}
    for name, path in clips.items():
        with av.open(str(path)) as container:
            out[name] = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    return out


def assert_frames_equal(frames: np.ndarray, indices: list[int], ref: list[np.ndarray]) -> None:
    assert frames.shape[0] == len(indices)
    for k, i in enumerate(indices):
        assert np.array_equal(frames[k], ref[i]), f"slot {k}: frame {i} differs from the full decode"


def test_clip_writer_gives_the_asked_structure(clips, reference):
    gops = packet_summary(clips["h264_gops_b"])
    assert gops.num_frames == T and gops.keyframes == [0, 25, 50, 75, 100] and gops.has_audio
    assert gops.num_b_frames > 0
    single_p = packet_summary(clips["h264_one_key_p"])
    assert single_p.keyframes == [0] and set(single_p.pict_types) == {"I", "P"}
    single_b = packet_summary(clips["h264_one_key_b"])
    assert single_b.keyframes == [0] and single_b.num_b_frames > 0
    assert packet_summary(clips["hevc_gops_b"]).num_b_frames > 0
    # Each frame carries its own number, readable after lossy coding.
    for name, frames in reference.items():
        assert [read_frame_code(f) for f in frames] == list(range(T)), name


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(CLIPS))
def test_every_frame_equals_full_decode(clips, reference, name, threads):
    with ClipReader(clips[name], threads=threads) as reader:
        assert reader.num_frames == len(reference[name]) == T
        got = reader.get_frames_at(list(range(T)))
    assert_frames_equal(got.frames, list(range(T)), reference[name])


@pytest.mark.parametrize("name", list(CLIPS))
def test_random_index_lists_equal_full_decode(clips, reference, name):
    rng = random.Random(name)
    with ClipReader(clips[name], threads=2) as reader:
        for _ in range(12):  # one reader, many calls: seeks back and forth between calls
            indices = [rng.randrange(T) for _ in range(rng.randrange(1, 24))]
            got = reader.get_frames_at(indices)
            assert got.indices == indices
            assert got.timestamps == pytest.approx([i / 25 for i in indices], abs=1e-9)
            assert_frames_equal(got.frames, indices, reference[name])


def test_strategies_cover_parallel_and_streaming(clips):
    for name in MULTI_GOP:
        with ClipReader(clips[name], threads=2) as reader:
            index = reader.index
            keyframes = [index.frame_at[p] for p, key in enumerate(index.keyframe) if key]
            assert len(keyframes) >= 4, name
            assert reader.strategy(keyframes) == "parallel", name
        with ClipReader(clips[name], threads=1) as reader:
            assert reader.strategy(keyframes) == "streaming", name
    with ClipReader(clips["h264_gops_b"], threads=2) as reader:
        assert reader.strategy(reader.sample_indices(16)) == "parallel"
    for name in ["h264_one_key_p", "h264_one_key_b"]:
        with ClipReader(clips[name], threads=2) as reader:
            assert reader.strategy(reader.sample_indices(16)) == "streaming", name


def test_open_gop_leading_frames_decode_from_the_previous_keyframe(clips, reference):
    # PyAV's MPEG-4 Part 2 encoder writes open GOPs: the B-frames decoded right after an I-frame
    # are shown before it and predict from the previous GOP.
    with ClipReader(clips["mpeg4_gops_b"], threads=2) as reader:
        index = reader.index
        keys = [p for p, key in enumerate(index.keyframe) if key and p > 0]
        leading = [index.frame_at[k + 1] for k in keys if index.frame_at[k + 1] < index.frame_at[k]]
        assert leading, "expected an open-GOP clip"
        for frame in leading:
            (segment,) = plan_segments(index, [frame])
            own_keyframe = max(k for k in keys if k < index.packet_of[frame])
            assert index.keyframe[segment.start] and segment.start < own_keyframe
        got = reader.get_frames_at(leading)
    assert_frames_equal(got.frames, leading, reference["mpeg4_gops_b"])


def test_segments_start_at_keyframes_before_their_frames(clips):
    with ClipReader(clips["h264_gops_b"]) as reader:
        index = reader.index
        wanted = reader.sample_indices(16)
        segments = plan_segments(index, wanted)
    assert sorted(f for s in segments for f in s.frames) == sorted(set(wanted))
    for s in segments:
        assert index.keyframe[s.start]
        assert all(s.start <= index.packet_of[f] <= s.end for f in s.frames)
        assert s.end == max(index.packet_of[f] for f in s.frames)  # nothing decoded past the last
    # Keyframes every 25 frames: segments start at frames 0, 25, 50, 75, 100.
    assert [index.frame_at[s.start] for s in segments] == [0, 25, 50, 75, 100]


def test_uniform_sampling_indices_and_pixels(clips, reference):
    got = sample_frames(clips["h264_gops_b"], num_frames=16)
    expected = [round(Fraction(k * (T - 1), 15)) for k in range(16)]  # exact rational rounding
    assert got.indices == expected and got.indices[0] == 0 and got.indices[-1] == T - 1
    assert got.total_frames == T
    assert [read_frame_code(f) for f in got.frames] == expected
    assert got.frames.dtype == np.uint8 and got.frames.shape == (16, 120, 160, 3)
    assert got.frames.flags.c_contiguous
    assert_frames_equal(got.frames, expected, reference["h264_gops_b"])


def test_uniform_indices_formula():
    assert uniform_indices(10, 1) == [0]
    assert uniform_indices(10, 10) == list(range(10))
    assert uniform_indices(10, 3) == [0, 4, 9]  # 4.5 rounds half to even, as numpy does
    for total, n in [(125, 16), (250, 16), (17, 16), (1000, 7)]:
        assert uniform_indices(total, n) == np.round(np.linspace(0, total - 1, n)).astype(int).tolist()


def test_fps_mode(clips, reference):
    path = clips["h264_gops_b"]
    one = sample_frames(path, fps=1)
    assert one.indices == [0, 25, 50, 75, 100]
    assert one.timestamps == pytest.approx([0, 1, 2, 3, 4])
    assert_frames_equal(one.frames, one.indices, reference["h264_gops_b"])
    two = sample_frames(path, fps=2)
    assert two.indices == [k * 25 // 2 for k in range(10)]  # frame on screen at k/2 s
    slow = sample_frames(path, fps=0.4)
    assert slow.indices == [0, 62]  # 0 s and 2.5 s; 5.0 s is past the last frame (4.96 s)
    # Faster than the video: frames repeat, each decoded once, still exact.
    fast = sample_frames(path, fps=50)
    assert fast.indices == [k // 2 for k in range(2 * T - 1)]
    assert_frames_equal(fast.frames, fast.indices, reference["h264_gops_b"])


def test_fps_indices_on_irregular_timestamps():
    times = [Fraction(0), Fraction(1, 10), Fraction(7, 10), Fraction(8, 10), Fraction(21, 10)]
    # The frame on screen at 0, 1, 2 s (frame 3 is shown from 0.8 s to 2.1 s, when the last starts).
    assert fps_indices(times, 1) == [0, 3, 3]
    assert fps_indices(times, 2) == [0, 1, 3, 3, 3]
    assert fps_indices(times, Fraction(10, 21)) == [0, 4]
    with pytest.raises(ValueError, match="would take 2101 samples from 5 frames"):
        fps_indices(times, 1000)


def test_max_side_keeps_aspect_and_exactness(clips):
    path = clips["h264_gop7_b"]  # 150 x 100
    got = sample_frames(path, num_frames=8, max_side=75)
    assert output_size(150, 100, 75) == (75, 50)
    assert got.frames.shape == (8, 50, 75, 3)
    with av.open(str(path)) as container:
        resized = [
            f.reformat(width=75, height=50, format="rgb24", interpolation="AREA").to_ndarray()
            for f in container.decode(video=0)
        ]
    assert_frames_equal(got.frames, got.indices, resized)
    assert [read_frame_code(f, source_width=150) for f in got.frames] == got.indices
    # Never upscaled; a max_side at least the size is a no-op.
    same = sample_frames(path, num_frames=8, max_side=150)
    assert same.frames.shape == (8, 100, 150, 3)
    assert output_size(100, 150, 75) == (50, 75)


def test_bytes_and_dataset_values_are_sources(clips):
    path = clips["h264_gops_b"]
    data = path.read_bytes()
    expected = sample_frames(path, num_frames=5)
    for source in [
        data,
        bytearray(data),
        memoryview(data),
        {"path": "train/clip.mp4", "bytes": data},
        {"path": None, "bytes": data},
        {"path": str(path), "bytes": None},
    ]:
        got = sample_frames(source, num_frames=5)
        assert got.indices == expected.indices
        assert np.array_equal(got.frames, expected.frames)


@pytest.mark.parametrize("threads", [1, 2])
def test_matroska_copy_is_exact(tmp_path, clips, reference, threads):
    # Matroska packets carry no dts for reordered frames; indexing and seeking must not need it.
    mkv = remove_audio(clips["h264_gops_b"], tmp_path / "clip.mkv")
    rng = random.Random(threads)
    with ClipReader(mkv, threads=threads) as reader:
        assert None in reader.index.dts and reader.num_frames == T
        for _ in range(8):
            indices = [rng.randrange(T) for _ in range(rng.randrange(1, 12))]
            assert_frames_equal(reader.get_frames_at(indices).frames, indices, reference["h264_gops_b"])


def test_reader_is_closed_after_use(clips):
    with ClipReader(clips["h264_gops_b"]) as reader:
        reader.get_frames_at([3])
    with pytest.raises(ValueError, match="closed"):
        reader.get_frames_at([3])
