"""The frames an LLM step shows of a clip, as JPEG data URLs, decoded once per clip and frame spec.

:class:`FrameImages` samples a clip (:func:`builders.video.sampler.sample_frames`), encodes each
frame to JPEG exactly as :func:`builders.video.sampler.frames_to_data_urls` does (same bytes, so
the same reply-cache keys) and returns :class:`~builders.llm.messages.ImageURL` values, which carry
the sha256 of their JPEG bytes so the cache key never decodes them again. Inside
:func:`decoding_processes` (the step loop enters it for a long step) the sampling and encoding run in
worker processes (:class:`DecodeProcesses`). Results are kept:

- in memory for the clips of the items in flight and more (a MarineLife video's questions and a
  BoLD clip's annotated persons share its frames; concurrent asks for one clip wait for one decode);
- optionally on disk (``cache_dir``, e.g. ``<work>/frames``), content-addressed by the clip's bytes
  and the frame spec, so the build's STEP2 and STEP4 decode a clip once between them. Each file holds
  the sha256 of each frame's JPEG bytes, checked when it is read: a damaged file is logged and decoded
  again (and rewritten), never sent.

:class:`ProbeImages` has the same call and decodes nothing: placeholder JPEGs of the size and count
the real frames would have (from the clip's index), for ``--estimate``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import pickle
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from builders.files.space import is_disk_full
from builders.llm.messages import ImageURL, jpeg_data_url
from builders.video.frame_rules import reader_indices
from builders.video.frame_spec import FrameSpec
from builders.video.jpeg import JPEG_QUALITY, jpeg_bytes
from builders.video.sampler import ClipReader, output_size
from builders.video.source import SourceLike, VideoError, VideoSource

log = logging.getLogger(__name__)

#: Data URLs a :class:`FrameImages` keeps in memory (characters, about bytes): its class doc says why.
MEMORY_BYTES = 96 * 1024 * 1024
_FORMAT = 2  # of the files under cache_dir; bump to stop reading old ones (2: a sha256 per frame)


def clip_digest(source: SourceLike) -> str:
    """sha256 of a clip's bytes (a path, bytes, or a ``{"path", "bytes"}`` video value)."""
    value = (source.get("bytes") or source["path"]) if isinstance(source, Mapping) else source
    if isinstance(value, bytes | bytearray | memoryview):
        return hashlib.sha256(value).hexdigest()
    digest = hashlib.sha256()
    with open(value, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def decode_images(source: SourceLike, spec: FrameSpec) -> list[str]:
    """Sample and encode a clip's frames, nothing kept (the plain :data:`Images` provider); in a
    worker process while :func:`decoding_processes` is active.

    One decoder thread per clip: the step loop prepares one clip per CPU at once, and more threads
    per clip would only compete with the other clips' (``benchmarks/evaluate.py``). The frames are
    :meth:`FrameSpec.sample`'s (its frame rule); a ``video`` input is :meth:`FrameSpec.data_urls`'
    one MP4 data URL."""
    processes = _active
    if processes is not None and spec.video_input == "images":
        return processes.decode(source, spec)
    return _decode_here(source, spec)


def _decode_here(source: SourceLike, spec: FrameSpec) -> list[str]:
    if spec.video_input != "images":
        return list(spec.data_urls(source))
    with ClipReader(source, threads=1) as reader:
        indices = reader_indices(reader, spec.rule, spec.num_frames, spec.fps)
        frames = reader.get_frames_at(indices, max_side=spec.max_side)
    return [jpeg_data_url(jpeg_bytes(rgb)) for rgb in frames.frames]


class DecodeProcesses:
    """Worker processes that sample and encode frames for :func:`decode_images`.

    Why processes: Pillow's JPEG encoder holds the GIL (py-spy on the BQA runner: 44% of the GIL's
    time was ``ImageFile._encode_tile``), so prepare threads in one process take turns on it, and
    the event loop sending the requests waits behind them. On 2 cores, 300 clips x 16 frames took
    9.2-9.6 s on 2 threads and 8.1-8.4 s on 2 processes (``benchmarks/evaluate.py``, ``pool``).
    The JPEG bytes are the same as in process, so are the reply-cache keys.

    A worker is ``python -m builders.runs.decode_worker``, not a ``multiprocessing`` child: those
    import the caller's ``__main__`` again (a researcher's script without a ``__main__`` guard
    would run again in every worker), and ``ProcessPoolExecutor``'s shared queues wait for ever on
    a worker killed while writing its result there (seen in this module's test). Each worker has
    its own pipes and one clip at a time, so a dead worker is an end of file on its own pipe: its
    clip is decoded again in a fresh worker, and a clip whose decoder dies twice is rejected
    (``VideoError``); no other clip is touched.

    ``local_clips``: the first clips asked for are decoded in the calling thread (None: all of
    them, no process is started; either way ``workers`` clips at a time), and the workers are started (``Popen`` returns at once: their imports run in them) when half that many have
    been asked for, so that their start-up overlaps the decoding of the other half. Starting a
    worker costs 0.13-0.2 s on an idle machine and 2-4 s on a loaded one (CPU that the clips
    being decoded would have had), so a step whose rows share a few clips (BoLD clips with several
    annotated persons: 160 rows over 3 clips) never starts any, and a long one does not wait for
    them. Clips are counted as asked for: a :class:`FrameImages` asks once per clip and frame spec.
    """

    def __init__(self, workers: int, local_clips: int | None = 0) -> None:
        self.workers = workers
        self.local_clips = local_clips
        self.asked = 0  # clips asked for
        self.started = 0  # worker processes started (replacements included)
        self.replaced = 0  # workers that died and were replaced
        self._slots = threading.BoundedSemaphore(workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def decode(self, source: SourceLike, spec: FrameSpec) -> list[str]:
        with self._lock:
            self.asked += 1
            local = self.local_clips is None or self.asked <= self.local_clips
            if self.local_clips is not None and self.asked > self.local_clips // 2 and not self.started:
                self._idle += [self._start() for _ in range(self.workers)]  # start-up overlaps local decodes
        with self._slots:  # at most `workers` clips decoded at once, here or in the workers
            if local:
                return _decode_here(source, spec)
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            for attempt in (1, 2):
                if worker is None:
                    with self._lock:
                        worker = self._start()
                try:
                    kind, value = worker.call(source, spec)
                except _WorkerDied:
                    worker.close()
                    worker = None
                    with self._lock:
                        self.replaced += 1
                    if attempt == 2:
                        name = VideoSource.of(source).name
                        raise VideoError(f"{name}: the frame decoder process died on this clip") from None
                    continue
                with self._lock:
                    self._idle.append(worker)
                if kind != "ok":
                    raise PASSED_ON.get(kind, RuntimeError)(value)
                return value
        raise AssertionError("unreachable")

    def _start(self) -> _Worker:
        self.started += 1
        return _Worker()

    def close(self) -> None:
        """Stop the workers: all are told at once (end of input), then waited for."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.end_input()
        for worker in idle:
            worker.close()


class _WorkerDied(Exception):
    pass


class _Worker:
    """One ``builders.runs.decode_worker`` process: pickles in on its stdin, out on its stdout."""

    def __init__(self) -> None:
        # The parent's import path, so a checkout run without installing finds the same package.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "builders.runs.decode_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def call(self, source: SourceLike, spec: FrameSpec) -> tuple[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            pickle.dump((source, spec), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
            return pickle.load(self.process.stdout)  # the worker holds the only write end
        except (EOFError, OSError, pickle.UnpicklingError) as err:  # dead, or died mid-reply
            raise _WorkerDied from err

    def end_input(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]  # end of input: the worker exits

    def close(self) -> None:
        self.end_input()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()  # type: ignore[union-attr]


#: Exceptions a worker hands back by type (the step loop rejects these items); others by message.
PASSED_ON: dict[str, type[Exception]] = {"VideoError": VideoError, "FileNotFoundError": FileNotFoundError}


def decode_reply(source: SourceLike, spec: FrameSpec) -> tuple[str, Any]:
    """A worker's answer for one clip: ``("ok", urls)`` or ``(error type, message)``."""
    try:
        return "ok", _decode_here(source, spec)
    except Exception as err:  # by name: not every exception type survives pickling
        kind = type(err).__name__ if type(err).__name__ in PASSED_ON else "error"
        if kind != "error":
            return kind, str(err)
        try:  # the clip's name, never the repr of its embedded bytes
            name = VideoSource.of(source).name
        except Exception:
            name = type(source).__name__
        return kind, f"{name}: {type(err).__name__}: {err}"


_active: DecodeProcesses | None = None
_active_lock = threading.Lock()


@contextmanager
def decoding_processes(workers: int, local_clips: int | None = 0) -> Iterator[DecodeProcesses]:
    """While inside, :func:`decode_images` (and so every :class:`FrameImages`) decodes in ``workers``
    processes, but for the first ``local_clips`` clips (:class:`DecodeProcesses`); re-entered, the
    outer pool serves both. Left, the workers are stopped."""
    global _active
    with _active_lock:
        outer = _active
        processes = outer if outer is not None else DecodeProcesses(workers, local_clips)
        _active = processes
    try:
        yield processes
    finally:
        if outer is None:
            with _active_lock:
                _active = None
            processes.close()


#: What a step calls for a clip's frames: ``images(source, spec) -> data URLs``.
Images = Callable[[SourceLike, FrameSpec], Sequence[str]]


def frames_dir(work_dir: str | os.PathLike[str]) -> Path:
    """Where a work folder keeps the frames its LLM steps share (``<work>/frames``)."""
    return Path(work_dir) / "frames"


class FrameImages:
    """``images(source, spec)``: the clip's frames as data URLs (module doc), decoded once per clip
    content and frame spec while they stay in memory (or on disk, JPEGs only, with ``cache_dir``).

    Memory holds the most recently used clips' URLs up to ``memory_bytes`` in all (at least one
    clip): enough for the clips of every item a step has in flight (its ``max_concurrency`` plus
    the items prepared ahead, at 16 720p frames about 2.5 MB a clip), so rows that share a clip
    (BoLD clips with several annotated persons, MarineLife videos with many questions) and
    several requests of one row (a two-stage chain of thought) decode it once, wherever they
    fall in the step, as long as no more other clips come between them than fit.
    """

    def __init__(
        self, cache_dir: str | os.PathLike[str] | None = None, memory_bytes: int = MEMORY_BYTES
    ) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.memory_bytes = memory_bytes
        self.decoded = 0  # clips decoded by this object (not found in memory or on disk)
        self._memory: OrderedDict[str, list[str]] = OrderedDict()
        self._held = 0  # characters of the URLs in memory
        self._lock = threading.Lock()
        self._busy: dict[str, threading.Lock] = {}

    def __call__(self, source: SourceLike, spec: FrameSpec) -> list[str]:
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
            jpegs = spec.video_input == "images"  # the disk holds JPEGs, not a video's one MP4 URL
            urls = self._load(key) if jpegs else None
            if urls is None:
                urls = decode_images(source, spec)
                if jpegs:
                    self._store(key, urls)
                with self._lock:
                    self.decoded += 1
            with self._lock:
                self._memory[key] = urls
                self._held += sum(len(url) for url in urls)
                while self._held > self.memory_bytes and len(self._memory) > 1:
                    _, dropped = self._memory.popitem(last=False)
                    self._held -= sum(len(url) for url in dropped)
                self._busy.pop(key, None)
            return urls

    def _key(self, source: SourceLike, spec: FrameSpec) -> str:
        # Paths are keyed by content only when there is a disk cache (it must survive a moved clip);
        # in memory the path (or the bytes' digest) is enough.
        if self.cache_dir is None and isinstance(source, str | os.PathLike):
            clip = f"path:{Path(source).resolve()}"
        else:
            clip = clip_digest(source)
        identity = {"v": _FORMAT, "clip": clip, "frames": spec.to_json(), "quality": JPEG_QUALITY}
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path | None:
        return self.cache_dir / key[:2] / f"{key}.jpgs" if self.cache_dir is not None else None

    def _load(self, key: str) -> list[str] | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        data = path.read_bytes()
        header, _, body = data.partition(b"\n")
        try:
            meta = json.loads(header)
            sizes, digests = meta["sizes"], meta["sha256"]
            ok = meta.get("v") == _FORMAT and len(digests) == len(sizes) and sum(sizes) == len(body)
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:  # not ours, from an older version, or torn: decode again (and overwrite)
            log.info("frame cache %s: unreadable or from an older version; decoding the clip again", path)
            return None
        urls: list[str] = []
        start = 0
        for number, (size, digest) in enumerate(zip(sizes, digests, strict=True), start=1):
            url = jpeg_data_url(body[start : start + size])  # hashes the bytes: the digest check is free
            if url.sha256 != digest:
                log.warning(
                    "frame cache %s: frame %d does not match its sha256 (the file is damaged); decoding the "
                    "clip again", path, number,
                )  # fmt: skip
                return None
            urls.append(url)
            start += size
        return urls

    def _store(self, key: str, urls: list[str]) -> None:
        path = self._path(key)
        if path is None:
            return
        jpegs = [base64.b64decode(url.partition(",")[2]) for url in urls]  # written once per clip
        digests = [
            getattr(u, "sha256", None) or hashlib.sha256(j).hexdigest()
            for u, j in zip(urls, jpegs, strict=True)
        ]
        header = {"v": _FORMAT, "sizes": [len(j) for j in jpegs], "sha256": digests}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(jpegs))
            os.replace(tmp, path)  # no fsync: a lost or torn file is decoded again, never sent (hashes)
        except OSError as err:
            if not is_disk_full(err):
                raise
            tmp.unlink(missing_ok=True)  # the frames are only a cache: the run goes on without them
            log.warning("frame cache %s: not written, the disk is full", path)


class ProbeImages:
    """``images(source, spec)`` without decoding: grey JPEGs of the real frames' size and count
    (marked ``placeholder``: an estimate cannot look their requests up in the reply cache)."""

    def __init__(self) -> None:
        self._blank: dict[tuple[int, int], ImageURL] = {}
        self._lock = threading.Lock()

    def __call__(self, source: SourceLike, spec: FrameSpec) -> list[str]:
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
