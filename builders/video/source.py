"""Where a video comes from: a path, raw bytes, or a ``datasets`` video value; opened with PyAV.

One place turns every accepted source into an open PyAV container and every PyAV failure into a
:class:`VideoError` that names the source, so callers never see a bare FFmpeg error code.
"""

from __future__ import annotations

import io
import os
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import av.container

#: What :class:`VideoSource.of` accepts: a path, the file's bytes, or ``datasets.Video(decode=False)``'s
#: ``{"path": ..., "bytes": ...}`` value.
SourceLike = str | os.PathLike | bytes | bytearray | memoryview | Mapping[str, Any]


_counters: list[Counter[str]] = []
_counters_lock = threading.Lock()


@contextmanager
def counting_opens() -> Iterator[Counter[str]]:
    """Count the containers this process opens while inside, by source name (:attr:`VideoSource.name`):
    how tests and ``benchmarks/`` check that a command opens each clip once. Opens in decode worker
    processes are theirs, not counted here."""
    counter: Counter[str] = Counter()
    with _counters_lock:
        _counters.append(counter)
    try:
        yield counter
    finally:
        with _counters_lock:
            _counters.remove(counter)


class VideoError(ValueError):
    """A video that cannot be read as asked (unreadable, truncated, no frames, bad request)."""


@dataclass(frozen=True)
class VideoSource:
    """A video's bytes or path plus a human-readable name for error messages."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    @classmethod
    def of(cls, source: SourceLike | VideoSource) -> VideoSource:
        """Normalise a path, bytes or ``{"path", "bytes"}`` mapping; fail early on missing/empty input."""
        if isinstance(source, VideoSource):
            return source
        if isinstance(source, (bytes, bytearray, memoryview)):
            return cls._from_bytes(bytes(source), name=f"<video bytes, {len(source)} bytes>")
        if isinstance(source, Mapping):
            data, path = source.get("bytes"), source.get("path")
            if data is not None:
                # datasets keeps the original file name next to embedded bytes: use it in messages.
                label = f"{path} (embedded bytes)" if path else f"<video bytes, {len(data)} bytes>"
                return cls._from_bytes(bytes(data), name=label)
            if path is not None:
                return cls._from_path(path)
            raise VideoError(f"video value has neither 'bytes' nor 'path': keys {sorted(source)}")
        if isinstance(source, (str, os.PathLike)):
            return cls._from_path(source)
        raise TypeError(
            f"unsupported video source type {type(source).__name__}; expected a path, bytes or dict"
        )

    @classmethod
    def _from_path(cls, path: str | os.PathLike) -> VideoSource:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"video file not found: {p}")
        if p.stat().st_size == 0:
            raise VideoError(f"video file is empty: {p}")
        return cls(name=str(p), path=p)

    @classmethod
    def _from_bytes(cls, data: bytes, name: str) -> VideoSource:
        if not data:
            raise VideoError(f"video is empty (0 bytes): {name}")
        return cls(name=name, data=data)

    def open_container(self) -> av.container.InputContainer:
        """Open for reading; the caller closes it (prefer :meth:`open`)."""
        if _counters:
            with _counters_lock:
                for counter in _counters:
                    counter[self.name] += 1
        try:
            return av.open(io.BytesIO(self.data) if self.data is not None else str(self.path), mode="r")
        except av.FFmpegError as err:
            raise VideoError(f"cannot open video {self.name}: {describe_error(err)}") from err

    @contextmanager
    def open(self) -> Iterator[av.container.InputContainer]:
        """Open for reading; the container is closed on exit whatever happens."""
        container = self.open_container()
        try:
            yield container
        finally:
            container.close()


def video_stream(
    container: av.container.InputContainer, name: str, index: int | None = None
) -> av.VideoStream:
    """The main video stream: the first that is not an attached picture (cover art), or stream ``index``.

    ``index`` is the stream's number in the container (ffprobe's ``#0:index``); it must be a
    video stream. A clear error if there is none or it cannot be decoded.
    """
    if index is not None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(container.streams):
            raise VideoError(f"{name} has no stream {index!r} (it has {len(container.streams)} streams)")
        chosen = container.streams[index]
        if not isinstance(chosen, av.VideoStream):
            raise VideoError(f"stream {index} of {name} is {chosen.type}, not video")
        candidates = [chosen]
    else:
        candidates = [
            s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic
        ]
    for stream in candidates:
        if stream.codec_context is None:
            raise VideoError(f"no decoder for the video codec of {name} ({stream.codec.name})")
        return stream
    kinds = ", ".join(s.type for s in container.streams) or "none"
    raise VideoError(f"no video stream in {name} (streams: {kinds})")


def demux_only(stream: av.VideoStream) -> None:
    """Make the demuxer skip every other stream of ``stream``'s container (no audio packets read).

    PyAV 15 (what lmms-eval pins: ``av<16``) has no ``Stream.discard``: there ``demux(stream)``
    still yields that stream's packets alone, after reading the others' from the file."""
    discard = getattr(getattr(av.stream, "Discard", None), "all", None)
    if discard is None:
        return
    for other in stream.container.streams:
        if other.index != stream.index:
            other.discard = discard


def describe_error(err: av.FFmpegError) -> str:
    """Short text of a PyAV error for messages that already name the source.

    ``str(err)`` repeats the errno and a placeholder file name ('<none>' for bytes input).
    """
    return getattr(err, "strerror", None) or str(err)
