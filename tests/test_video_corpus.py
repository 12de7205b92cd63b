"""The sampler on the files users really have: each clip of a corpus of messy shapes, against a full decode.

Shapes PyAV writes are generated here (:mod:`builders.testing.corpus`): AVI (H.264 with
B-frames, MPEG-4 with and without B-frames, MJPEG, VFR with dropped-frame chunks, MPEG-4 known to
FFmpeg by its XVID fourcc only), VP8 WebM with alternate reference frames, raw H.264
and HEVC streams without timestamps, H.264 intra refresh, an HEVC cut at a CRA picture, two
MPEG-TS files spliced byte-wise (same size and a size change), cover art, rotation. Stream-copy
cuts that start mid-GOP are ffmpeg-made fixtures (``tests/fixtures/video/make_fixtures.sh``).

The reference is written here, independently of the sampler: a plain PyAV demux-and-decode of
the main stream, which ends (after draining the decoder) where a packet cannot be decoded.
"""

from __future__ import annotations

import io
import itertools
import logging
import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from builders.testing.clips import read_frame_code, write_clip
from builders.testing.corpus import (
    CAN_WRITE_ROTATION,
    anonymous_mpeg4,
    concatenate,
    corrupt_packet,
    patch_x264_build,
    remux,
    write_encoded,
)
from builders.video import index as index_module
from builders.video.bitstream import h264_sps, is_random_access, x264_build, x264_build_matters
from builders.video.index import plan_segments
from builders.video.sampler import ClipReader, sample_frames
from builders.video.source import VideoError

FIXTURES = Path(__file__).parent / "fixtures" / "video"
FIXTURE_CLIPS = sorted(p.name for p in FIXTURES.iterdir() if p.suffix != ".sh")
N = 100  # frames of each generated clip


def _ts(num_frames: int, first: int, seed: int, **kwargs) -> bytes:
    clip = write_encoded(
        io.BytesIO(),
        format="mpegts",
        bframes=2,
        num_frames=num_frames,
        first_number=first,
        seed=seed,
        **kwargs,
    )
    return clip.getvalue()


def _make_corpus(folder: Path) -> dict[str, Path]:
    hevc_open_gop = {"x265-params": "keyint=24:min-keyint=24:open-gop=1:bframes=3:scenecut=0:log-level=error"}
    intra_refresh = {"x264-params": "intra-refresh=1"}
    writers = {
        "avi_h264_b.avi": dict(format="avi", bframes=2),
        "avi_mpeg4.avi": dict(format="avi", codec="mpeg4"),
        "avi_mpeg4_b.avi": dict(format="avi", codec="mpeg4", bframes=2),
        "avi_mjpeg.avi": dict(format="avi", codec="mjpeg", pix_fmt="yuvj420p"),
        "avi_vfr_skips.avi": dict(format="avi", codec="mpeg4", skip=(10, 11, 40, 99)),
        "raw_h264_b.h264": dict(format="h264", bframes=2),
        "raw_hevc.hevc": dict(format="hevc", codec="libx265", options={"x265-params": "log-level=error"}),
        "h264_intra_refresh.mp4": dict(format="mp4", gop=30, options=intra_refresh),
        "h264_intra_refresh.mkv": dict(format="matroska", gop=30, options=intra_refresh),
        "mp4_cover_art.mp4": dict(format="mp4", bframes=2, cover_art=True),
        "mp4_rotated90.mp4": dict(format="mp4", bframes=2, rotation=90),
        "webm_vp8_altref.webm": dict(
            format="webm", codec="libvpx", gop=30, options={"auto-alt-ref": "1", "lag-in-frames": "16"}
        ),
    }
    paths = {
        name: Path(write_encoded(folder / name, num_frames=N, seed=k, **kw))
        for k, (name, kw) in enumerate(writers.items())
    }
    paths["avi_mpeg4_xvid_fourcc.avi"] = anonymous_mpeg4(paths["avi_mpeg4.avi"], folder / "xvid.avi", "XVID")
    hevc = write_encoded(io.BytesIO(), format="mp4", codec="libx265", num_frames=N, options=hevc_open_gop)
    paths["hevc_cra_cut.mkv"] = remux(
        hevc.getvalue(), folder / "hevc_cra_cut.mkv", format="matroska", keyframe=2
    )
    first = _ts(60, 0, 0)
    paths["ts_splice.ts"] = concatenate([first, _ts(60, 60, 1)], folder / "ts_splice.ts")
    paths["ts_splice_resize.ts"] = concatenate(
        [first, _ts(60, 60, 2, width=192, height=108)], folder / "ts_splice_resize.ts"
    )
    for name in FIXTURE_CLIPS:
        paths[name] = FIXTURES / name
    return paths


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return _make_corpus(tmp_path_factory.mktemp("corpus"))


