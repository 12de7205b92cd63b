"""Exact, fast video frame sampling with PyAV: the frames a full sequential decode gives, for less.

``sample_frames(source, num_frames=16)`` is what users call; :class:`ClipReader` is the object
under it (one video, indexed once, ``get_frames_at(indices)`` with exact indices and a sorted
decode). Frame ``i`` is the ``i``-th frame of a full sequential decode; see
:mod:`builders.video.index` for how frames are counted and how decoding is planned.

Why it is fast (``benchmarks/frames.py`` measures it against the usual ways and the bare decode):

- only keyframe-started stretches that end at a wanted frame are decoded, nothing after the last;
- H.264/HEVC non-reference frames that are not wanted are skipped (``skip_frame="NONREF"``, set
  per packet: a skipped frame is by definition never used to predict another);
- independent stretches decode in parallel, one single-threaded decoder each, fed by one demuxer;
  when stretches are too few or too unequal to share out, one decoder uses FFmpeg's frame threads;
- only wanted frames are converted to RGB (and resized), never inside a frame-threaded decode
  loop: a converter thread takes them (a parallel worker converts its own, having no frame
  threads to stall), with one scaler context per thread instead of one per frame.

Memory stays bounded: at most ``threads + 1`` stretches of compressed packets are held at once
(a stretch larger than :data:`SEGMENT_BYTES_LIMIT` switches to streaming), plus the output.

Where none of that can be proven exact for a file, it is not guessed at (each case is logged at
debug level):

- files whose packets do not say which frames a decode outputs (AVI of codecs that reorder
  frames, raw streams, splices, flagged-corrupt packets) are counted by one full decode, which
  also keeps the frames the packets suggest (:meth:`ClipReader.sample`), so sampling them costs
  one sequential decode: there no sampler can beat a sequential decode that is told the frame
  count, and ``benchmarks/frames.py`` shows ties;
- a cut that starts mid-GOP has its first packets decoded once, to learn which ones a decoder
  drops; stretches start only where the bitstream shows a decoder can start (an H.264 IDR, not
  an intra-refresh recovery point flagged as keyframe);
- a decoder started mid-stream that misses a frame the index promised, or conceals decode errors
  (concealment fills damaged blocks from the frames decoded before, even across a keyframe), is
  replaced by a decode from the first packet; a decode that must start at a packet that is no
  random-access point gets a new decoder, never a flushed one;
- a file whose first packet announces an x264 build has every decoder told that build (the h264
  decoder option ``x264_build``), so one started mid-stream decodes as one that read the
  announcement; where the build changes pixels (old builds' lossless 4:4:4, see
  :func:`~builders.video.bitstream.x264_build_matters`), decoders run on one thread each, as
  libavcodec applies those workarounds only there, and stretches still decode in parallel;
- a packet a decoder rejects ends the video there, as a full decode ends: the frames are then
  counted by one full decode and the sample is taken over them (:meth:`ClipReader.sample`).
"""

from __future__ import annotations

import base64
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

import av
import numpy as np
from av.video.codeccontext import VideoCodecContext
from av.video.reformatter import VideoReformatter

from builders.video.index import (
    DecodedIndex,
    FrameIndex,
    Segment,
    fps_indices,
    plan_segments,
    uniform_indices,
)
from builders.video.jpeg import JPEG_QUALITY, jpeg_bytes
from builders.video.source import (
    SourceLike,
    VideoError,
    VideoSource,
    demux_only,
    describe_error,
    video_stream,
)

__all__ = [
    "ClipReader",
    "Frames",
    "VideoError",
    "frames_to_data_urls",
    "output_size",
    "sample_frames",
]

#: Codecs whose decoder needs nothing but the stream's extradata and fourcc (MPEG-4 Part 2: an
#: ``XVID`` fourcc alone picks Xvid's IDCT), so that extra decoders can be created for parallel
#: stretches (each one checked pixel for pixel in the tests).
PARALLEL_CODECS = frozenset({"h264", "hevc", "mpeg4", "vp8", "vp9", "mjpeg"})
#: Codecs where ``skip_frame="NONREF"`` skips exactly the frames no other frame refers to.
NONREF_SKIP_CODECS = frozenset({"h264", "hevc"})
#: A stretch with more compressed bytes than this is streamed, not buffered for a parallel worker.
SEGMENT_BYTES_LIMIT = 64 * 1024 * 1024
#: Speed-up per thread of FFmpeg's frame threads over one thread, measured on H.264 clips with
#: 2 CPUs (about 1.3x for 2 threads); parallel stretches are used when they finish sooner.
FRAME_THREAD_EFFICIENCY = 0.65
#: Gaps of at most this many packets between stretches are read through (not decoded) instead of
#: seeking: reading a few packets is cheaper than a seek and its buffer refill.
READ_THROUGH_PACKETS = 32
#: Files of at most this many packets decode on the calling thread, one decoder thread, no converter
#: thread: starting FFmpeg's frame threads and handing frames between threads costs more than
#: decoding a few frames (a 3-frame 360p clip: 13.6 ms with threads, 9.8 ms without, minima of 15).
SMALL_FILE_PACKETS = 16
#: Resampling filter for ``max_side`` (area averaging: no aliasing on downscale).
RESIZE_INTERPOLATION = "AREA"

