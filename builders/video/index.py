"""Which frames a video really has, which ones to sample, and the least decoding that yields them.

Frame ``i`` is the ``i``-th frame a full sequential decode of the video stream outputs. Two
ways to know them:

- :class:`FrameIndex` demuxes the stream once without decoding (cheap) and records every
  packet in decode order; frame ``i`` is then the ``i``-th packet in presentation (pts) order.
  That holds only where packets map one to one onto output frames by their timestamps, so the
  index says when it cannot be trusted (:attr:`FrameIndex.unproven`): no timestamps (AVI stores
  none, only guesses: trusted only where the bitstream shows that decode order is display order,
  intra-only codecs and MPEG-4 Part 2 without B-VOPs), missing or repeated ones (splices), or
  flagged-corrupt packets. Packets
  the container marks as discarded (edit-list pre-roll) and those a decoder drops at the start
  of a cut (:meth:`FrameIndex.without`, found by decoding the start) are fed to the decoder but
  are not frames. A file whose first packet announces an x264 build (libavcodec decodes some
  blocks of some old builds differently) has every decoder told that build, as a decoder that
  read the announcement knows it (:attr:`FrameIndex.x264_build`); only where that cannot be done
  and the build changes pixels does every decode start at the first packet
  (:attr:`FrameIndex.from_start`).
- :class:`DecodedIndex` is what a full decode outputs, counted by decoding: the fallback for the
  untrusted files above, and the only one that needs no proof.

Header frame counts are never trusted, not even as a sign of truncation: AVI headers count
"dropped frame" chunks that hold no frame. Damage (a read error, an incomplete packet, a packet
whose NAL units run past its end, which libavcodec rejects) ends the video where a full decode
would stop; :attr:`FrameIndex.damage` says where, and ``strict`` readers refuse such files
instead. Damage that only decoding shows is found by the reader (see :mod:`builders.video.sampler`).

:func:`plan_segments` turns wanted frames into decode stretches, each starting at a packet
where a fresh decoder gives exactly what a full decode gives (:attr:`FrameIndex.starts`:
checked in the bitstream, not taken from keyframe flags).
"""

from __future__ import annotations

import bisect
import functools
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import av
import av.container
import numpy as np

from builders.video.bitstream import (
    CHECKED_CODECS,
    Mpeg4Packets,
    h264_sps,
    is_random_access,
    nal_overrun,
    x264_build,
    x264_build_matters,
)
from builders.video.source import VideoError, demux_only, describe_error

#: fps sampling may repeat frames (fps above the video's rate), but not more than this on average.
MAX_REPEATS = 16
#: Containers whose packet timestamps are not presentation times (AVI numbers packets in
#: decode order; decoders of codecs that reorder then output them in another order).
NO_PTS_FORMATS = frozenset({"avi"})
#: Codecs whose decoder may learn how to decode the whole stream from an SEI (x264's version).
X264_CODECS = frozenset({"h264"})
#: The libavcodec H.264 decoder option that makes a decoder assume an x264 build, as if it had
#: read the build's announcement (FFmpeg 4.4 and later).
X264_BUILD_OPTION = "x264_build"