def main_stream(container: av.container.InputContainer) -> av.VideoStream:
    return next(s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic)


def full_decode(path: Path, stream: int | None = None) -> tuple[list[np.ndarray], list[av.VideoFrame]]:
    """Every frame a sequential decode outputs, as RGB at the first frame's size (and the frames)."""
    frames: list[av.VideoFrame] = []
    with av.open(str(path)) as container:
        video = container.streams[stream] if stream is not None else main_stream(container)
        decoder = video.codec_context
        for packet in container.demux(video):
            try:
                frames += decoder.decode(packet) if packet.size else []
            except av.InvalidDataError:
                break
        frames += decoder.decode(None)
    width, height = frames[0].width, frames[0].height
    rgb = [
        f.to_ndarray(format="rgb24")
        if (f.width, f.height) == (width, height)
        else f.reformat(width=width, height=height, format="rgb24", interpolation="AREA").to_ndarray()
        for f in frames
    ]
    return rgb, frames


@pytest.fixture(scope="module")
def reference(corpus) -> dict[str, list[np.ndarray]]:
    return {name: full_decode(path)[0] for name, path in corpus.items()}


CLIPS = [
    "avi_h264_b.avi",
    "avi_mpeg4.avi",
    "avi_mpeg4_b.avi",
    "avi_mjpeg.avi",
    "avi_vfr_skips.avi",
    "avi_mpeg4_xvid_fourcc.avi",
    "webm_vp8_altref.webm",
    "raw_h264_b.h264",
    "raw_hevc.hevc",
    "h264_intra_refresh.mp4",
    "h264_intra_refresh.mkv",
    "hevc_cra_cut.mkv",
    "ts_splice.ts",
    "ts_splice_resize.ts",
    "mp4_cover_art.mp4",
    "mp4_rotated90.mp4",
    *FIXTURE_CLIPS,
]


def assert_exact(got, ref: list[np.ndarray], name: str) -> None:
    assert got.total_frames == len(ref), name
    bad = [i for k, i in enumerate(got.indices) if not np.array_equal(got.frames[k], ref[i])]
    assert not bad, f"{name}: frames {bad[:5]} differ from the full decode"


@pytest.mark.parametrize("name", CLIPS)
def test_corpus_clip_equals_full_decode(corpus, reference, name):
    ref = reference[name]
    total = len(ref)
    for n in (1, 7, 16, total):
        got = sample_frames(corpus[name], num_frames=n)
        assert got.indices == [int(i) for i in np.round(np.linspace(0, total - 1, n))]
        assert_exact(got, ref, name)
    for fps in (1, 3):
        assert_exact(sample_frames(corpus[name], fps=fps), ref, name)


@pytest.mark.parametrize(
    "name",
    [
        "avi_h264_b.avi",
        "avi_mpeg4_xvid_fourcc.avi",
        "webm_vp8_altref.webm",
        "h264_intra_refresh.mkv",
        "cut_midgop_h264.mkv",
        "ts_splice.ts",
    ],
)
def test_random_indices_and_one_thread(corpus, reference, name):
    rng = random.Random(name)
    ref = reference[name]
    for threads in (1, 2):
        with ClipReader(corpus[name], threads=threads) as reader:
            for _ in range(4):
                indices = [rng.randrange(len(ref)) for _ in range(rng.randrange(1, 12))]
                assert_exact(reader.get_frames_at(indices), ref, name)


def test_avi_frames_and_timestamps_follow_display_order(corpus):
    # AVI stores decode-order numbers, not presentation times: frame i must show number i at i/25 s.
    for name in ["avi_h264_b.avi", "avi_mpeg4_b.avi"]:
        got = sample_frames(corpus[name], fps=25)
        assert got.indices == list(range(N)), name
        assert [read_frame_code(f) for f in got.frames] == list(range(N)), name
        assert got.timestamps == pytest.approx([i / 25 for i in range(N)]), name
    # Dropped-frame chunks are counted by the header, hold no frame, and keep their time slot.
    with av.open(str(corpus["avi_vfr_skips.avi"])) as container:
        assert container.streams.video[0].frames > N  # the header count is larger than the frames
    got = sample_frames(corpus["avi_vfr_skips.avi"], num_frames=N)
    slots = [t for t in range(N + 4) if t not in (10, 11, 40, 99)]
    assert [read_frame_code(f) for f in got.frames] == list(range(N))
    assert got.timestamps == pytest.approx([s / 25 for s in slots])


