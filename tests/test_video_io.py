"""Bad video input fails clearly; audio removal, JPEG data URLs and ``vqabench frames`` work on real clips."""

from __future__ import annotations

import base64
import io
import math
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from builders.cli import main
from builders.testing.clips import read_frame_code, write_audio_only, write_clip, write_empty_video
from builders.video.remux import remove_audio
from builders.video.sampler import ClipReader, VideoError, frames_to_data_urls, sample_frames


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    """5 s, 25 fps, 160x120 H.264 with B-frames, keyframes every 25 frames, and an AAC track."""
    return write_clip(tmp_path_factory.mktemp("io") / "clip.mp4", audio=True)


def video_packets(path: Path) -> list[bytes]:
    with av.open(str(path)) as container:
        return [bytes(p) for p in container.demux(video=0) if p.size]


# -- bad input -------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.mp4"
    with pytest.raises(FileNotFoundError, match="nope.mp4"):
        sample_frames(missing, num_frames=4)


@pytest.mark.parametrize(
    "content, message",
    [(b"", "empty"), (b"not a video at all " * 50, "cannot open")],
    ids=["empty", "garbage"],
)
def test_unreadable_files_name_the_file(tmp_path, content, message):
    path = tmp_path / "bad.mp4"
    path.write_bytes(content)
    with pytest.raises(VideoError, match=message) as err:
        sample_frames(path, num_frames=4)
    assert str(path) in str(err.value)


def test_empty_and_garbage_bytes():
    with pytest.raises(VideoError, match="empty"):
        sample_frames(b"", num_frames=4)
    with pytest.raises(VideoError, match="cannot open video <video bytes"):
        sample_frames(b"\x00" * 4096, num_frames=4)
    with pytest.raises(VideoError, match="neither 'bytes' nor 'path'"):
        sample_frames({"path": None, "bytes": None}, num_frames=4)
    with pytest.raises(TypeError, match="unsupported video source"):
        sample_frames(42, num_frames=4)


def test_truncated_file_without_index(tmp_path, clip):
    # PyAV writes the index (moov) last: a cut-short file has none and cannot open.
    data = clip.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError, match="cannot open video .*cut.mp4"):
        sample_frames(cut, num_frames=4)


def test_no_video_stream(tmp_path):
    path = write_audio_only(tmp_path / "speech.m4a")
    with pytest.raises(VideoError, match=r"no video stream in .*speech.m4a \(streams: audio\)"):
        sample_frames(path, num_frames=4)
    with pytest.raises(VideoError, match="no video stream"):
        remove_audio(path, tmp_path / "out.mp4")


def test_video_stream_without_frames(tmp_path):
    path = write_empty_video(tmp_path / "blank.mkv")
    with pytest.raises(VideoError, match=r"blank.mkv has no frames"):
        sample_frames(path, num_frames=1)


def test_more_frames_than_the_video_has(clip):
    with pytest.raises(VideoError, match=r"clip.mp4: asked for 126 frames but the video has only 125"):
        sample_frames(clip, num_frames=126)
    assert len(sample_frames(clip, num_frames=125)) == 125


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"num_frames": 4, "fps": 1.0}],
    ids=["neither", "both"],
)
def test_exactly_one_sampling_mode(clip, kwargs):
    with pytest.raises(ValueError, match="exactly one of num_frames or fps"):
        sample_frames(clip, **kwargs)


@pytest.mark.parametrize("num_frames", [0, -3, 2.5, True])
def test_bad_frame_counts(clip, num_frames):
    with pytest.raises(ValueError, match="num_frames must be a positive integer"):
        sample_frames(clip, num_frames=num_frames)


@pytest.mark.parametrize("fps", [0, -1.0, math.nan, math.inf, "1"])
def test_bad_fps(clip, fps):
    with pytest.raises(ValueError, match="fps must be a positive number"):
        sample_frames(clip, fps=fps)


def test_bad_indices_and_sizes(clip):
    with ClipReader(clip) as reader:
        for bad in (125, -1):
            with pytest.raises(
                VideoError, match=rf"frame index {bad} is out of range for .*clip.mp4, which has 125"
            ):
                reader.get_frames_at([0, bad])
        with pytest.raises(VideoError, match="not an integer"):
            reader.get_frames_at([1.0])
        with pytest.raises(ValueError, match="max_side"):
            reader.get_frames_at([0], max_side=0)
        assert reader.get_frames_at([]).frames.shape == (0, 120, 160, 3)
    with pytest.raises(ValueError, match="threads"):
        ClipReader(clip, threads=0)


# -- audio removal ---------------------------------------------------------------------------------


def test_remove_audio_copies_video_packets(tmp_path, clip):
    with av.open(str(clip)) as container:
        assert container.streams.audio  # the source really has audio
    out = remove_audio(clip, tmp_path / "silent" / "clip.mp4")
    assert out == tmp_path / "silent" / "clip.mp4"
    with av.open(str(out)) as container:
        assert [s.type for s in container.streams] == ["video"]
    assert video_packets(out) == video_packets(clip)  # stream copy: same bytes, no re-encode
    original, silent = sample_frames(clip, fps=25), sample_frames(out, fps=25)
    assert silent.indices == original.indices and silent.timestamps == pytest.approx(original.timestamps)
    assert np.array_equal(silent.frames, original.frames)
    assert sorted(p.name for p in out.parent.iterdir()) == ["clip.mp4"]  # no temporary left over