@dataclass(frozen=True)
class FrameIndex:
    """The video packets of one file in decode order, and the presentation order of their frames."""

    name: str
    time_base: Fraction
    pts: tuple[int, ...]  # per decode position
    dts: tuple[int | None, ...]  # per decode position
    keyframe: tuple[bool, ...]  # per decode position, the container's flag
    size: tuple[int, ...]  # per decode position, compressed bytes
    frame_at: tuple[int, ...]  # per decode position: frame index, -1 for a packet that is no frame
    packet_of: tuple[int, ...]  # per frame index: decode position
    starts: tuple[int, ...] = ()  # decode positions a fresh decoder may start at (random access)
    shown: tuple[bool, ...] = ()  # per decode position: not discarded by the container
    unproven: str | None = None  # why packets cannot be taken for frames (then decode to count)
    from_start: str | None = None  # why every decode must start at the first packet
    damage: str | None = None  # where the file is damaged, if it is
    x264_build: int | None = None  # what every decoder is told (X264_BUILD_OPTION), if anything
    one_thread: str | None = None  # why decoders must run on one thread (no frame or slice threads)
    rejected_at: int | None = None  # decode position of the first packet a decoder surely rejects

    def decoder_options(self) -> dict[str, str]:
        """Options of every decoder of this stream: a decoder started anywhere decodes as a full decode."""
        return {X264_BUILD_OPTION: str(self.x264_build)} if self.x264_build is not None else {}

    @property
    def num_frames(self) -> int:
        return len(self.packet_of)

    @property
    def num_packets(self) -> int:
        return len(self.pts)

    def times(self) -> list[Fraction]:
        """Exact presentation time of every frame, in seconds from the first frame."""
        first = self.pts[self.packet_of[0]]
        return [(self.pts[p] - first) * self.time_base for p in self.packet_of]

    def timestamps(self, frames: Iterable[int] | None = None) -> list[float]:
        """Presentation times (seconds from the first frame) of ``frames``, or of every frame."""
        first = self.pts[self.packet_of[0]]
        chosen = range(self.num_frames) if frames is None else frames
        return [float((self.pts[self.packet_of[i]] - first) * self.time_base) for i in chosen]

    def positions(self) -> dict[int, int]:
        """Decode position of each packet by its pts: recognises a packet after a seek.

        Not by dts: some demuxers (Matroska) infer dts from the packets read before, so it
        differs after a seek.
        """
        return {p: i for i, p in enumerate(self.pts)}

    def leading(self) -> range:
        """Decode positions whose output a fresh decoder at the start may differ on: those before
        the first random-access point, and the leading pictures shown before it."""
        if not self.starts:
            return range(self.num_packets)
        first = self.starts[0]
        end = first
        while end + 1 < self.num_packets and self.pts[end + 1] < self.pts[first]:
            end += 1
        if first == 0 and end == 0:
            return range(0)
        return range(end + 1)

    def without(self, dropped: Iterable[int]) -> FrameIndex:
        """The same packets, with ``dropped`` (positions a sequential decode outputs nothing for) no frames."""
        gone = set(dropped)
        frame_at, packet_of = _frames(self.pts, [s and p not in gone for p, s in enumerate(self.shown)])
        return replace(self, frame_at=frame_at, packet_of=packet_of)

    @classmethod
    def build(
        cls,
        container: av.container.InputContainer,
        stream: av.VideoStream,
        name: str,
        *,
        strict: bool = False,
    ) -> FrameIndex:
        """Demux every packet of ``stream`` (other streams are skipped by the demuxer).

        ``strict``: a read error or an incomplete packet is a :class:`VideoError`; otherwise the
        video ends at a read error, and incomplete packets leave it to a decode to count frames.
        """
        demux_only(stream)
        codec = stream.codec_context.name
        extradata = stream.codec_context.extradata
        pts: list[int | None] = []
        dts: list[int | None] = []
        key: list[bool] = []
        size: list[int] = []
        shown: list[bool] = []
        starts: list[int] = []
        unproven: str | None = None
        damage: str | None = None
        rejected_at: int | None = None
        builds: list[tuple[int, int]] = []  # (decode position, x264 build) of each announcement
        sps = h264_sps(b"", extradata) if codec in X264_CODECS else []
        # Without presentation timestamps, decode order is display order for intra-only codecs
        # (MJPEG and the like: one picture per packet, nothing reordered) and for MPEG-4 Part 2
        # whose VOP headers show it (Mpeg4Packets); other codecs' frames are counted by decoding.
        no_pts = container.format.name in NO_PTS_FORMATS and not stream.codec_context.codec.intra_only
        mpeg4 = Mpeg4Packets(extradata) if no_pts and codec == "mpeg4" else None
        if no_pts and mpeg4 is None:
            unproven = f"{container.format.name} stores no presentation timestamps"
        try:
            for packet in container.demux(stream):
                if packet.size == 0:  # PyAV's end-of-stream marker (or an AVI "dropped frame")
                    continue
                position = len(pts)
                if packet.is_corrupt:
                    damage = (
                        damage or f"packet {position} of the video stream is flagged incomplete or corrupt"
                    )
                    unproven = unproven or damage
                    if strict:
                        raise VideoError(f"video {name} is truncated or corrupt: {damage}")
                if packet.pts is None:
                    unproven = unproven or f"packet {position} has no timestamp"
                if rejected_at is None and nal_overrun(codec, memoryview(packet), extradata):
                    rejected_at = position
                    damage = (
                        damage
                        or f"packet {position} of the video stream has a NAL unit longer than the packet"
                    )
                    unproven = unproven or damage
                    if strict:
                        raise VideoError(f"video {name} is truncated or corrupt: {damage}")
                if mpeg4 is not None and unproven is None:
                    why = mpeg4.packet(position, bytes(packet), packet.is_keyframe)
                    if why is not None:
                        unproven = f"{container.format.name} stores no presentation timestamps and packet {position} {why}"
                if packet.is_keyframe or (position == 0 and codec in X264_CODECS):
                    data = bytes(packet)
                    if codec in X264_CODECS:
                        build = x264_build(data)
                        if build is not None:
                            builds.append((position, build))
                        sps += h264_sps(data, extradata)
                    if packet.is_keyframe and (
                        codec not in CHECKED_CODECS or is_random_access(codec, data, extradata)
                    ):
                        starts.append(position)
                pts.append(packet.pts)
                dts.append(packet.dts)
                key.append(packet.is_keyframe)
                size.append(packet.size)
                shown.append(not packet.is_discard)
        except av.FFmpegError as err:
            damage = f"reading stopped at packet {len(pts)}: {describe_error(err)}"
            if strict or not pts:
                raise VideoError(f"cannot read video {name}: {describe_error(err)}") from err
        if not pts:
            raise VideoError(f"video {name} has no frames")
        if mpeg4 is not None:
            starts = mpeg4.starts()
        told, from_start, one_thread = _x264_plan(builds, sps)
        if unproven is None and len(set(pts)) != len(pts):
            unproven = "packets share timestamps"
        # Every packet has a timestamp unless the index is unproven; then -1 holds the place.
        stamps = [p if p is not None else -1 for p in pts]
        if unproven is None:
            frame_at, packet_of = _frames(stamps, shown)
            if not packet_of:
                raise VideoError(f"video {name} has no frames")
        else:  # placeholders: the frames come from a decode
            frame_at, packet_of = (-1,) * len(stamps), ()
        if stream.time_base is None:
            raise VideoError(f"video {name}: its video stream has no time base")
        return cls(
            name=name,
            time_base=Fraction(stream.time_base),
            pts=tuple(stamps),
            dts=tuple(dts),
            keyframe=tuple(key),
            size=tuple(size),
            starts=tuple(starts) if unproven is None else (),
            shown=tuple(shown),
            unproven=unproven,
            from_start=from_start,
            damage=damage,
            x264_build=told,
            one_thread=one_thread,
            rejected_at=rejected_at,
            frame_at=frame_at,
            packet_of=packet_of,
        )