def test_files_without_usable_timestamps_are_counted_by_decoding(corpus):
    for name in ["avi_h264_b.avi", "avi_mpeg4_b.avi", "raw_h264_b.h264", "ts_splice.ts"]:
        with ClipReader(corpus[name]) as reader:
            assert reader.strategy([0, 5]) == "sequential", name
    # Cuts keep the fast path; the TS cut's keyframes are checked in Annex B (start codes).
    for name in [
        "cut_midgop_h264.mp4",
        "cut_midgop_h264.ts",
        "cut_midgop_hevc.mkv",
        "h264_intra_refresh.mp4",
        "hevc_cra_cut.mkv",
        "avi_mjpeg.avi",  # intra-only: decode order is display order, timestamps or not
        "avi_mpeg4.avi",  # MPEG-4 Part 2 without B-VOPs, one coded VOP a packet: the same
        "avi_vfr_skips.avi",
        "avi_mpeg4_xvid_fourcc.avi",
    ]:
        with ClipReader(corpus[name]) as reader:
            assert reader.strategy(reader.sample_indices(16)) != "sequential", name


def test_avi_mpeg4_and_vp8_decode_in_parallel_stretches_from_their_keyframes(corpus):
    for name in ["avi_mpeg4.avi", "avi_vfr_skips.avi", "avi_mpeg4_xvid_fourcc.avi", "webm_vp8_altref.webm"]:
        with ClipReader(corpus[name], threads=2) as reader:
            assert len(reader.index.starts) == 4, name  # every keyframe (25 or 30 frames apart)
            assert reader.strategy(reader.sample_indices(16)) == "parallel", name


