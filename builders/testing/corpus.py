"""Clips of the shapes users really have, written with PyAV: AVI, cuts, splices, intra refresh, cover art.

:func:`builders.testing.clips.write_clip` writes tidy MP4s; real files are messier. Each writer
here makes one such shape from numbered frames (see :mod:`builders.testing.clips`), small enough
to write in a test. Shapes only the ffmpeg command line makes (stream-copy cuts that start
mid-GOP) are committed under ``tests/fixtures/video/`` with the script that made them.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from builders.testing.clips import _FramePainter

#: PyAV 15 (the lowest the project supports) cannot write a display rotation; a ``rotation`` is then
#: left out of the file, and the tests of it are skipped there (the reader's side is the same API).
CAN_WRITE_ROTATION = hasattr(av.video.stream.VideoStream, "set_display_rotation")


def write_encoded(
    path: str | os.PathLike[str] | io.BytesIO,
    *,
    format: str,
    codec: str = "libx264",
    num_frames: int = 100,
    fps: int = 25,
    width: int = 160,
    height: int = 120,
    pix_fmt: str = "yuv420p",
    options: dict[str, str] | None = None,
    gop: int = 25,
    bframes: int = 0,
    skip: Sequence[int] = (),
    seed: int = 0,
    first_number: int = 0,
    rotation: int | None = None,
    sample_aspect_ratio: Fraction | None = None,
    cover_art: bool = False,
) -> str | os.PathLike[str] | io.BytesIO:
    """Encode numbered frames (``first_number``, ...) into ``format``; frames in ``skip`` leave a gap.

    ``options`` are the encoder's (for libx264 e.g. ``{"x264-params": "intra-refresh=1"}``).
    ``cover_art`` puts an attached picture (JPEG) stream first, as tagged music videos have.
    """
    painter = _FramePainter(width, height, first_number + num_frames + len(skip), seed, "pan")
    target = path if isinstance(path, io.BytesIO) else os.fspath(path)
    with av.open(target, mode="w", format=format) as container:
        if cover_art:
            art = container.add_stream("mjpeg")
            art.width, art.height, art.pix_fmt = 64, 48, "yuvj420p"
            art.disposition = av.stream.Disposition.attached_pic.value  # PyAV 15 takes an int only
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.codec_context.time_base = Fraction(1, fps)
        stream.codec_context.gop_size = gop
        stream.codec_context.max_b_frames = bframes
        if sample_aspect_ratio is not None:
            stream.codec_context.sample_aspect_ratio = sample_aspect_ratio
        if rotation is not None and CAN_WRITE_ROTATION:
            stream.set_display_rotation(rotation)
        if codec == "libx264":
            params = f"keyint={gop}:min-keyint={gop}:scenecut=0:bframes={bframes}:b-adapt=0"
            extra = dict(options or {})
            if "x264-params" in extra:
                params += ":" + extra.pop("x264-params")
            stream.options = {"preset": "veryfast", "crf": "23", "x264-params": params, **extra}
        elif options:
            stream.options = dict(options)
        if cover_art:
            picture = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 200, np.uint8), format="rgb24")
            picture = picture.reformat(format="yuvj420p")
            for packet in art.encode(picture):
                container.mux(packet)
            for packet in art.encode(None):
                container.mux(packet)
        number, pts = first_number, 0
        while number < first_number + num_frames:
            if pts in skip:
                pts += 1
                continue
            frame = av.VideoFrame.from_ndarray(painter(number), format="rgb24").reformat(format=pix_fmt)
            frame.pts, frame.time_base = pts, Fraction(1, fps)
            container.mux(stream.encode(frame))
            number, pts = number + 1, pts + 1
        container.mux(stream.encode(None))
    return path


def remux(
    src: str | os.PathLike[str] | bytes,
    dst: str | os.PathLike[str],
    *,
    format: str | None = None,
    keyframe: int = 0,
    after: int = 0,
) -> Path:
    """Stream-copy the video packets of ``src`` from its ``keyframe``-th keyframe on (a cut), timestamps kept.

    ``after`` more packets are left out, so that the cut starts in the middle of a GOP, as
    ``ffmpeg -ss T -c copy -copyinkf`` cuts do.
    """
    data = io.BytesIO(src) if isinstance(src, bytes) else os.fspath(src)
    with av.open(data) as inp, av.open(os.fspath(dst), mode="w", format=format) as out:
        source = inp.streams.video[0]
        stream = out.add_stream_from_template(source)
        seen, skipped = -1, 0
        for packet in inp.demux(source):
            if packet.size == 0:
                continue
            seen += packet.is_keyframe
            if seen >= keyframe and skipped < after:
                skipped += 1
            elif seen >= keyframe:
                packet.stream = stream
                out.mux(packet)
    return Path(dst)


def concatenate(parts: Sequence[bytes | str | os.PathLike[str]], dst: str | os.PathLike[str]) -> Path:
    """Byte-wise concatenation (``cat a.ts b.ts > c.ts``): a splice, as broadcast recorders make."""
    with open(dst, "wb") as out:
        for part in parts:
            out.write(part if isinstance(part, bytes) else Path(part).read_bytes())
    return Path(dst)


def patch_x264_build(src: str | os.PathLike[str], dst: str | os.PathLike[str], build: int) -> Path:
    """Copy an x264 MP4, rewriting the encoder-version SEI of its first packet to claim ``build``.

    FFmpeg's H.264 decoder reads that SEI and works around bugs of old x264 builds; a decoder
    that starts at a later keyframe never sees it. Keeps the packet size (three-digit build).
    """
    with av.open(os.fspath(src)) as inp, av.open(os.fspath(dst), mode="w", format="mp4") as out:
        source = inp.streams.video[0]
        stream = out.add_stream_from_template(source)
        first = True
        for packet in inp.demux(source):
            if packet.size == 0:
                continue
            if first:
                data = bytes(packet)
                at = data.index(b"x264 - core ") + len(b"x264 - core ")
                patched = av.Packet(data[:at] + b"%03d" % build + data[at + 3 :])
                patched.pts, patched.dts, patched.time_base = packet.pts, packet.dts, packet.time_base
                patched.is_keyframe = True
                packet, first = patched, False
            packet.stream = stream
            out.mux(packet)
    return Path(dst)


def corrupt_packet(src: str | os.PathLike[str], dst: str | os.PathLike[str], position: int) -> Path:
    """Copy a length-prefixed H.264/HEVC file (MP4, MKV) with the first NAL length of video packet
    ``position`` (decode order) overwritten by 0xFFFFFFFF, the damage of decord's ``corrupted.mp4``
    test file (its packet 30): the container is whole and counts every packet, while a decoder
    rejects that one ("Invalid NAL unit size") and a full decode ends there."""
    data = bytearray(Path(src).read_bytes())
    with av.open(os.fspath(src)) as inp:
        stream = inp.streams.video[0]
        packets = (p for p in inp.demux(stream) if p.size)
        packet = next(p for k, p in enumerate(packets) if k == position)
        at, size = packet.pos, packet.size
    if at is None or data[at : at + size] != bytes(packet):
        raise ValueError(f"{src}: cannot find video packet {position} in the file's bytes")
    data[at : at + 4] = b"\xff\xff\xff\xff"
    Path(dst).write_bytes(bytes(data))
    return Path(dst)


def anonymous_mpeg4(src: str | os.PathLike[str], dst: str | os.PathLike[str], codec_tag: str) -> Path:
    """Copy an MPEG-4 Part 2 AVI with its encoder's user data (``Lavc...``) removed, from the
    extradata and every packet, and its fourcc set to ``codec_tag``: FFmpeg then knows the encoder
    by the fourcc alone (``XVID``: Xvid's IDCT and bug workarounds), as with files whose encoder
    wrote no user data; a decoder without the fourcc decodes other pixels."""

    def strip(data: bytes) -> bytes:  # user data runs to the next start code
        return re.sub(rb"\x00\x00\x01\xb2.*?(?=\x00\x00\x01|\Z)", b"", data, flags=re.S)

    with av.open(os.fspath(src)) as inp, av.open(os.fspath(dst), mode="w", format="avi") as out:
        source = inp.streams.video[0]
        stream = out.add_stream("mpeg4", rate=source.average_rate)
        stream.width, stream.height, stream.pix_fmt = source.width, source.height, source.pix_fmt
        stream.codec_context.codec_tag = codec_tag
        stream.codec_context.extradata = strip(source.codec_context.extradata or b"")
        stream.time_base = source.time_base
        for packet in inp.demux(source):
            if packet.size == 0:
                continue
            copy = av.Packet(strip(bytes(packet)))
            copy.pts, copy.dts, copy.is_keyframe = packet.pts, packet.dts, packet.is_keyframe
            copy.time_base, copy.stream = packet.time_base, stream
            out.mux(copy)
    return Path(dst)