def test_remove_audio_from_bytes_replaces_atomically(tmp_path, clip):
    dst = tmp_path / "clip.mp4"
    dst.write_bytes(b"old content")
    remove_audio({"path": "x.mp4", "bytes": clip.read_bytes()}, dst)
    assert video_packets(dst) == video_packets(clip)
    with pytest.raises(VideoError):
        remove_audio(b"garbage" * 100, dst)
    assert video_packets(dst) == video_packets(clip)  # a failed run leaves the old file intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


# -- JPEG data URLs --------------------------------------------------------------------------------


def test_frames_to_data_urls(clip):
    frames = sample_frames(clip, num_frames=3)
    urls = frames_to_data_urls(frames, quality=90)
    assert len(urls) == 3
    for url, rgb, index in zip(urls, frames.frames, frames.indices, strict=True):
        prefix = "data:image/jpeg;base64,"
        assert url.startswith(prefix)
        image = Image.open(io.BytesIO(base64.b64decode(url[len(prefix) :])))
        assert image.format == "JPEG" and image.mode == "RGB" and image.size == (160, 120)
        decoded = np.asarray(image)
        assert np.abs(decoded.astype(int) - rgb.astype(int)).mean() < 6
        assert read_frame_code(decoded) == index
    assert frames_to_data_urls(frames.frames[:1]) == frames_to_data_urls([frames.frames[0]])
    smaller = frames_to_data_urls(frames, quality=20)
    assert sum(map(len, smaller)) < sum(map(len, urls))


def test_data_urls_reject_non_rgb():
    with pytest.raises(ValueError, match="frame 0: a frame must be an H x W x 3 uint8"):
        frames_to_data_urls([np.zeros((4, 4), dtype=np.uint8)])
    with pytest.raises(ValueError, match="quality"):
        frames_to_data_urls([], quality=0)


def pillow_jpeg(rgb: np.ndarray, quality: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def test_one_jpeg_encoder_gives_every_path_the_same_bytes(clip, tmp_path, capsys):
    """The data URLs, the step loop's decoder, ``vqabench frames --out-dir`` (by default) and the demo's
    contact sheet all encode a frame as Pillow does at quality 85: the same bytes, hence the same
    reply-cache keys whichever path encoded a frame."""
    from builders.demo.run import contact_sheet
    from builders.runs.frames import decode_images
    from builders.video.frame_spec import FrameSpec

    frames = sample_frames(clip, num_frames=3)
    expected = [pillow_jpeg(rgb, 85) for rgb in frames.frames]
    assert [base64.b64decode(u.partition(",")[2]) for u in frames_to_data_urls(frames)] == expected
    urls = decode_images(clip, FrameSpec(fps=None, num_frames=3))
    assert [base64.b64decode(u.partition(",")[2]) for u in urls] == expected
    assert main(["frames", str(clip), "--num-frames", "3", "--out-dir", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert [f.read_bytes() for f in sorted((tmp_path / "out").glob("*.jpg"))] == expected
    sheet = contact_sheet(frames, tmp_path / "sheet.jpg", columns=2)
    grid = np.zeros((240, 320, 3), np.uint8)  # 2 x 2 cells of 160 x 120, the last one black
    grid[:120, :160], grid[:120, 160:], grid[120:, :160] = frames.frames
    assert sheet.read_bytes() == pillow_jpeg(grid, 85)


def test_no_other_jpeg_encoder_in_the_package():
    """Frames become JPEG in one place (builders/video/jpeg.py): no second encoder, no second quality."""
    root = Path(__file__).resolve().parent.parent
    found = [
        f"{path.relative_to(root)}:{n}"
        for top in ("builders", "bqa", "marinelife16k", "metrics")
        for path in sorted((root / top).rglob("*.py"))
        if path.relative_to(root).parts[:2] != ("builders", "testing")
        and path.relative_to(root).as_posix() != "builders/video/jpeg.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if '"JPEG"' in line or "quality=" in line or "JPEG_QUALITY =" in line
    ]
    assert found == []


# -- CLI -------------------------------------------------------------------------------------------


def test_cli_frames_writes_jpegs(tmp_path, clip, capsys):
    out_dir = tmp_path / "jpegs"
    assert (
        main(["frames", str(clip), "--num-frames", "4", "--max-side", "80", "--out-dir", str(out_dir)]) == 0
    )
    printed = capsys.readouterr().out
    assert "125 frames; sampled 4 at 80x60" in printed
    rows = [line.split("\t") for line in printed.splitlines() if line[:1].isdigit()]
    assert rows == [["0", "0.000"], ["41", "1.640"], ["83", "3.320"], ["124", "4.960"]]
    files = sorted(out_dir.glob("*.jpg"))
    assert [f.name for f in files] == [
        f"clip_{k:03d}_frame{i:06d}.jpg" for k, i in enumerate([0, 41, 83, 124])
    ]
    for f, index in zip(files, [0, 41, 83, 124], strict=True):
        assert read_frame_code(np.asarray(Image.open(f)), source_width=160) == index


def test_cli_frames_fps_and_errors(tmp_path, clip, capsys):
    assert main(["frames", str(clip), "--fps", "1"]) == 0
    assert "\n100\t4.000\n" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # refused as the command line is parsed (issue 29)
        main(["frames", str(tmp_path / "missing.mp4"), "--fps", "1"])
    assert refused.value.code == 2 and "missing.mp4: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: --num-frames and --fps exclude each other
        main(["frames", str(clip), "--fps", "1", "--num-frames", "3"])