log = logging.getLogger(__name__)


class _MissingFrames(Exception):
    """A decoder started mid-stream did not output a frame the index expected there."""


class _Concealed(Exception):
    """A decoder started mid-stream concealed decode errors: what it shows depends on what it decoded before."""


class _Rejected(Exception):
    """A decoder rejected a packet the index took for a frame: the file may end earlier than its packets."""


@dataclass(frozen=True, eq=False)
class Frames:
    """Sampled frames: ``frames[k]`` (H x W x 3 RGB uint8) is frame ``indices[k]``, shown at ``timestamps[k]`` s."""

    indices: list[int]
    timestamps: list[float]
    frames: np.ndarray
    total_frames: int  # frames in the whole video (T)

    def __len__(self) -> int:
        return len(self.indices)


def available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def output_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """Frame size after limiting the longer side to ``max_side`` (aspect ratio kept, never upscaled)."""
    if max_side is None or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


_local = threading.local()


def to_rgb(frame: av.VideoFrame, width: int, height: int) -> np.ndarray:
    """Convert one decoded frame; without resizing, the same pixels as ``frame.to_ndarray(format="rgb24")``.

    One reformatter per thread keeps FFmpeg's scaler context: ``to_ndarray`` builds a new one for
    every frame, and that setup costs several times the conversion itself.
    """
    reformatter = getattr(_local, "reformatter", None)
    if reformatter is None:
        reformatter = _local.reformatter = VideoReformatter()
    if (frame.width, frame.height) == (width, height):
        return reformatter.reformat(frame, format="rgb24").to_ndarray()
    return reformatter.reformat(
        frame, width=width, height=height, format="rgb24", interpolation=RESIZE_INTERPOLATION
    ).to_ndarray()