def _vop(kind: int, coded: bool, time_bits: int) -> bytes:
    """A VOP header written by hand (ISO/IEC 14496-2 6.2.5): coding type, modulo_time_base 0,
    marker, vop_time_increment, marker, vop_coded; then some payload."""
    bits = f"{kind:02b}" + "0" + "1" + "0" * time_bits + "1" + ("1" if coded else "0")
    bits += "0" * (-len(bits) % 8)
    return b"\x00\x00\x01\xb6" + int(bits, 2).to_bytes(len(bits) // 8, "big") + b"\x55" * 8


def test_mpeg4_packets_that_are_not_one_frame_each_are_counted_by_decoding(corpus):
    # A B-VOP (reordered), two VOPs in a packet (DivX's packed B-frames), a VOP not coded (a
    # dropped frame: the decoder outputs nothing), headers that change, no VOL to read VOPs with.
    from builders.video.bitstream import Mpeg4Packets

    with av.open(str(corpus["avi_mpeg4.avi"])) as container:
        stream = container.streams.video[0]
        extradata = stream.codec_context.extradata
        key, other = (bytes(p) for p in itertools.islice(container.demux(stream), 2))
    check = Mpeg4Packets(extradata)
    assert check.time_bits == 5  # vop_time_increment_resolution 25: av_log2(24) + 1 bits, as FFmpeg
    assert check.packet(0, key, True) is None and check.packet(1, other, False) is None
    assert check.packet(2, _vop(1, True, 5), False) is None  # a P-VOP written by hand reads as one
    assert check.packet(3, _vop(0, True, 5), True) is None  # an I-VOP without the stream's headers
    assert check.starts() == [0]  # a decoder can start where it reads them
    assert "B-VOP" in check.packet(4, _vop(2, True, 5), False)
    assert "2 VOPs" in check.packet(4, other + other, False)
    assert "not coded" in check.packet(4, _vop(1, False, 5), False)
    vop = key.index(b"\x00\x00\x01\xb6")
    changed = Mpeg4Packets(extradata)
    assert changed.packet(0, key, True) is None
    assert "headers" in changed.packet(25, key[:vop].replace(b"Lavc", b"Lavd") + key[vop:], True)
    assert "VOL" in Mpeg4Packets(b"").packet(1, other, False)


def test_cut_mid_gop_frames_before_the_first_keyframe_are_not_frames(corpus, reference):
    with ClipReader(corpus["cut_midgop_h264.mp4"], threads=2) as reader:
        index = reader.index
        first_key = index.starts[0]
        assert first_key > 0 and not index.keyframe[0]  # really starts mid-GOP
        assert reader.num_frames == len(reference["cut_midgop_h264.mp4"]) < index.num_packets
        # Frame 0 is the first keyframe's picture, decoded from there.
        assert index.packet_of[0] == first_key
        (segment,) = plan_segments(index, [0])
        assert segment.start == first_key


def test_intra_refresh_recovery_points_are_not_starts(corpus):
    with ClipReader(corpus["h264_intra_refresh.mp4"]) as reader:
        index = reader.index
        assert sum(index.keyframe) > 1  # recovery points flagged as keyframes
        assert index.starts == (0,)  # only the IDR is one a decoder can start at


def test_hevc_cra_cut_drops_leading_pictures(corpus, reference):
    with ClipReader(corpus["hevc_cra_cut.mkv"]) as reader:
        assert reader.num_frames == len(reference["hevc_cra_cut.mkv"]) < reader.index.num_packets


@pytest.mark.parametrize("threads", [1, 2])
def test_frames_before_a_cuts_first_random_access_point_come_from_new_decoders(corpus, reference, threads):
    # FFmpeg 7 (PyAV 15's wheels) outputs the 15 HEVC pictures before this cut's first keyframe,
    # concealing their missing references; a flushed decoder conceals them with other pixels
    # than a new one (frames 2 and 6-14 here). The reader's decoders have decoded before every
    # call after the first; in parallel, the stretch from packet 0 is the shortest, so it runs
    # last, after another stretch freed its decoder. (FFmpeg 8 outputs nothing before the keyframe.)
    name = "cut_midgop_hevc.mkv"
    ref = reference[name]
    with ClipReader(corpus[name], threads=threads) as reader:
        for _ in range(3):
            assert_exact(reader.get_frames_at(range(len(ref))), ref, name)
        assert_exact(reader.sample(num_frames=16), ref, name)


def test_cover_art_is_skipped_and_stream_picks(corpus, tmp_path):
    path = corpus["mp4_cover_art.mp4"]
    with av.open(str(path)) as container:
        kinds = [
            (s.type, bool(s.disposition & av.stream.Disposition.attached_pic)) for s in container.streams
        ]
    assert kinds == [("video", False), ("video", True)]
    got = sample_frames(path, num_frames=5)
    assert [read_frame_code(f) for f in got.frames] == [0, 25, 50, 74, 99]
    cover = sample_frames(path, num_frames=1, stream=1)  # asked for by number: the picture itself
    assert cover.total_frames == 1 and cover.frames.shape == (1, 48, 64, 3)
    # Matroska keeps the picture as an ordinary first video stream: stream= picks the clip.
    mkv = write_encoded(tmp_path / "two.mkv", format="matroska", num_frames=30, cover_art=True)
    ref = full_decode(mkv, stream=1)[0]
    assert sample_frames(mkv, num_frames=1).frames.shape == (1, 48, 64, 3)
    assert_exact(sample_frames(mkv, num_frames=6, stream=1), ref, "two.mkv")
    with pytest.raises(VideoError, match=r"two.mkv has no stream 2"):
        sample_frames(mkv, num_frames=1, stream=2)
    with pytest.raises(VideoError, match=r"stream 1 of .*clip.mp4 is audio, not video"):
        sample_frames(write_clip(tmp_path / "clip.mp4", audio=True), num_frames=1, stream=1)


def test_size_change_is_scaled_to_the_first_frame(corpus, reference):
    got = sample_frames(corpus["ts_splice_resize.ts"], num_frames=8)
    assert got.frames.shape == (8, 120, 160, 3)
    assert_exact(got, reference["ts_splice_resize.ts"], "ts_splice_resize.ts")


@pytest.mark.skipif(not CAN_WRITE_ROTATION, reason="this PyAV cannot write a display rotation")
def test_rotation(corpus, reference):
    path = corpus["mp4_rotated90.mp4"]
    frames = full_decode(path)[1]
    assert frames[0].rotation == 90
    plain = sample_frames(path, num_frames=4)
    assert plain.frames.shape == (4, 120, 160, 3)  # stored pixels by default
    turned = sample_frames(path, num_frames=4, rotate=True, max_side=80)
    assert turned.frames.shape == (4, 80, 60, 3) and turned.frames.flags.c_contiguous
    upright = sample_frames(path, num_frames=4, rotate=True)
    for k, i in enumerate(upright.indices):
        assert np.array_equal(upright.frames[k], np.rot90(reference["mp4_rotated90.mp4"][i], 1))


def test_sample_aspect_ratio_is_not_applied(tmp_path):
    # Documented: frames are the stored pixels; an anamorphic DVD frame keeps its stored shape.
    path = write_encoded(
        tmp_path / "dvd.mp4",
        format="mp4",
        width=720,
        height=576,
        sample_aspect_ratio=Fraction(64, 45),
        num_frames=5,
    )
    with av.open(str(path)) as container:
        assert container.streams.video[0].sample_aspect_ratio == Fraction(64, 45)
    assert sample_frames(path, num_frames=2, max_side=448).frames.shape == (2, 358, 448, 3)


# -- damage ------------------------------------------------------------------------------------------


def test_spliced_ts_is_read_past_its_flagged_packet_unless_strict(corpus):
    path = corpus["ts_splice.ts"]
    assert sample_frames(path, num_frames=2).total_frames == 120
    with pytest.raises(VideoError, match=r"ts_splice.ts is truncated or corrupt: packet \d+"):
        sample_frames(path, num_frames=2, strict=True)


@pytest.mark.parametrize("keep", [0.6, 0.95, -7])
def test_truncated_file_is_the_frames_before_the_damage(tmp_path, keep):
    data = write_clip(tmp_path / "whole.mp4", faststart=True).read_bytes()
    end = int(len(data) * keep) if keep > 0 else len(data) + keep
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:end])
    ref = full_decode(cut)[0]
    assert 0 < len(ref) < 125
    got = sample_frames(cut, num_frames=16)
    assert_exact(got, ref, "cut.mp4")
    # Numbers check the index; the last frame may be a decoder's concealment of the cut packet.
    assert [read_frame_code(f) for f in got.frames[:-1]] == got.indices[:-1]
    with (
        ClipReader(cut) as reader,
        pytest.raises(
            VideoError,
            match=rf"frame index 124 is out of range for .*cut.mp4, which has {len(ref)} frames \(it is damaged",
        ),
    ):
        reader.get_frames_at([124])
    with pytest.raises(VideoError, match=r"cut.mp4 is truncated or corrupt"):
        sample_frames(cut, num_frames=16, strict=True)


