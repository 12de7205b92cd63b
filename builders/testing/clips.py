"""Write real, deterministic MP4 clips with PyAV for tests, benchmarks and bundled samples.

Every frame is visually distinct so that an off-by-one frame index shows up: frame ``i`` carries
its own number as a row of black/white blocks across the top (:func:`read_frame_code` reads it back
from a decoded frame, independently of any container metadata), a colour band whose hue follows
``i``, and a square that moves by a few pixels per frame. The ``"pan"`` pattern adds a scrolling
random texture so the encoder spends real bits on motion, which makes decode times closer to those
of camera footage (used by ``benchmarks/frames.py``).

The GOP structure is set explicitly through x264's own parameters (``keyint``, ``min-keyint``,
``scenecut=0``, ``bframes``) so that a test asking for B-frames or a single keyframe gets exactly
that; :func:`packet_summary` lets a test check it from the packets.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.frame import PictureType

PATTERNS = ("moving", "pan")

#: Height in pixels of the frame-number block row at the top of every frame.
CODE_ROW_HEIGHT = 16
#: Width in pixels of one bit of the frame-number code (big blocks survive lossy 4:2:0 coding).
CODE_BIT_WIDTH = 16


def _code_bits(width: int) -> int:
    return min(16, width // CODE_BIT_WIDTH)


def _hue_rgb(t: float) -> np.ndarray:
    """A saturated RGB colour for ``t`` in [0, 1) (piecewise-linear hue wheel)."""
    h = (t % 1.0) * 6.0
    x = 1.0 - abs(h % 2.0 - 1.0)
    table = [(1, x, 0), (x, 1, 0), (0, 1, x), (0, x, 1), (x, 0, 1), (1, 0, x)]
    return (np.array(table[int(h) % 6]) * 230 + 20).astype(np.uint8)


class _FramePainter:
    """Paints frame ``i`` of a clip as an RGB array (H x W x 3, uint8); deterministic given the seed."""

    def __init__(self, width: int, height: int, num_frames: int, seed: int, pattern: str) -> None:
        self.width, self.height, self.num_frames = width, height, num_frames
        self.pattern = pattern
        rng = np.random.default_rng(seed)
        self.square_colour = rng.integers(40, 256, size=3, dtype=np.uint8)
        self.square = max(8, min(width, height) // 6)
        self.phase = rng.random()
        self.start = rng.integers(0, max(1, width - self.square), size=2)
        if pattern == "pan":
            # Smooth-ish texture (low-res noise upsampled) wider than the frame, scrolled per frame.
            low = rng.integers(0, 256, size=(height // 8 + 2, (width + 4 * num_frames) // 8 + 2, 3))
            tex = np.repeat(np.repeat(low.astype(np.uint8), 8, axis=0), 8, axis=1)
            self.texture = tex[:height]
        else:
            base = rng.integers(30, 90, size=3, dtype=np.uint8)
            self.background = np.broadcast_to(base, (height, width, 3))

    def __call__(self, i: int) -> np.ndarray:
        w, h = self.width, self.height
        if self.pattern == "pan":
            img = np.ascontiguousarray(self.texture[:, 4 * i : 4 * i + w])
        else:
            img = self.background.copy()
        # Colour band under the code row: hue advances with the frame number.
        band_top = CODE_ROW_HEIGHT
        img[band_top : band_top + max(8, h // 8)] = _hue_rgb(self.phase + i / max(self.num_frames, 1))
        # Moving square (bounces inside the area below the band).
        s = self.square
        top0 = band_top + max(8, h // 8)
        span_x, span_y = max(1, w - s), max(1, h - top0 - s)
        x = _bounce(int(self.start[0]) + 3 * i, span_x)
        y = top0 + _bounce(int(self.start[1]) + 2 * i, span_y)
        img[y : y + s, x : x + s] = self.square_colour
        # Frame number, little-endian, one block per bit: white = 1, black = 0.
        for bit in range(_code_bits(w)):
            value = 235 if (i >> bit) & 1 else 16
            img[:CODE_ROW_HEIGHT, bit * CODE_BIT_WIDTH : (bit + 1) * CODE_BIT_WIDTH] = value
        return img


def _bounce(pos: int, span: int) -> int:
    period = 2 * span
    p = pos % period
    return p if p < span else period - p


def read_frame_code(rgb: np.ndarray, source_width: int | None = None) -> int:
    """Read back the frame number painted by :func:`write_clip` from a decoded RGB frame.

    ``source_width`` is the width the clip was written at, when ``rgb`` was resized since
    (aspect ratio kept); each code block must stay a few pixels wide. The code has
    ``min(16, width // 16)`` bits (10 at the default 160 px), so numbers wrap beyond that.
    """
    w = rgb.shape[1]
    source_width = source_width or w
    scale = w / source_width
    row_h = max(1, round(CODE_ROW_HEIGHT * scale))
    value = 0
    for bit in range(_code_bits(source_width)):
        x0 = int((bit + 0.25) * CODE_BIT_WIDTH * scale)
        x1 = max(x0 + 1, int((bit + 0.75) * CODE_BIT_WIDTH * scale))
        block = rgb[row_h // 4 : max(row_h // 4 + 1, 3 * row_h // 4), x0:x1]
        if block.mean() > 128:
            value |= 1 << bit
    return value


def write_clip(
    path: str | os.PathLike[str],
    *,
    num_frames: int = 125,
    fps: int = 25,
    width: int = 160,
    height: int = 120,
    codec: str = "libx264",
    gop: int = 25,
    bframes: int = 2,
    audio: bool = False,
    seed: int = 0,
    pattern: str = "moving",
    crf: int = 23,
    preset: str = "veryfast",
    faststart: bool = False,
) -> Path:
    """Write a deterministic H.264 (yuv420p) MP4 clip and return its path.

    ``gop`` is the exact keyframe interval (``gop >= num_frames`` gives a single keyframe);
    ``bframes`` the maximum number of consecutive B-frames (0: none, all frames are I or P).
    ``audio`` adds a stereo AAC sine track as long as the video. ``pattern`` is one of
    :data:`PATTERNS`. ``codec`` may also be ``"libx265"`` (same GOP control) or any other PyAV
    encoder (GOP through ``gop_size``/``max_b_frames`` only). ``faststart`` puts the index (moov)
    before the data, as web-ready files do; a cut-short copy of such a file still opens.
    The file is written to a temporary name and moved into place.
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown clip pattern {pattern!r}; expected one of {PATTERNS}")
    if num_frames < 1:
        raise ValueError(f"num_frames must be >= 1, got {num_frames}")
    if width % 2 or height % 2:
        raise ValueError(f"yuv420p needs even width and height, got {width}x{height}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    painter = _FramePainter(width, height, num_frames, seed, pattern)
    fd, tmp = tempfile.mkstemp(suffix=".mp4", dir=path.parent, prefix=f".{path.stem}.")
    os.close(fd)
    try:
        options = {"movflags": "faststart"} if faststart else {}
        with av.open(tmp, mode="w", format="mp4", options=options) as container:
            stream = container.add_stream(codec, rate=fps)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            stream.codec_context.time_base = Fraction(1, fps)
            keyint = max(1, gop)
            stream.codec_context.gop_size = keyint
            stream.codec_context.max_b_frames = bframes
            if codec in ("libx264", "libx265"):
                # The encoder's own parameters are applied last, after the preset, so these hold.
                gop_params = f"keyint={keyint}:min-keyint={keyint}:scenecut=0:bframes={bframes}:open-gop=0"
                if codec == "libx264":
                    params = {"x264-params": gop_params + ":b-adapt=0"}
                else:
                    params = {"x265-params": gop_params + ":b-adapt=0:log-level=error"}
                stream.options = {"preset": preset, "crf": str(crf), **params}
            a_stream = None
            if audio:
                a_stream = container.add_stream("aac", rate=48000)
                a_stream.layout = "stereo"
            for i in range(num_frames):
                frame = av.VideoFrame.from_ndarray(painter(i), format="rgb24").reformat(format="yuv420p")
                frame.pts = i
                frame.time_base = Fraction(1, fps)
                container.mux(stream.encode(frame))
            container.mux(stream.encode(None))
            if a_stream is not None:
                _write_sine(container, a_stream, seconds=num_frames / fps, seed=seed)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _write_sine(container: av.container.OutputContainer, stream, *, seconds: float, seed: int) -> None:
    rate, chunk = 48000, 1024
    total = int(round(seconds * rate))
    freq = 220.0 + 20.0 * (seed % 10)
    for start in range(0, total, chunk):
        n = min(chunk, total - start)
        t = (np.arange(start, start + n) / rate).astype(np.float32)
        tone = (0.2 * np.sin(2 * np.pi * freq * t)).astype(np.float32)
        frame = av.AudioFrame.from_ndarray(np.stack([tone, tone]), format="fltp", layout="stereo")
        frame.sample_rate = rate
        frame.pts = start
        frame.time_base = Fraction(1, rate)
        container.mux(stream.encode(frame))
    container.mux(stream.encode(None))


def write_audio_only(path: str | os.PathLike[str], *, seconds: float = 1.0) -> Path:
    """An MP4 with one AAC track and no video stream (a "no video stream" input for tests)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w", format="mp4") as container:
        stream = container.add_stream("aac", rate=48000)
        stream.layout = "stereo"
        _write_sine(container, stream, seconds=seconds, seed=0)
    return path


def write_empty_video(path: str | os.PathLike[str], *, width: int = 64, height: int = 64) -> Path:
    """A Matroska file whose H.264 video track has no frames (MP4 muxers drop empty tracks)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w", format="matroska") as container:
        stream = container.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        audio = container.add_stream("aac", rate=48000)
        audio.layout = "stereo"
        container.start_encoding()
        _write_sine(container, audio, seconds=0.2, seed=0)
    return path


@dataclass(frozen=True)
class PacketSummary:
    """What the video packets of a file say about its GOP structure (decoded to learn frame types)."""

    num_frames: int
    keyframes: list[int]  # presentation-order indices of keyframes
    pict_types: str  # one letter per frame in presentation order, e.g. "IBBPBBP..."
    has_audio: bool

    @property
    def num_b_frames(self) -> int:
        return self.pict_types.count("B")


def packet_summary(path: str | os.PathLike[str]) -> PacketSummary:
    """Decode a file fully (single thread) and summarise its frame types, in presentation order."""
    with av.open(os.fspath(path)) as container:
        has_audio = bool(container.streams.audio)
        stream = container.streams.video[0]
        types: list[tuple[int, str, bool]] = []
        for frame in container.decode(stream):
            types.append((frame.pts, PictureType(frame.pict_type).name, frame.key_frame))
    types.sort()
    letters = "".join(t[1][0] for t in types)
    keys = [i for i, t in enumerate(types) if t[2]]
    return PacketSummary(num_frames=len(types), keyframes=keys, pict_types=letters, has_audio=has_audio)
