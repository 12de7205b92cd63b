"""The frames an LLM step shows of a clip, as JPEG data URLs, decoded once per clip and frame spec.

:class:`FrameImages` samples a clip (:func:`builders.video.sampler.sample_frames`), encodes each
frame to JPEG exactly as :func:`builders.video.sampler.frames_to_data_urls` does (same bytes, so
the same reply-cache keys) and returns :class:`~builders.llm.messages.ImageURL` values, which carry
the sha256 of their JPEG bytes so the cache key never decodes them again. Results are kept:

- in memory for the last few clips (a MarineLife video's questions share its frames; concurrent
  asks for one clip wait for one decode);
- optionally on disk (``cache_dir``, e.g. ``<work>/frames``), content-addressed by the clip's bytes
  and the frame spec, so the build's STEP2 and STEP4 decode a clip once between them.

:class:`ProbeImages` has the same call and decodes nothing: placeholder JPEGs of the size and count
the real frames would have (from the clip's index), for ``--estimate``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from builders.llm.messages import ImageURL, jpeg_data_url
from builders.video.frame_rules import reader_indices
from builders.video.frame_spec import FrameSpec
from builders.video.sampler import ClipReader, output_size
from builders.video.source import SourceLike

#: JPEG quality of every frame shown to an LLM (the default of ``frames_to_data_urls``).
JPEG_QUALITY = 85
_FORMAT = 1  # of the files under cache_dir; bump to stop reading old ones


def jpeg_bytes(rgb: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    """One RGB frame as JPEG, byte for byte what ``frames_to_data_urls`` encodes."""
    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def clip_digest(source: SourceLike) -> str:
    """sha256 of a clip's bytes (a path, bytes, or a ``{"path", "bytes"}`` video value)."""
    if isinstance(source, dict):
        source = source.get("bytes") or source["path"]
    if isinstance(source, bytes | bytearray | memoryview):
        return hashlib.sha256(source).hexdigest()
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def decode_images(source: SourceLike, spec: FrameSpec) -> list[ImageURL]:
    """Sample and encode a clip's frames, nothing kept (the plain :data:`Images` provider).

    One decoder thread per clip: the step loop prepares one clip per CPU at once, and more threads
    per clip would only compete with the other clips' (``benchmarks/evaluate.py``). The frames are
    :meth:`FrameSpec.sample`'s (its frame rule); a ``video`` input is :meth:`FrameSpec.data_urls`'
    one MP4 data URL."""
    if spec.video_input != "images":
        return list(spec.data_urls(source))
    with ClipReader(source, threads=1) as reader:
        indices = reader_indices(reader, spec.rule, spec.num_frames, spec.fps)
        frames = reader.get_frames_at(indices, max_side=spec.max_side)
    return [jpeg_data_url(jpeg_bytes(rgb)) for rgb in frames.frames]


#: What a step calls for a clip's frames: ``images(source, spec) -> data URLs``.
Images = Callable[[SourceLike, FrameSpec], Sequence[str]]


def frames_dir(work_dir: str | os.PathLike[str]) -> Path:
    """Where a work folder keeps the frames its LLM steps share (``<work>/frames``)."""
    return Path(work_dir) / "frames"


class FrameImages:
    """``images(source, spec)``: the clip's frames as JPEG data URLs (module doc)."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None, keep: int = 8) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.keep = keep
        self.decoded = 0  # clips decoded by this object (not found in memory or on disk)
        self._memory: OrderedDict[str, list[ImageURL]] = OrderedDict()
        self._lock = threading.Lock()
        self._busy: dict[str, threading.Lock] = {}

    def __call__(self, source: SourceLike, spec: FrameSpec) -> list[ImageURL]:
        if spec.video_input != "images":
            return decode_images(source, spec)  # one MP4 URL: not kept (the cache holds JPEGs)
        key = self._key(source, spec)
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
            busy = self._busy.setdefault(key, threading.Lock())
        with busy:  # a second ask for the same clip waits for the first decode
            with self._lock:
                if key in self._memory:
                    return self._memory[key]
            urls = self._load(key)
            if urls is None:
                urls = decode_images(source, spec)
                self._store(key, urls)
                with self._lock:
                    self.decoded += 1
            with self._lock:
                self._memory[key] = urls
                while len(self._memory) > self.keep:
                    self._memory.popitem(last=False)
                self._busy.pop(key, None)
            return urls

    def _key(self, source: SourceLike, spec: FrameSpec) -> str:
        # Paths are keyed by content only when there is a disk cache (it must survive a moved clip);
        # in memory the path (or the bytes' digest) is enough.
        if self.cache_dir is None and not isinstance(source, dict | bytes | bytearray | memoryview):
            clip = f"path:{Path(source).resolve()}"
        else:
            clip = clip_digest(source)
        identity = {"v": _FORMAT, "clip": clip, "frames": spec.to_json(), "quality": JPEG_QUALITY}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path | None:
        return self.cache_dir / key[:2] / f"{key}.jpgs" if self.cache_dir is not None else None

    def _load(self, key: str) -> list[ImageURL] | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        data = path.read_bytes()
        header, _, body = data.partition(b"\n")
        try:
            sizes = json.loads(header)["sizes"]
        except (ValueError, KeyError):
            return None  # not ours, or torn: decode again (and overwrite)
        if sum(sizes) != len(body):
            return None
        urls, start = [], 0
        for size in sizes:
            urls.append(jpeg_data_url(body[start : start + size]))
            start += size
        return urls

    def _store(self, key: str, urls: list[ImageURL]) -> None:
        path = self._path(key)
        if path is None:
            return
        jpegs = [base64.b64decode(url.partition(",")[2]) for url in urls]  # written once per clip
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(json.dumps({"sizes": [len(j) for j in jpegs]}).encode() + b"\n" + b"".join(jpegs))
        os.replace(tmp, path)  # no fsync: a lost file is decoded again, never read torn (sizes check)


class ProbeImages:
    """``images(source, spec)`` without decoding: grey JPEGs of the real frames' size and count
    (marked ``placeholder``: an estimate cannot look their requests up in the reply cache)."""

    def __init__(self) -> None:
        self._blank: dict[tuple[int, int], ImageURL] = {}
        self._lock = threading.Lock()

    def __call__(self, source: SourceLike, spec: FrameSpec) -> list[ImageURL]:
        if spec.video_input != "images":
            return decode_images(source, spec)  # a video's tokens follow its frames: encode it
        with ClipReader(source, threads=1) as reader:
            count = len(reader_indices(reader, spec.rule, spec.num_frames, spec.fps))
            size = output_size(reader.width, reader.height, spec.max_side)
        with self._lock:
            if size not in self._blank:
                grey = np.full((size[1], size[0], 3), 128, dtype=np.uint8)
                url = jpeg_data_url(jpeg_bytes(grey))
                self._blank[size] = ImageURL(url, url.sha256, placeholder=True)
            return [self._blank[size]] * count