# -- old x264 ----------------------------------------------------------------------------------------
# libavcodec's H.264 decoder reads the x264 build from an SEI that x264 writes with a stream's
# first frame, and decodes some blocks of some old builds differently (bitstream.x264_build_matters).
# The clips here are encoded by today's x264 and made to announce an old build by rewriting that
# SEI's text (corpus.patch_x264_build); each test first shows that libavcodec reads it.


def one_thread_decode(path: Path) -> list[np.ndarray]:
    """The reference for these files: a full decode on one thread, the decoder as written (with
    slice threads libavcodec skips some of old x264's workarounds; frame threads race on them)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.codec_context.thread_type, stream.codec_context.thread_count = "NONE", 1
        return [f.to_ndarray(format="rgb24") for f in container.decode(stream)]


def decode_from(path: Path, start: int, options: dict[str, str]) -> dict[int, np.ndarray]:
    """A fresh one-thread decoder fed from video packet ``start`` on: {pts: RGB}."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        packets = [p for p in container.demux(stream) if p.size]
        decoder = av.CodecContext.create("h264", "r")
        decoder.extradata, decoder.options = stream.codec_context.extradata, options
        decoder.thread_type, decoder.thread_count = "NONE", 1
        frames = [f for p in packets[start:] for f in decoder.decode(p)] + decoder.decode(None)
        return {f.pts: f.to_ndarray(format="rgb24") for f in frames}


def test_old_x264_high_profile_clip_decodes_in_stretches(tmp_path):
    # High profile (4:2:0, lossy) with B-frames: build 148 changes no pixel in libavcodec, so the
    # file is sampled as any other, in parallel stretches from its keyframes.
    clip = write_encoded(tmp_path / "new.mp4", format="mp4", gop=25, bframes=2, num_frames=150)
    old = patch_x264_build(clip, tmp_path / "old.mp4", 148)
    with av.open(str(old)) as container:
        assert x264_build(bytes(next(container.demux(video=0)))) == 148
    ref = one_thread_decode(old)
    assert len(ref) == 150
    with ClipReader(old, threads=2) as reader:
        index = reader.index
        assert (index.x264_build, index.from_start, index.one_thread) == (148, None, None)
        assert len(index.starts) == 6
        wanted = reader.sample_indices(16)
        assert len({s.start for s in plan_segments(index, wanted)}) == 6
        assert reader.strategy(wanted) == "parallel"
        assert_exact(reader.get_frames_at(wanted), ref, "old.mp4")
    assert_exact(sample_frames(old, num_frames=16), full_decode(old)[0], "old.mp4")


