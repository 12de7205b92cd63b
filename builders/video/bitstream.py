"""What a packet's own bytes say about decoding, where container flags are only hints.

A container's keyframe flag does not prove that a decoder started there outputs what a full
decode does: H.264 intra-refresh recovery points are flagged keyframes although a decoder
started at one shows nothing until the refresh completes. :func:`is_random_access` checks the
NAL unit types instead. :func:`x264_build` reads the encoder version that x264 writes into its
first packet, which FFmpeg's decoder uses to work around bugs of old builds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: H.264 NAL unit types: IDR slice, SPS, PPS (a random-access point needs the IDR and parameter sets).
H264_IDR, H264_SPS, H264_PPS = 5, 7, 8
#: HEVC NAL unit types: IRAP pictures (BLA, IDR, CRA) and VPS/SPS/PPS.
HEVC_IRAP = range(16, 24)
HEVC_VPS, HEVC_SPS, HEVC_PPS = 32, 33, 34
#: Codecs whose keyframes are checked in the bitstream; other codecs' keyframe flags are believed.
CHECKED_CODECS = frozenset({"h264", "hevc"})
#: FFmpeg's H.264 decoder changes how it decodes streams of x264 builds older than this (the
#: newest such workaround in libavcodec); a decoder started mid-stream never learns the build.
X264_WORKAROUND_BUILD = 151

_X264_CORE = re.compile(rb"x264 - core (\d+)")


def nal_unit_types(data: bytes, codec: str, length_size: int | None) -> Iterator[int]:
    """NAL unit types in one packet: length-prefixed (MP4/MKV, ``length_size`` bytes) or Annex B."""
    if length_size:
        at = 0
        while at + length_size < len(data):
            size = int.from_bytes(data[at : at + length_size], "big")
            yield _nal_type(data[at + length_size], codec)
            at += length_size + size
        return
    at = data.find(b"\x00\x00\x01")
    while at >= 0 and at + 3 < len(data):
        yield _nal_type(data[at + 3], codec)
        at = data.find(b"\x00\x00\x01", at + 3)


def _nal_type(header: int, codec: str) -> int:
    return header & 0x1F if codec == "h264" else (header >> 1) & 0x3F


def nal_length_size(codec: str, extradata: bytes | None) -> int | None:
    """Bytes of the NAL length prefix from avcC/hvcC extradata; None for Annex B streams (TS, raw)."""
    if not extradata or extradata[:1] != b"\x01":
        return None
    if codec == "h264" and len(extradata) > 4:
        return (extradata[4] & 0x03) + 1
    if codec == "hevc" and len(extradata) > 21:
        return (extradata[21] & 0x03) + 1
    return None


def is_random_access(codec: str, data: bytes, extradata: bytes | None) -> bool:
    """Whether a fresh decoder given ``extradata`` and started at this keyframe decodes like a full decode.

    H.264 needs an IDR slice, HEVC an IRAP picture (its leading pictures are planned with the
    previous keyframe), and both need parameter sets, in the packet or the extradata. Other
    codecs' keyframes are intra pictures that reset prediction, so their flag is believed; the
    reader still checks that every wanted frame came out.
    """
    if codec not in CHECKED_CODECS:
        return True
    length_size = nal_length_size(codec, extradata)
    types = set(nal_unit_types(data, codec, length_size))
    if codec == "h264":
        has_picture, parameter_sets = H264_IDR in types, {H264_SPS, H264_PPS}
    else:
        has_picture, parameter_sets = bool(types.intersection(HEVC_IRAP)), {HEVC_VPS, HEVC_SPS, HEVC_PPS}
    return has_picture and (length_size is not None or parameter_sets <= types)


def x264_build(data: bytes) -> int | None:
    """The x264 build ("core N") announced in a packet's SEI, if any."""
    match = _X264_CORE.search(data)
    return int(match.group(1)) if match else None
