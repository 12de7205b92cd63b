"""Payload of 16 sampled frames of a 720p clip: JPEG images against the ways to send one video.

For each clip (5 s, 25 fps, 1280x720, written with :mod:`builders.testing.clips`: ``moving`` is
flat colour with a moving square, ``pan`` adds a scrolling random texture, a worst case for any
codec), 16 uniform frames are sampled and sent as:

- ``images``: 16 JPEG data URLs (quality 85, what ``--video-input images`` sends);
- ``video`` (``--video-input video``): one MP4 of exactly those frames, lossless RGB H.264
  (:func:`builders.video.video_url.encode_frames_mp4`);
- ``yuv444 qp0`` / ``yuv420 crf18``: the same frames re-encoded in YUV (near-lossless, smaller or
  not), to show how far from the frames they decode;
- ``trimmed clip``: the audio-free clip remuxed (no re-encode) from the keyframe before the first
  sampled frame to the last one: its frames are the clip's own, but it holds every frame of the
  span, and the server picks which ones the model sees.

Printed per way: bytes (the base64 URL is 4/3 of that), encode seconds, and whether the frames a
full decode of the payload yields include the 16 sampled frames exactly (max abs pixel error).
Run: ``python benchmarks/video_input.py``.
"""

from __future__ import annotations

import base64
import io
import sys
import tempfile
import time
from pathlib import Path

import av
import numpy as np

from builders.testing.clips import write_clip
from builders.video.sampler import frames_to_data_urls, sample_frames
from builders.video.video_url import TIME_BASE, encode_frames_mp4, frame_pts


def decode_all(data: bytes) -> list[np.ndarray]:
    with av.open(io.BytesIO(data)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def encode_yuv(frames, pix_fmt: str, options: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height = frames.frames.shape[2], frames.frames.shape[1]
        stream.pix_fmt, stream.time_base, stream.options = pix_fmt, TIME_BASE, options
        for rgb, pts in zip(frames.frames, frame_pts(frames.timestamps), strict=True):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = pts, TIME_BASE
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buffer.getvalue()


def trimmed_clip(path: Path, first: int, last: int) -> bytes:
    """Video packets from the keyframe at or before frame ``first`` through frame ``last`` (pts order)."""
    with av.open(str(path)) as inp:
        stream = inp.streams.video[0]
        packets = [p for p in inp.demux(stream) if p.size]
        order = sorted(range(len(packets)), key=lambda i: packets[i].pts)
        first_pos, last_pos = order[first], order[last]
        start = max(i for i in range(first_pos + 1) if packets[i].is_keyframe)
        # decode order: everything up to the last packet any frame <= last depends on
        end = max(order[: last + 1])
        buffer = io.BytesIO()
        with av.open(buffer, mode="w", format="mp4") as out:
            copy = out.add_stream_from_template(stream)
            for packet in packets[start : max(end, last_pos) + 1]:
                packet.stream = copy
                out.mux(packet)
    return buffer.getvalue()


def max_error(decoded: list[np.ndarray], wanted: np.ndarray) -> int | None:
    """Max abs pixel error of the best-matching decoded frame for each wanted frame (None: sizes differ)."""
    if not decoded or decoded[0].shape != wanted[0].shape:
        return None
    stack = np.stack(decoded).astype(np.int16)
    return int(
        max(np.abs(stack - w.astype(np.int16)).reshape(len(stack), -1).max(axis=1).min() for w in wanted)
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for pattern in ("moving", "pan"):
            path = write_clip(Path(tmp) / f"{pattern}.mp4", num_frames=125, width=1280, height=720,
                              pattern=pattern, audio=True, crf=23)  # fmt: skip
            frames = sample_frames(path, num_frames=16)
            print(
                f"{pattern}: clip {path.stat().st_size:,} bytes (with audio), 16 of {frames.total_frames} frames"
            )
            ways = {}
            t = time.perf_counter()
            urls = frames_to_data_urls(frames)
            ways["images (16 JPEG q85)"] = (sum(len(base64.b64decode(u.split(",", 1)[1])) for u in urls),
                                            time.perf_counter() - t, None)  # fmt: skip
            for name, (encode, *arguments) in {
                "video (lossless RGB H.264)": (encode_frames_mp4, frames),
                "yuv444 qp0": (encode_yuv, frames, "yuv444p", {"qp": "0", "preset": "veryfast"}),
                "yuv420 crf18": (encode_yuv, frames, "yuv420p", {"crf": "18", "preset": "veryfast"}),
                "trimmed clip (remux)": (trimmed_clip, path, frames.indices[0], frames.indices[-1]),
            }.items():
                t = time.perf_counter()
                data = encode(*arguments)
                elapsed = time.perf_counter() - t
                ways[name] = (len(data), elapsed, max_error(decode_all(data), frames.frames))
            for name, (size, elapsed, error) in ways.items():
                exact = "-" if error is None and name.startswith("images") else f"max error {error}"
                print(f"  {name:28s} {size:>11,} bytes  {elapsed:5.2f} s  {exact}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