def test_old_x264_lossless_444_decodes_mid_stream_as_the_full_decode(tmp_path):
    # Build 142 on lossless 4:4:4 (High 4:4:4 Predictive, transform bypass): libavcodec predicts
    # 8x8 intra blocks without the sample filter. Every decoder that starts mid-stream is told
    # the build, and runs on one thread. (libavcodec's output for such a clip, whose encoder did
    # filter, can depend on what a decoder decoded before; this clip's does not.)
    build = 142
    clip = write_encoded(
        tmp_path / "new.mp4", format="mp4", pix_fmt="yuv444p", gop=20, bframes=2, num_frames=60,
        options={"x264-params": "qp=0"},
    )  # fmt: skip
    old = patch_x264_build(clip, tmp_path / "old.mp4", build)
    ref = one_thread_decode(old)
    assert len(ref) == 60
    # libavcodec reads the announcement: the full decode's pixels change with it.
    assert any(not np.array_equal(a, b) for a, b in zip(ref, one_thread_decode(clip), strict=True))
    with ClipReader(old, threads=2) as reader:
        index = reader.index
        assert index.x264_build == build and index.from_start is None
        assert f"x264 build {build}" in index.one_thread
        # A decoder started at a later keyframe decodes its frames as the full decode only when
        # told the build (at least one stretch differs otherwise: the test can tell).
        frame_of = {index.pts[p]: f for f, p in enumerate(index.packet_of)}
        differs = False
        for start in index.starts[1:]:
            told = decode_from(old, start, {"x264_build": str(build)})
            assert all(np.array_equal(rgb, ref[frame_of[pts]]) for pts, rgb in told.items())
            blind = decode_from(old, start, {})
            differs |= any(not np.array_equal(rgb, ref[frame_of[pts]]) for pts, rgb in blind.items())
        assert differs
        # The reader: parallel stretches, each from its keyframe, exact.
        everything = list(range(60))
        assert reader.strategy([5, 25, 45]) == "parallel"
        assert len(plan_segments(index, everything)) == 3
        assert_exact(reader.get_frames_at(everything), ref, "old.mp4")
        assert_exact(reader.get_frames_at([59, 41, 58, 2]), ref, "old.mp4")
    for threads in (1, None):  # the one streaming decoder, and the default
        assert_exact(sample_frames(old, num_frames=60, threads=threads), ref, "old.mp4")
    assert_exact(sample_frames(old, fps=3), ref, "old.mp4")


def test_concealed_decode_errors_send_the_decode_to_the_first_packet(tmp_path):
    # The same shape at 320x176, where libavcodec's build-142 prediction meets blocks x264
    # predicted otherwise and conceals errors: concealment fills blocks from the frames decoded
    # before, even across a keyframe, so stretches from later keyframes showed other pixels
    # (frames 24-31 and on). A mid-stream stretch whose decoder conceals goes back to packet 0.
    clip = write_encoded(
        tmp_path / "new.mp4", format="mp4", pix_fmt="yuv444p", width=320, height=176, gop=20, bframes=2,
        num_frames=60, options={"x264-params": "qp=0"},
    )  # fmt: skip
    old = patch_x264_build(clip, tmp_path / "old.mp4", 142)
    ref = one_thread_decode(old)
    with av.open(str(old)) as container:
        stream = container.streams.video[0]
        stream.codec_context.thread_type, stream.codec_context.thread_count = "NONE", 1
        assert any(frame.is_corrupt for frame in container.decode(stream))  # errors concealed
    with ClipReader(old, threads=2) as reader:
        assert reader.strategy([5, 25, 45]) == "parallel"
        assert_exact(reader.get_frames_at(range(60)), ref, "old.mp4")
        assert "concealed" in reader.index.from_start  # later calls start at packet 0 at once
        assert_exact(reader.get_frames_at([45, 25]), ref, "old.mp4")
    with ClipReader(old, threads=1) as reader:  # one decoder, through stretches from later keyframes
        assert_exact(reader.get_frames_at([25, 45, 5]), ref, "old.mp4")
    for threads in (1, None):
        assert_exact(sample_frames(old, num_frames=16, threads=threads), ref, "old.mp4")


def test_old_x264_without_the_decoder_option_decodes_from_the_first_packet(tmp_path, monkeypatch):
    # A libavcodec without the x264_build option: only files whose pixels depend on the build are
    # decoded from their first packet (on one thread); the High profile one keeps its stretches.
    monkeypatch.setattr(index_module, "decoder_takes_x264_build", lambda: False)
    lossless = write_encoded(
        tmp_path / "ll.mp4", format="mp4", pix_fmt="yuv444p", gop=20, bframes=2, num_frames=60,
        options={"x264-params": "qp=0"},
    )  # fmt: skip
    old = patch_x264_build(lossless, tmp_path / "old.mp4", 150)
    with ClipReader(old, threads=2) as reader:
        assert reader.index.x264_build is None and "x264 build 150" in reader.index.from_start
        assert [s.start for s in plan_segments(reader.index, [5, 45])] == [0]
        assert reader.strategy([5, 25, 45]) == "streaming"
        assert_exact(reader.get_frames_at(list(range(60))), one_thread_decode(old), "old.mp4")
    high = patch_x264_build(write_encoded(tmp_path / "hi.mp4", format="mp4", num_frames=60, gop=20),
                            tmp_path / "hi_old.mp4", 148)  # fmt: skip
    with ClipReader(high, threads=2) as reader:
        assert (reader.index.x264_build, reader.index.from_start) == (None, None)
        assert reader.strategy([5, 25, 45]) == "parallel"