def _x264_plan(
    builds: list[tuple[int, int]], sps: list[tuple[int, bool]]
) -> tuple[int | None, str | None, str | None]:
    """From the x264 builds a stream announces (decode position, build) and its SPSs: the build
    to tell every decoder (:data:`X264_BUILD_OPTION`), why every decode starts at the first
    packet, and why decoders run on one thread (each None where nothing needs it).

    A decoder keeps the last build it read. One build announced from the first packet on (x264
    writes it with a stream's first frame) is what every frame of a full decode is decoded with,
    so every decoder is told it, wherever it starts. Otherwise (announced later, or changing:
    spliced encodes) a decoder's start decides the build it assumes, so where the build changes
    pixels (:func:`~builders.video.bitstream.x264_build_matters`), decoders start at the first
    packet and read the announcements in order. Where it changes pixels, libavcodec applies the
    workarounds as written only on one thread: its slice threads skip some, and with frame
    threads what a frame gets depends on thread timing (both seen on a lossless 4:4:4 clip
    announcing build 142, ``tests/test_video_corpus.py``).
    """
    if not builds:
        return None, None, None
    matters = [b for _, b in builds if x264_build_matters(b, sps)]
    one_thread = (
        f"libavcodec decodes x264 build {matters[0]} differently on several threads" if matters else None
    )
    build = builds[0][1]
    if builds[0][0] == 0 and all(b == build for _, b in builds) and decoder_takes_x264_build():
        return build, None, one_thread
    if not matters:
        return None, None, None
    return (
        None,
        (
            f"it announces x264 build {matters[0]}, which libavcodec decodes with workarounds "
            f"that only a decoder that read the announcement applies"
        ),
        one_thread,
    )


@functools.cache
def decoder_takes_x264_build() -> bool:
    """Whether this libavcodec's H.264 decoder has the :data:`X264_BUILD_OPTION` option."""
    decoder = av.CodecContext.create("h264", "r")
    decoder.options = {X264_BUILD_OPTION: "1"}
    try:
        decoder.open()
    except (av.FFmpegError, ValueError):
        return False
    return X264_BUILD_OPTION not in decoder.options  # an option the decoder has is consumed


