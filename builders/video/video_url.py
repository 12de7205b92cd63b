"""Sampled frames as one MP4 video for a chat request's ``video_url`` part (``--video-input video``).

Servers such as vLLM take a video itself (``{"type": "video_url", "video_url": {"url": ...}}``) and
feed it to a video model's own video path, which treats it differently from N loose images. What
is sent is exactly the sampled frames, nothing else: they are re-encoded as lossless H.264 in RGB
(``libx264rgb``, ``qp=0``), each at its presentation time in the clip, so a server that decodes
the video gets the frame spec's frames pixel for pixel (``tests/test_video_input.py`` decodes it
back), and a server that samples frames itself finds no others to choose from.

Why not the clip itself, trimmed to the sampled span (a remux, no re-encode)? Its frames are exact
too, but it carries every frame between the first and last sampled one, and the server, not the
frame spec, then chooses which frames the model sees. ``benchmarks/video_input.py`` measures both
against the JPEG images; yuv420p re-encodes (smaller) are not used because chroma subsampling
changes the pixels.
"""

from __future__ import annotations

import base64
import io
from fractions import Fraction

import av

from builders.video.sampler import Frames

#: MIME type of the data URL; chat servers dispatch on it.
VIDEO_MIME = "video/mp4"
#: Time base of the encoded stream (MPEG's 90 kHz clock: exact for every common frame rate).
TIME_BASE = Fraction(1, 90_000)
ENCODER = "libx264rgb"
#: x264 settings: qp 0 is mathematically lossless. One thread makes the bytes (and so the reply-cache
#: key) the same on every machine; "veryfast" is 5% larger than "medium" in half the time (measured
#: on 16 frames of a 720p clip: 0.75 s).
ENCODER_OPTIONS = {"qp": "0", "preset": "veryfast", "threads": "1"}


def frame_pts(timestamps: list[float]) -> list[int]:
    """Presentation times in :data:`TIME_BASE` units, strictly increasing: a repeated frame (fps
    above the clip's rate, or a rule that repeats indices) is shown one tick after the previous."""
    out: list[int] = []
    for t in timestamps:
        pts = round(Fraction(t) / TIME_BASE)
        out.append(pts if not out or pts > out[-1] else out[-1] + 1)
    return out


def encode_frames_mp4(frames: Frames) -> bytes:
    """The frames as a lossless RGB H.264 MP4 (no audio), frame ``k`` at ``frames.timestamps[k]``."""
    count, height, width = frames.frames.shape[:3]
    if count == 0:
        raise ValueError("no frames to encode")
    pts = frame_pts(frames.timestamps)
    first = pts[0]
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as out:
        # The nominal rate only sets defaults (e.g. the GOP length); the real times are the pts.
        rate = Fraction(count - 1, max(1, pts[-1] - first)) / TIME_BASE if count > 1 else Fraction(1)
        stream = out.add_stream(ENCODER, rate=rate.limit_denominator(90_000) or Fraction(1))
        stream.width, stream.height, stream.pix_fmt = width, height, "rgb24"
        stream.time_base = TIME_BASE
        stream.codec_context.time_base = TIME_BASE
        stream.options = dict(ENCODER_OPTIONS)
        for rgb, t in zip(frames.frames, pts, strict=True):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = t - first, TIME_BASE
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buffer.getvalue()


def frames_to_video_url(frames: Frames) -> str:
    """A ``data:video/mp4;base64,...`` URL of :func:`encode_frames_mp4`."""
    return f"data:{VIDEO_MIME};base64," + base64.b64encode(encode_frames_mp4(frames)).decode("ascii")


def video_url_frame_count(url: str) -> int:
    """How many frames the MP4 of a :func:`frames_to_video_url` URL holds (its header's count)."""
    header, _, payload = url.partition(",")
    if not header.startswith(f"data:{VIDEO_MIME}") or not header.endswith(";base64"):
        raise ValueError(f"not a base64 {VIDEO_MIME} data URL: {url[:40]!r}")
    with av.open(io.BytesIO(base64.b64decode(payload)), mode="r") as container:
        return container.streams.video[0].frames