def test_x264_build_and_sps_as_libavcodec_reads_them():
    sei = b"\x06\x05\x2a" + bytes(16) + b"x264 - core %s - H.264/MPEG-4 AVC codec"
    assert x264_build(sei % b"148") == 148
    assert x264_build(sei % b"0") is None  # libavcodec keeps builds above 0
    assert x264_build(sei % b"00001") == 67  # x264 versions that wrote "core 0000..."
    assert x264_build(b"no version") is None
    assert x264_build_matters(33, []) and not x264_build_matters(34, [(100, False)])
    assert x264_build_matters(150, [(100, False), (244, True)])
    assert not x264_build_matters(150, [(244, False)]) and not x264_build_matters(151, [(244, True)])
    assert not x264_build_matters(43, [(100, False)])  # < 44 only halves the reported frame rate
    # A real SPS: x264's lossless 4:4:4 one has the bypass flag; a High one has not.
    for pix_fmt, options, expected in [
        ("yuv444p", {"x264-params": "qp=0"}, [(244, True)]),
        ("yuv420p", {}, [(100, False)]),
    ]:
        buffer = write_encoded(io.BytesIO(), format="mp4", pix_fmt=pix_fmt, num_frames=2, options=options)
        buffer.seek(0)
        with av.open(buffer) as container:
            assert h264_sps(b"", container.streams.video[0].codec_context.extradata) == expected


# -- damage ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seen_by", ["index", "decoder"])
def test_damaged_packet_gives_the_frames_before_it(tmp_path, monkeypatch, seen_by):
    # decord's corrupted.mp4: 50 packets in a whole container, packet 30's NAL length overwritten;
    # a full decode outputs 28 frames, fails on packet 30, and drains 2 more it had decoded.
    clip = write_clip(tmp_path / "clip.mp4", num_frames=50, fps=10, gop=250, bframes=3, seed=1)
    bad = corrupt_packet(clip, tmp_path / "corrupted.mp4", 30)
    ref = full_decode(bad)[0]
    assert len(ref) == 30
    if seen_by == "decoder":  # damage that only decoding shows: the index takes every packet for a frame
        monkeypatch.setattr(index_module, "nal_overrun", lambda *args: False)
        with ClipReader(bad) as reader:
            assert reader.index.num_packets == 50 and reader.index.damage is None
    for n in (16, 8):
        got = sample_frames(bad, num_frames=n)
        assert got.indices == [int(i) for i in np.round(np.linspace(0, 29, n))]
        assert_exact(got, ref, "corrupted.mp4")
        # Picture 32 was decoded before packet 30 (ahead of its B-frames 29-31, which never come):
        # the full decode's last frame.
        assert [read_frame_code(f) for f in got.frames] == got.indices[:-1] + [32]
    got = sample_frames(bad, fps=1)
    assert got.indices == [0, 10, 20, 28] and got.total_frames == 30
    assert_exact(got, ref, "corrupted.mp4")
    with ClipReader(bad, threads=2) as reader:
        assert_exact(reader.get_frames_at([29, 3, 17]), ref, "corrupted.mp4")
        with pytest.raises(VideoError, match=r"frame index 31 is out of range .* 30 frames \(it is damaged"):
            reader.get_frames_at([31])
    with pytest.raises(VideoError, match=r"corrupted.mp4 is truncated or corrupt"):
        sample_frames(bad, num_frames=16, strict=True)


def count_sequential_decodes(monkeypatch) -> list[bool]:
    """Each ``ClipReader._sequential`` call from now on, as whether it was a counting decode."""
    calls: list[bool] = []
    original = ClipReader._sequential

    def counted(self, wanted, deliver):
        calls.append(wanted is None)
        return original(self, wanted, deliver)

    monkeypatch.setattr(ClipReader, "_sequential", counted)
    return calls