def _frames(pts: Sequence[int], is_frame: Sequence[bool]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``frame_at`` and ``packet_of``: frames are the packets that are frames, in pts order."""
    order = sorted((p, i) for i, p in enumerate(pts) if is_frame[i])
    frame_at = [-1] * len(pts)
    for rank, (_, position) in enumerate(order):
        frame_at[position] = rank
    return tuple(frame_at), tuple(position for _, position in order)


@dataclass(frozen=True)
class DecodedIndex:
    """The frames a full sequential decode outputs, counted by decoding it (for :attr:`FrameIndex.unproven` files).

    ``times`` are the frames' presentation times where their timestamps, sorted, give each
    frame its own (AVI's decoders output guessed timestamps out of order); otherwise frame
    ``i`` is taken at ``i / rate``, the stream's average rate.
    """

    name: str
    frame_times: tuple[Fraction, ...]
    width: int  # of the first frame
    height: int
    damage: str | None = None

    @property
    def num_frames(self) -> int:
        return len(self.frame_times)

    def times(self) -> list[Fraction]:
        return list(self.frame_times)

    def timestamps(self, frames: Iterable[int] | None = None) -> list[float]:
        chosen = range(self.num_frames) if frames is None else frames
        return [float(self.frame_times[i]) for i in chosen]

    @staticmethod
    def frame_times_of(
        pts: Sequence[int | None], time_base: Fraction, rate: Fraction | None
    ) -> tuple[Fraction, ...]:
        """Frame times from the output frames' timestamps, as the class docstring says."""
        known = [p for p in pts if p is not None]
        if known and len(known) == len(pts) and len(set(known)) == len(known):
            ordered = sorted(known)
            return tuple((p - ordered[0]) * time_base for p in ordered)
        step = 1 / rate if rate else Fraction(1, 25)
        return tuple(i * step for i in range(len(pts)))


def uniform_indices(total: int, num_frames: int) -> list[int]:
    """``round(linspace(0, total - 1, num_frames))``: evenly spaced, both ends included.

    Rounding is numpy's (half to even), as evaluation harnesses that write this formula get.
    """
    _check_count(num_frames)
    if num_frames > total:
        raise ValueError(f"asked for {num_frames} frames but the video has only {total}")
    return [int(i) for i in np.round(np.linspace(0, total - 1, num_frames))]


def fps_indices(times: Sequence[Fraction], fps: float) -> list[int]:
    """One frame every ``1/fps`` seconds from the first frame: the frame on screen at ``k/fps``.

    ``times`` are the frames' presentation times (ascending, first 0). Sampling stops at the last
    frame's time; frames repeat when ``fps`` exceeds the video's rate (up to
    :data:`MAX_REPEATS` samples per frame on average, beyond which it is surely a mistake).
    """
    if isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not math.isfinite(fps) or fps <= 0:
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    rate = Fraction(fps).limit_denominator(1_000_000)
    count = math.floor(times[-1] * rate) + 1
    if count > MAX_REPEATS * len(times):
        raise ValueError(f"fps={fps} would take {count} samples from {len(times)} frames")
    return [bisect.bisect_right(times, k / rate) - 1 for k in range(count)]


def _check_count(num_frames: int) -> None:
    if isinstance(num_frames, bool) or not isinstance(num_frames, (int, np.integer)) or num_frames < 1:
        raise ValueError(f"num_frames must be a positive integer, got {num_frames!r}")


@dataclass(frozen=True)
class Segment:
    """Decode packets ``start..end`` (decode positions, inclusive) with a fresh decoder.

    ``start`` is a random-access point (or the stream's first packet); ``frames`` are the wanted frames that
    this stretch yields exactly as a full sequential decode would.
    """

    start: int
    end: int
    frames: tuple[int, ...]


def plan_segments(index: FrameIndex, frames: Iterable[int], *, join_adjacent: bool = False) -> list[Segment]:
    """Group wanted frames into the shortest decode stretches from random-access points, in file order.

    A frame is decoded from the latest random-access point (:attr:`FrameIndex.starts`) that
    precedes it both in decode order and in presentation order: the second condition keeps the
    "leading" frames of an open GOP (decoded after an I-frame but shown before it, referencing
    the previous GOP) with the previous GOP. Frames before the first one decode from the
    stream's first packet, as in a full decode.
    Overlapping stretches are merged; so are adjacent ones with ``join_adjacent`` (one decoder
    running through them loses nothing, while a restart drains its pipeline). Gaps are skipped.
    """
    starts = [] if index.from_start else list(index.starts)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)  # decoding from the stream's first packet is the definition of exact
    groups: dict[int, list[int]] = {}
    for frame in sorted(set(frames)):
        position = index.packet_of[frame]
        j = bisect.bisect_right(starts, position) - 1
        while j > 0 and index.pts[starts[j]] > index.pts[position]:
            j -= 1
        groups.setdefault(starts[j], []).append(frame)
    segments: list[Segment] = []
    for start in sorted(groups):
        wanted = groups[start]
        end = max(index.packet_of[f] for f in wanted)
        if segments and start <= segments[-1].end + int(join_adjacent):
            last = segments.pop()
            segments.append(
                Segment(last.start, max(last.end, end), tuple(sorted(last.frames + tuple(wanted))))
            )
        else:
            segments.append(Segment(start, end, tuple(wanted)))
    return segments