class ClipReader:
    """One video, indexed once; exact frames by index. Use as a context manager (closes the file).

    Not thread-safe: it owns one demuxer. ``threads`` bounds the decoding threads (default: the
    CPUs this process may use). ``stream`` picks a video stream by its number in the container
    (default: the first that is not cover art). ``strict`` refuses damaged files (see
    :func:`sample_frames`).
    """

    def __init__(
        self,
        source: SourceLike | VideoSource,
        *,
        threads: int | None = None,
        stream: int | None = None,
        strict: bool = False,
    ) -> None:
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self.source = VideoSource.of(source)
        self.threads = threads or available_cpus()
        self.strict = strict
        self._auto_threads = threads is None
        self._spent: list[av.container.InputContainer] = []  # replaced by a rewind, closed with the reader
        self._container: av.container.InputContainer | None = self.source.open_container()
        self._reader: Iterator[av.Packet] | None = None
        self._next: int | None = None  # decode position of the next packet self._reader yields
        self._pending: tuple[int, av.Packet] | None = None  # packet read while verifying a seek
        self._rotation: int | None = None  # display rotation, read when asked for
        try:
            self._stream = video_stream(self._container, self.source.name, stream)
            self.codec = self._stream.codec_context.name
            self._decoder = self._stream.codec_context  # the streaming decoder, kept across rewinds
            index = FrameIndex.build(self._container, self._stream, self.source.name, strict=strict)
            self._positions = index.positions()
            if index.unproven is None and not index.starts:
                index = replace(index, unproven="no packet is a point a decoder can start at")
            self._packets_index = index
            self._index: FrameIndex | DecodedIndex | None = index
            if index.unproven is None and index.leading():
                self._index = self._packets_index = index = self._probe_start(index)
            if index.unproven is not None:  # counted when first needed, by a decode that may also sample
                log.debug("decoding %s to count its frames: %s", self.name, index.unproven)
                self._index = None
            elif index.from_start:
                log.debug("decoding %s only from its first packet: %s", self.name, index.from_start)
        except BaseException:
            self.close()
            raise
        self._frame_of_pts: dict[int | None, int] = {}
        if self._index is not None:
            self._frame_of_pts = {index.pts[p]: f for f, p in enumerate(index.packet_of)}

    # -- lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        if self._container is not None:
            container, self._container = self._container, None
            self._reader = None
            for spent in [*self._spent, container]:
                spent.close()
            self._spent = []

    def __enter__(self) -> ClipReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what there is ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.source.name

    @property
    def index(self) -> FrameIndex | DecodedIndex:
        """The frames: from the packets, or (files whose packets prove nothing) counted by decoding."""
        if self._index is None:
            self._index = self._count_frames(None)
        return self._index

    @property
    def num_frames(self) -> int:
        return self.index.num_frames

    @property
    def width(self) -> int:
        """Width of the first frame (all frames are scaled to it)."""
        return self.index.width if isinstance(self.index, DecodedIndex) else self._decoder.width

    @property
    def height(self) -> int:
        return self.index.height if isinstance(self.index, DecodedIndex) else self._decoder.height

    def sample_indices(self, num_frames: int | None = None, fps: float | None = None) -> list[int]:
        """Uniform indices (``num_frames``) or one frame per ``1/fps`` seconds (``fps``); exactly one."""
        try:
            if num_frames is not None and fps is None:
                return uniform_indices(self.num_frames, num_frames)
            if fps is not None and num_frames is None:
                return fps_indices(self.index.times(), fps)
        except ValueError as err:
            raise VideoError(f"cannot sample {self.name}: {err}") from err
        raise ValueError(f"give exactly one of num_frames or fps to sample {self.name}")

    # -- decoding --------------------------------------------------------------------------------
    def get_frames_at(
        self, indices: Sequence[int], *, max_side: int | None = None, rotate: bool = False
    ) -> Frames:
        """Frames at ``indices`` (any order, repeats allowed; each distinct frame is decoded once).

        Frames are the stored pixels, scaled to the first frame's size where the stream changes
        size; ``rotate`` turns them as the container's display matrix says (phones store
        portrait video as landscape pixels plus a rotation). A packet that no decoder takes ends
        the video there, as it ends a full decode: indices past the frames before it are errors.
        """
        try:
            return self._get_frames_at(indices, max_side, rotate)
        except _Rejected as rejected:
            self._count_after(rejected)
            return self._get_frames_at(indices, max_side, rotate)

    def _count_after(self, rejected: _Rejected) -> None:
        """Drop the packet index after a decoder rejected a packet: count the frames by a full
        decode, which ends where that decode ends (``strict``: refuses the file if it does)."""
        log.debug("%s; counting the frames of %s by decoding it", rejected, self.name)
        self._packets_index = replace(self._packets_index, damage=self._packets_index.damage or str(rejected))
        self._index = None
        self._frame_of_pts = {}

    def _get_frames_at(self, indices: Sequence[int], max_side: int | None, rotate: bool) -> Frames:
        if self._container is None:
            raise VideoError(f"reader of {self.name} is closed")
        _check_max_side(max_side)
        wanted = [self._check_index(i) for i in indices]
        width, height = output_size(self.width, self.height, max_side)
        out = np.empty((len(wanted), height, width, 3), dtype=np.uint8)
        slots: dict[int, list[int]] = {}
        for slot, frame in enumerate(wanted):
            slots.setdefault(frame, []).append(slot)
        done: set[int] = set()

        def store(frame_no: int, frame: av.VideoFrame) -> None:
            rgb = to_rgb(frame, width, height)  # frames of another size are scaled to the first's
            for slot in slots[frame_no]:
                out[slot] = rgb
            done.add(frame_no)

        index = self.index
        if not slots:
            pass
        elif isinstance(index, DecodedIndex):
            self._decode_sequential(set(slots), store)
        else:
            segments = plan_segments(index, slots)
            try:
                if self._use_parallel(segments):
                    self._decode_parallel(segments, store)
                else:
                    self._decode_streaming(plan_segments(index, slots, join_adjacent=True), store)
            except _Concealed as concealed:
                # Concealment fills damaged blocks from the frames decoded before (even across a
                # keyframe): only a decode from the first packet shows what a full decode shows.
                log.debug("%s; decoding %s from its first packet, on one thread", concealed, self.name)
                index = self._index = self._packets_index = replace(
                    index,
                    from_start=index.from_start or str(concealed),
                    one_thread=index.one_thread or str(concealed),
                )
                last = max(index.packet_of[f] for f in slots)
                self._decode_segment(
                    self._new_decoder(), Segment(0, last, tuple(sorted(slots))), self._packets(0, last), store
                )
            except _MissingFrames as missing:
                # A decoder started mid-stream gave less than the index promised: decode the rest
                # the way that is exact by definition, from the first packet.
                log.debug("%s; decoding %s from its first packet instead", missing, self.name)
                rest = sorted(set(slots) - done)
                self._decode_streaming(
                    [Segment(0, max(index.packet_of[f] for f in rest), tuple(rest))], store
                )
        return self._frames(wanted, out, rotate)

    def sample(
        self,
        num_frames: int | None = None,
        fps: float | None = None,
        *,
        max_side: int | None = None,
        rotate: bool = False,
    ) -> Frames:
        """:meth:`sample_indices` and :meth:`get_frames_at` in one; one decode where frames must be counted.

        Where the frames are counted by decoding, that decode also converts the frames the
        packets suggest will be wanted; if the count proves the guess wrong, a second decode
        fetches them. The guess costs time, never exactness. A packet that no decoder takes (a
        damaged file whose packets looked whole) has the frames counted that way, and the sample
        taken over the frames a full decode outputs before it.
        """
        if self._index is not None:
            try:
                return self._get_frames_at(self.sample_indices(num_frames, fps), max_side, rotate)
            except _Rejected as rejected:
                self._count_after(rejected)
        _check_max_side(max_side)
        guess: set[int] = set()
        size: list[tuple[int, int]] = []
        converted: dict[int, Future] = {}
        with ThreadPoolExecutor(1) as converter:

            def keep(i: int, frame: av.VideoFrame) -> None:
                if not size:  # the first frame out: what the decode dropped before it is known
                    size.append(output_size(frame.width, frame.height, max_side))
                    guess.update(self._guess(num_frames, fps, frame.pts))
                if i in guess:
                    converted[i] = converter.submit(to_rgb, frame, *size[0])

            self._count_frames(keep)
        wanted = self.sample_indices(num_frames, fps)
        if not set(wanted) <= converted.keys():
            log.debug("%s: its packets suggested other frames than its decode has; decoding again", self.name)
            return self.get_frames_at(wanted, max_side=max_side, rotate=rotate)
        width, height = size[0]
        out = np.empty((len(wanted), height, width, 3), dtype=np.uint8)
        for slot, i in enumerate(wanted):
            out[slot] = converted[i].result()
        return self._frames(wanted, out, rotate)

    def _guess(self, num_frames: int | None, fps: float | None, first: int | None) -> set[int]:
        """The frames a sample would take if each packet shown from the first frame out (pts
        ``first``) on were a frame, in pts order if they are unique.

        A decoder drops the packets before it can output anything (a cut that starts mid-GOP with
        no IDR to start at, such as an open-GOP stream copy: nothing before its first recovery
        point), and those are the packets shown before its first frame; after it, a whole file
        gives a frame per packet. A full decode stops at a packet a decoder surely rejects.
        """
        index = self._packets_index
        end = index.num_packets if index.rejected_at is None else index.rejected_at
        pts = [p for p, shown in zip(index.pts[:end], index.shown[:end], strict=True) if shown]
        if first is not None and None not in pts:
            pts = [p for p in pts if p >= first]
        try:
            if num_frames is not None:
                return set(uniform_indices(len(pts), num_frames))
            if fps is not None:
                rate = self._stream.average_rate or self._stream.guessed_rate
                return set(fps_indices(list(DecodedIndex.frame_times_of(pts, index.time_base, rate)), fps))
        except (TypeError, ValueError):  # bad arguments: sample_indices says so after the count
            pass
        return set()

    def _frames(self, wanted: list[int], out: np.ndarray, rotate: bool) -> Frames:
        if rotate and self._quarter_turns():
            out = np.ascontiguousarray(np.rot90(out, self._quarter_turns(), axes=(1, 2)))
        return Frames(
            indices=wanted, timestamps=self.index.timestamps(wanted), frames=out, total_frames=self.num_frames
        )

    def strategy(self, indices: Iterable[int]) -> str:
        """How :meth:`get_frames_at` would decode ``indices``: ``"parallel"``, ``"streaming"`` or
        ``"sequential"`` (a file whose frames are counted by decoding: one decode from the start)."""
        wanted = {self._check_index(i) for i in indices}
        index = self.index
        if isinstance(index, DecodedIndex):
            return "sequential"
        return "parallel" if self._use_parallel(plan_segments(index, wanted)) else "streaming"

    def _quarter_turns(self) -> int:
        """Counter-clockwise quarter turns of the display matrix (``VideoFrame.rotation``).

        A property of the stream, but FFmpeg hands it out only on frames of the stream's own
        decoder (created decoders lack the container's side data): one frame of a fresh
        demuxer tells, once per reader.
        """
        if self._rotation is None:
            with self.source.open() as container:
                frame = next(container.decode(container.streams[self._stream.index]), None)
                self._rotation = frame.rotation if isinstance(frame, av.VideoFrame) else 0
        if self._rotation % 90:
            raise VideoError(
                f"{self.name} is displayed rotated by {self._rotation} degrees; only quarter turns are supported"
            )
        return self._rotation // 90

    def _check_index(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise VideoError(f"frame index {i!r} for {self.name} is not an integer")
        if not 0 <= i < self.num_frames:
            damage = f" (it is damaged: {self.index.damage})" if self.index.damage else ""
            raise VideoError(
                f"frame index {i} is out of range for {self.name}, which has {self.num_frames} frames{damage}"
            )
        return int(i)

    def _use_parallel(self, segments: list[Segment]) -> bool:
        if self.threads < 2 or len(segments) < 2 or self.codec not in PARALLEL_CODECS:
            return False
        sizes = [sum(self._packets_index.size[s.start : s.end + 1]) for s in segments]
        if max(sizes) > SEGMENT_BYTES_LIMIT:
            return False
        # Compare the parallel finish time (longest-first scheduling, in packets decoded by one
        # thread) with one decoder whose frame threads reach FRAME_THREAD_EFFICIENCY per thread
        # (or that has one thread, where the file allows no other).
        lengths = sorted((s.end - s.start + 1 for s in segments), reverse=True)
        loads = [0] * min(self.threads, len(lengths))
        for length in lengths:
            loads[loads.index(min(loads))] += length
        streaming_threads = 1 if self._packets_index.one_thread else FRAME_THREAD_EFFICIENCY * self.threads
        return max(loads) <= sum(lengths) / streaming_threads

    @property
    def _inline(self) -> bool:
        """Decode and convert on the calling thread: one thread allowed, or too little to share out."""
        return self.threads == 1 or self._packets_index.num_packets <= SMALL_FILE_PACKETS

    def _streaming_decoder(self, start: int) -> VideoCodecContext:
        """The stream's own decoder, with FFmpeg's frame threads (set before its first packet), for a
        decode from packet ``start``; a new one where the stream's has decoded and ``start`` is no
        random-access point.

        A flushed decoder is not a new one until a random-access point resets it: FFmpeg 7's HEVC
        decoder conceals the pictures of a cut before its first one (references missing) with
        other pixels when flushed than when new, and so, across its frame threads, at random.
        """
        decoder = self._decoder
        if decoder.is_open and start not in self._packets_index.starts:
            decoder = self._new_decoder()
        if not decoder.is_open:
            self._use_frame_threads(decoder)
        return decoder

    def _use_frame_threads(self, decoder: VideoCodecContext) -> None:
        """Threads and options of a decoder that starts at the first packet or streams through."""
        decoder.options = {**decoder.options, **self._packets_index.decoder_options()}
        if self._packets_index.one_thread or self._inline:
            decoder.thread_type, decoder.thread_count = "NONE", 1
            return
        decoder.thread_type = "AUTO"
        # 0 lets FFmpeg pick (CPUs + 1 frame threads: one more than cores hides frame dependencies).
        decoder.thread_count = 0 if self._auto_threads else self.threads

    def _decode_streaming(self, segments: list[Segment], store: Callable[[int, av.VideoFrame], None]) -> None:
        """One decoder with FFmpeg's frame threads; wanted frames are converted on another thread.

        Converting inside the decode loop would stall the frame threads; a converter thread
        instead uses the CPU time their frame-to-frame dependencies leave idle.
        """
        decoder = self._streaming_decoder(segments[0].start)  # in file order: only the first may be at 0
        if self._inline:
            for segment in segments:
                self._decode_segment(decoder, segment, self._packets(segment.start, segment.end), store)
            return
        converted: list[Future] = []
        with ThreadPoolExecutor(1) as converter:  # leaving waits for pending conversions
            for segment in segments:
                self._decode_segment(
                    decoder,
                    segment,
                    self._packets(segment.start, segment.end),
                    lambda frame_no, frame: converted.append(converter.submit(store, frame_no, frame)),
                )
        for future in converted:
            future.result()

    def _decode_parallel(self, segments: list[Segment], store: Callable[[int, av.VideoFrame], None]) -> None:
        """Stretches decode concurrently, each on a single-threaded decoder; this thread demuxes."""
        idle: queue.SimpleQueue[VideoCodecContext] = queue.SimpleQueue()
        in_flight = threading.BoundedSemaphore(self.threads + 1)

        def work(segment: Segment, packets: list[tuple[int, av.Packet]]) -> None:
            # a used decoder is no new one before a random-access point (see _streaming_decoder)
            reusable = segment.start in self._packets_index.starts
            try:
                decoder = idle.get_nowait() if reusable else self._new_decoder()
            except queue.Empty:
                decoder = self._new_decoder()
            try:
                self._decode_segment(decoder, segment, packets, store)
            finally:
                idle.put(decoder)

        futures: list[Future] = []
        with ThreadPoolExecutor(self.threads) as pool:
            try:
                # Longest stretches first, so that the last ones to finish are short.
                for segment in sorted(segments, key=lambda s: s.start - s.end):
                    in_flight.acquire()
                    failed = next((f for f in futures if f.done() and f.exception()), None)
                    if failed is not None:
                        in_flight.release()
                        failed.result()
                    try:
                        packets = list(self._packets(segment.start, segment.end))
                        future = pool.submit(work, segment, packets)
                    except BaseException:
                        in_flight.release()
                        raise
                    future.add_done_callback(lambda _: in_flight.release())
                    futures.append(future)
                for future in futures:
                    future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _new_decoder(self) -> VideoCodecContext:
        decoder = av.CodecContext.create(self.codec, "r")
        if not isinstance(decoder, VideoCodecContext):  # the codec of a video stream: never
            raise VideoError(f"{self.name}: FFmpeg's {self.codec} decoder is not a video decoder")
        decoder.extradata = self._stream.codec_context.extradata
        decoder.codec_tag = self._stream.codec_context.codec_tag
        decoder.options = self._packets_index.decoder_options()
        decoder.thread_type = "NONE"
        decoder.thread_count = 1
        return decoder

    def _decode_segment(
        self,
        decoder: VideoCodecContext,
        segment: Segment,
        packets: Iterable[tuple[int, av.Packet]],
        deliver: Callable[[int, av.VideoFrame], None],
    ) -> None:
        """Feed one stretch to a fresh decoder state, drain it, and deliver each wanted frame once."""
        wanted = set(segment.frames)
        index = self._packets_index  # segments are planned on the packets
        # Skipping frames is exact only where decoding depends on nothing but references.
        can_skip = self.codec in NONREF_SKIP_CODECS and not index.from_start
        skip: Literal["DEFAULT", "NONREF"] = "DEFAULT"
        position = segment.start

        def pick(frames: list[av.VideoFrame]) -> None:
            for frame in frames:
                if frame.is_corrupt and segment.start:
                    raise _Concealed(f"a decoder started at packet {segment.start} concealed decode errors")
                frame_no = self._frame_of_pts.get(frame.pts)
                if frame_no is not None and frame_no in wanted:
                    wanted.discard(frame_no)
                    deliver(frame_no, frame)

        try:
            for position, packet in packets:
                if can_skip:
                    needed: Literal["DEFAULT", "NONREF"] = (
                        "DEFAULT" if index.frame_at[position] in wanted else "NONREF"
                    )
                    if needed != skip:
                        decoder.skip_frame = skip = needed
                pick(decoder.decode(packet))
            if skip != "DEFAULT":
                decoder.skip_frame = "DEFAULT"
            pick(decoder.decode(None))
        except av.FFmpegError as err:
            raise _Rejected(
                f"a decoder rejects packet {position} or one before: {describe_error(err)}"
            ) from err
        finally:
            decoder.flush_buffers()
        if wanted:
            if segment.start == 0:  # as a full decode: nothing to fall back to
                raise VideoError(
                    f"frame {min(wanted)} of {self.name} did not decode ({len(wanted)} wanted frames missing): "
                    f"the file is probably truncated or corrupt"
                )
            raise _MissingFrames(f"frame {min(wanted)} did not decode from packet {segment.start}")

    # -- demuxing --------------------------------------------------------------------------------
    def _packets(self, start: int, end: int) -> Iterator[tuple[int, av.Packet]]:
        """(decode position, packet) for positions ``start..end``, seeking when that is shorter."""
        if self._next is None or not 0 <= start - self._next <= READ_THROUGH_PACKETS:
            self._seek(start)
        while self._next is not None and self._next <= end:  # a failed read raises (and unsets it)
            position, packet = self._read()
            if position >= start:
                yield position, packet

    def _seek(self, start: int) -> None:
        """Position the demuxer at or before packet ``start``: where a seek lands is checked, not trusted.

        Seeks to a packet before the first keyframe (a cut that starts mid-GOP) can land after
        it; reopening the file is the last resort, and always lands on the first packet.
        """
        index = self._packets_index  # positions are the packets'
        known = [t for t in (index.pts[start], index.dts[start]) if t is not None]
        container = self._open_container()
        attempts = [
            *((t, False) for t in known),
            *((t, True) for t in known[:1]),
            (None, False),
            (None, True),
        ]
        for timestamp, any_frame in attempts:
            try:
                if timestamp is not None:
                    container.seek(timestamp, stream=self._stream, backward=True, any_frame=any_frame)
                elif not any_frame:
                    container.seek(0)
                else:
                    container = self._rewind()
                self._reader = container.demux(self._stream)
                self._next = None
                position, packet = self._read()
            except (av.FFmpegError, VideoError):
                continue
            if position <= start:
                self._pending = (position, packet)
                self._next = position
                return
        self._reader = self._next = None
        raise VideoError(f"cannot seek back to packet {start} of {self.name}")

    def _rewind(self) -> av.container.InputContainer:
        """Demux from a freshly opened file; the spent one stays open (its stream owns our decoder)."""
        spent = self._open_container()
        container = self.source.open_container()
        self._spent.append(spent)
        self._container = container
        self._stream = video_stream(container, self.name, self._stream.index)
        demux_only(self._stream)
        return container

    def _open_container(self) -> av.container.InputContainer:
        if self._container is None:
            raise VideoError(f"reader of {self.name} is closed")
        return self._container

    # -- frames that only a decode can count ---------------------------------------------------------
    def _probe_start(self, index: FrameIndex) -> FrameIndex:
        """Decode the start of the stream to learn which of its first packets a full decode outputs.

        A cut that starts mid-GOP begins with packets whose references are gone; decoders drop
        some of them (H.264 before the first IDR, HEVC's leading pictures after a starting
        CRA), and only decoding shows which. Cheap: up to the first random-access point.
        """
        leading = index.leading()
        expected = {index.pts[p] for p in leading}
        decoder = self._streaming_decoder(leading.start)
        output: list[int | None] = []
        try:
            for _, packet in self._packets(leading.start, leading.stop - 1):
                output += [frame.pts for frame in decoder.decode(packet)]
            output += [frame.pts for frame in decoder.decode(None)]
        except av.FFmpegError as err:
            return replace(index, unproven=f"its first packets do not decode ({describe_error(err)})")
        finally:
            decoder.flush_buffers()
        if not set(output) <= expected or len(set(output)) != len(output):
            return replace(index, unproven="its first frames do not carry its packets' timestamps")
        dropped = [p for p in leading if index.pts[p] not in set(output)]
        if dropped:
            log.debug("%s: the decoder outputs nothing for packets %s at its start", self.name, dropped)
        return index.without(dropped)

    def _count_frames(self, keep: Callable[[int, av.VideoFrame], None] | None) -> DecodedIndex:
        """Count the frames by decoding all of them (the definition, for files nothing else proves);
        ``keep`` sees each frame as it comes out."""
        pts: list[int | None] = []
        size: list[tuple[int, int]] = []

        def note(i: int, frame: av.VideoFrame) -> None:
            pts.append(frame.pts)
            if not size:
                size.append((frame.width, frame.height))
            if keep is not None:
                keep(i, frame)

        damage = self._sequential(None, note)
        if not pts:
            raise VideoError(f"video {self.name} has no frames" + (f" ({damage})" if damage else ""))
        rate = self._stream.average_rate or self._stream.guessed_rate
        if self._stream.time_base is None:
            raise VideoError(f"video {self.name}: its video stream has no time base")
        index = DecodedIndex(
            name=self.name,
            frame_times=DecodedIndex.frame_times_of(pts, Fraction(self._stream.time_base), rate),
            width=size[0][0],
            height=size[0][1],
            damage=damage,
        )
        self._index = index
        return index

    def _decode_sequential(self, wanted: set[int], store: Callable[[int, av.VideoFrame], None]) -> None:
        """Decode from the first packet and keep the wanted frames, counted as they come out."""
        if self._inline:
            self._sequential(wanted, lambda i, frame: store(i, frame) if i in wanted else None)
            return
        converted: list[Future] = []
        with ThreadPoolExecutor(1) as converter:
            self._sequential(
                wanted,
                lambda i, frame: converted.append(converter.submit(store, i, frame)) if i in wanted else None,
            )
        for future in converted:
            future.result()

    def _sequential(
        self, wanted: set[int] | None, deliver: Callable[[int, av.VideoFrame], None]
    ) -> str | None:
        """A full sequential decode (of a fresh demuxer) up to the last wanted frame; the damage, if any.

        It ends where a full decode ends: at a read error or a packet the decoder rejects, after
        draining what the decoder holds. ``strict`` readers refuse that, and any wanted frame
        past it is an error naming the frame.
        """
        last = max(wanted) if wanted else None
        count = 0
        damage: str | None = None

        def take(frames: list[av.VideoFrame]) -> None:
            nonlocal count
            for frame in frames:
                deliver(count, frame)
                count += 1

        container = self.source.open_container()
        try:
            stream = video_stream(container, self.name, self._stream.index)
            demux_only(stream)
            decoder = stream.codec_context
            self._use_frame_threads(decoder)
            if self._packets_index.damage is not None and decoder.thread_type != "NONE":
                # frame threads report a bad packet some packets late: the end would depend on them
                decoder.thread_type = "SLICE"
            packets = container.demux(stream)
            while last is None or count <= last:
                try:
                    packet = next(packets, None)
                    if packet is None:
                        break
                    if packet.size:
                        take(decoder.decode(packet))
                except av.FFmpegError as err:
                    damage = f"decoding stops after frame {count - 1}: {describe_error(err)}"
                    break
            if last is None or count <= last:
                try:
                    take(decoder.decode(None))
                except av.FFmpegError:
                    pass
        finally:
            container.close()
        if damage and self.strict:
            raise VideoError(f"video {self.name} is truncated or corrupt: {damage}")
        if last is not None and count <= last:
            raise VideoError(
                f"frame {last} of {self.name} did not decode (a full decode ends after frame {count - 1}"
                + (f": {damage})" if damage else ")")
            )
        return damage

    def _read(self) -> tuple[int, av.Packet]:
        """The next packet and its decode position; on any failure the next read seeks afresh."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._next = pending[0] + 1
            return pending
        if self._reader is None:
            raise VideoError(f"{self.name}: no packet to read before a seek")
        try:
            for packet in self._reader:
                if packet.size == 0:
                    continue
                position = self._positions.get(packet.pts) if packet.pts is not None else None
                if position is None or (self._next is not None and position != self._next):
                    raise VideoError(
                        f"video {self.name} does not demux the same way twice (packet pts={packet.pts}); "
                        f"cannot guarantee exact frames"
                    )
                self._next = position + 1
                return position, packet
            raise VideoError(f"video {self.name} ended before packet {self._next} while decoding")
        except av.FFmpegError as err:
            self._reader = self._next = None
            raise VideoError(f"cannot read video {self.name}: {describe_error(err)}") from err
        except VideoError:
            self._reader = self._next = None
            raise


def sample_frames(
    source: SourceLike | VideoSource,
    num_frames: int | None = None,
    fps: float | None = None,
    max_side: int | None = None,
    *,
    threads: int | None = None,
    stream: int | None = None,
    rotate: bool = False,
    strict: bool = False,
) -> Frames:
    """Sample a video: ``num_frames`` evenly spaced frames (both ends included), or ``fps`` per second.

    ``source`` is a path, the file's bytes, or a ``datasets`` video value ``{"path", "bytes"}``.
    Frames equal those of a full sequential decode of the main video stream (the first that is
    not cover art; ``stream`` picks another by its number in the container), pixel for pixel.
    They are the stored pixels: ``rotate`` applies the container's display rotation, and pixels
    are taken as square (an anamorphic DVD frame, 720x576 with a 64:45 sample aspect ratio,
    keeps its stored 5:4 shape; ``max_side`` limits the longer stored side). A stream that
    changes size has its frames scaled to the first frame's size.

    A damaged file (a read error, a truncated last packet, a packet the decoder rejects) is the
    frames a full decode outputs before the damage, sampled as any other, unless ``strict``,
    which raises instead. Bad input raises :class:`VideoError` (a ``ValueError``) or
    ``FileNotFoundError`` naming the source (and the frame, where one is at fault).
    """
    with ClipReader(source, threads=threads, stream=stream, strict=strict) as reader:
        return reader.sample(num_frames, fps, max_side=max_side, rotate=rotate)


def _check_max_side(max_side: int | None) -> None:
    if max_side is not None and (isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 1):
        raise ValueError(f"max_side must be a positive integer, got {max_side!r}")


def frames_to_data_urls(
    frames: Frames | np.ndarray | Iterable[np.ndarray], quality: int = JPEG_QUALITY
) -> list[str]:
    """JPEG ``data:`` URLs of RGB frames (:func:`~builders.video.jpeg.jpeg_bytes`), ready for an
    ``image_url`` part of a chat message."""
    if not 1 <= quality <= 95:
        raise ValueError(f"JPEG quality must be in 1..95, got {quality}")
    images = frames.frames if isinstance(frames, Frames) else frames
    urls = []
    for k, rgb in enumerate(images):
        try:
            data = jpeg_bytes(rgb, quality)
        except ValueError as err:
            raise ValueError(f"frame {k}: {err}") from None
        urls.append("data:image/jpeg;base64," + base64.b64encode(data).decode("ascii"))
    return urls
