"""Copy a clip without its audio: packets are copied as they are (no re-encode, no quality loss)."""

from __future__ import annotations

import os
from pathlib import Path

import av

from builders.files.jsonio import write_file_atomic
from builders.video.sampler import ClipReader
from builders.video.source import SourceLike, VideoError, VideoSource, describe_error, video_stream

#: Stream kinds kept by :func:`remove_audio`; audio is dropped, and so are data streams (e.g.
#: timecode tracks, which MP4 muxers cannot always take back).
KEPT_STREAM_TYPES = ("video", "subtitle")


def remove_audio(src: SourceLike | VideoSource, dst: str | os.PathLike) -> Path:
    """Write ``src`` to ``dst`` without audio (container chosen from ``dst``'s suffix); return ``dst``.

    The file appears atomically: it is written under a temporary name next to ``dst`` and moved
    into place, so an interrupted run never leaves a half-written clip behind. A source that the
    frame sampler calls truncated or corrupt when strict (:class:`ClipReader` with ``strict=True``:
    a read error, an incomplete packet, a packet the decoder rejects, no frames) is a VideoError:
    copying its packets would launder it into a valid, shorter clip.
    """
    source = VideoSource.of(src)
    dst = Path(dst)
    with ClipReader(source, strict=True):
        pass  # opening indexes the frames; strict refuses a damaged source

    def remux(tmp: Path) -> None:
        with source.open() as inp:
            video_stream(inp, source.name)  # a clear error when there is nothing to keep
            kept = [s for s in inp.streams if s.type in KEPT_STREAM_TYPES]
            try:
                with av.open(str(tmp), mode="w", format=None if dst.suffix else "mp4") as out:
                    mapping = {s.index: out.add_stream_from_template(s) for s in kept}
                    for packet in inp.demux(kept):
                        if packet.size == 0:  # PyAV's end-of-stream marker
                            continue
                        packet.stream = mapping[packet.stream.index]
                        out.mux(packet)
            except av.FFmpegError as err:
                raise VideoError(f"cannot remux {source.name} to {dst}: {describe_error(err)}") from err

    return write_file_atomic(dst, remux)