def test_counting_decode_also_samples_when_the_packets_guess_right(corpus, tmp_path, monkeypatch):
    calls = count_sequential_decodes(monkeypatch)
    # One decode counts and samples: each packet is a frame here.
    for name in ["avi_h264_b.avi", "avi_mpeg4_b.avi", "raw_h264_b.h264"]:
        calls.clear()
        sample_frames(corpus[name], num_frames=16)
        sample_frames(corpus[name], fps=2)
        assert calls == [True, True], name
    # A truncated file's cut last packet is one a decoder rejects (its NAL unit runs past its end):
    # the guess leaves it out, and is right.
    data = write_clip(tmp_path / "whole.mp4", faststart=True).read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    calls.clear()
    got = sample_frames(cut, num_frames=16)
    assert calls == [True]
    assert_exact(got, full_decode(cut)[0], "cut.mp4")
    # Where the packets cannot tell, the guess is wrong and a second decode fetches the frames.
    monkeypatch.setattr(index_module, "nal_overrun", lambda *args: False)
    calls.clear()
    got = sample_frames(cut, num_frames=16)
    assert calls == [True, False]
    assert_exact(got, full_decode(cut)[0], "cut.mp4")


def test_open_gop_cut_without_a_start_is_counted_and_sampled_by_one_decode(tmp_path, monkeypatch):
    # An open-GOP H.264 stream cut mid-GOP (stream copy): no IDR anywhere, so no packet is a start
    # and the frames are counted by a full decode, which drops the packets before the decoder
    # recovers. The frames to keep are guessed from the packets shown from the first frame out.
    params = "keyint=50:min-keyint=50:scenecut=0:bframes=2:b-adapt=0:open-gop=1"
    whole = write_encoded(tmp_path / "whole.mp4", format="mp4", num_frames=250, bframes=2, gop=50,
                          options={"x264-params": params})  # fmt: skip
    cut = remux(whole, tmp_path / "cut.mp4", format="mp4", keyframe=1, after=17)
    ref = full_decode(cut)[0]
    with ClipReader(cut) as reader:
        assert reader._packets_index.num_packets > len(ref)  # the decoder drops the first packets
    calls = count_sequential_decodes(monkeypatch)
    for kwargs in ({"num_frames": 16}, {"num_frames": 8}, {"fps": 1}):
        calls.clear()
        got = sample_frames(cut, **kwargs)
        assert calls == [True], kwargs
        assert_exact(got, ref, "open-GOP cut")


def test_a_start_that_is_not_one_is_caught_while_decoding(corpus, reference, caplog):
    # Believe the keyframe flags of intra-refresh recovery points (what the index used to do): the
    # decoder started there outputs nothing, and the reader decodes from the first packet instead.
    name = "h264_intra_refresh.mkv"
    with ClipReader(corpus[name], threads=2) as reader:
        index = reader.index
        flagged = tuple(p for p, key in enumerate(index.keyframe) if key)
        assert len(flagged) > 1
        reader._index = replace(index, starts=flagged)
        wanted = [index.frame_at[p] for p in flagged[1:]] + [index.num_frames - 1]
        with caplog.at_level(logging.DEBUG, logger="builders.video"):
            got = reader.get_frames_at(wanted)
    assert "did not decode from packet" in caplog.text
    assert_exact(got, reference[name], name)


def test_random_access_needs_an_idr_and_parameter_sets():
    sps, pps, idr, non_idr, sei = (
        b"\x67\x64",
        b"\x68\xee",
        b"\x65\x88",
        b"\x41\x9a",
        b"\x06\x05x264 - core 148 - H.264",
    )
    annex_b = b"".join(b"\x00\x00\x00\x01" + nal for nal in (sps, pps, idr))
    assert is_random_access("h264", annex_b, None)
    assert not is_random_access("h264", b"\x00\x00\x01" + idr, None)  # no parameter sets, no extradata
    assert not is_random_access("h264", b"\x00\x00\x01" + sei + b"\x00\x00\x01" + non_idr, None)

    def avcc(*nals: bytes) -> bytes:
        return b"".join(len(n).to_bytes(4, "big") + n for n in nals)

    extradata = b"\x01\x64\x00\x1f\xff"  # avcC, 4-byte lengths
    assert is_random_access("h264", avcc(sei, idr), extradata)
    assert not is_random_access("h264", avcc(sei, non_idr), extradata)  # a recovery point, say
    cra, rasl = bytes([21 << 1, 1]), bytes([8 << 1, 1])
    assert is_random_access("hevc", avcc(cra), b"\x01" + bytes(20) + b"\x03")
    assert not is_random_access("hevc", avcc(rasl), b"\x01" + bytes(20) + b"\x03")
    assert is_random_access("mpeg4", b"anything", None)
    assert x264_build(avcc(sei, idr)) == 148 and x264_build(avcc(idr)) is None
