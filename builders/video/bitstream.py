"""What a packet's own bytes say about decoding, where container flags are only hints.

A container's keyframe flag does not prove that a decoder started there outputs what a full
decode does: H.264 intra-refresh recovery points are flagged keyframes although a decoder
started at one shows nothing until the refresh completes. :func:`is_random_access` checks the
NAL unit types instead. :func:`x264_build` reads the encoder version that x264 writes into its
first packet, which FFmpeg's decoder uses to work around bugs of old builds, and
:func:`x264_build_matters` says whether those workarounds can change a stream's pixels (from its
sequence parameter sets: :func:`h264_sps`). :func:`nal_overrun` finds the packets FFmpeg's NAL
splitter rejects outright (a length prefix pointing past the packet's end: damaged data).
:class:`Mpeg4Packets` says from their VOP headers whether an MPEG-4 Part 2 stream's packets are its
frames in display order, which AVI, storing no presentation times, does not say.
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
#: libavcodec's H.264 decoder decodes lossless (transform-bypass) 8x8 intra blocks with vertical
#: or horizontal prediction of High 4:4:4 Predictive streams (profile_idc 244) without the
#: reference sample filter for x264 builds before this one (``h264_mb.c``: x264's own bug until 151).
X264_LOSSLESS_8X8_BUILD = 151
#: ... and for builds up to this one takes B-frame spatial direct motion from the co-located block
#: without the zero-motion shortcut (``h264_direct.c``: ``x264_build > 33``).
X264_SPATIAL_DIRECT_BUILD = 33
#: Builds before 44 only halve the frame rate the decoder reports (``h264_slice.c``): no pixel
#: changes, and frame times here come from the container's timestamps, so nothing to do.
X264_FRAME_RATE_BUILD = 44
#: H.264 profile High 4:4:4 Predictive, the only one with the lossless transform bypass.
H264_HIGH_444_PREDICTIVE = 244
#: Profiles whose SPS carries chroma format, bit depths and the transform-bypass flag (H.264 7.3.2.1.1).
_H264_HIGH_PROFILES = frozenset({100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135})

#: MPEG-4 Part 2 start codes (ISO/IEC 14496-2 6.3): VOP, group of VOPs, video object layers.
MPEG4_VOP, MPEG4_GOV = b"\x00\x00\x01\xb6", b"\x00\x00\x01\xb3"
_MPEG4_VOL = re.compile(rb"\x00\x00\x01[\x20-\x2f]", re.S)
_MPEG4_VOP_TYPES = {0: "I", 1: "P", 2: "B", 3: "S"}

# What libavcodec's SEI reader scans in x264's user-data SEI: sscanf("x264 - core %d").
_X264_CORE = re.compile(rb"x264 - core (\d+)")


def nal_unit_types(data: bytes, codec: str, length_size: int | None) -> Iterator[int]:
    """NAL unit types in one packet: length-prefixed (MP4/MKV, ``length_size`` bytes) or Annex B."""
    for nal in _nal_units(data, length_size):
        yield _nal_type(nal[0], codec)


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
    """The x264 build ("core N") announced in a packet's SEI, as libavcodec reads it, if any.

    libavcodec keeps builds above 0, and reads "core 0000..." with build 1 as 67 (an x264
    version that wrote a zero build).
    """
    match = _X264_CORE.search(data)
    if not match:
        return None
    build = int(match.group(1))
    if build == 1 and match.group(1).startswith(b"0000"):
        return 67
    return build if build > 0 else None


def x264_build_matters(build: int, sps: list[tuple[int, bool]]) -> bool:
    """Whether libavcodec's H.264 decoder can output other pixels for a stream of x264 ``build``
    than for one whose build it does not know; ``sps``: (profile_idc, transform bypass) of every
    sequence parameter set of the stream.

    Two places in the decoder look at the build to change pixels: builds up to
    :data:`X264_SPATIAL_DIRECT_BUILD` (B-frame spatial direct; assumed to matter, as finding
    B-slices with spatial direct would mean parsing slice headers), and builds before
    :data:`X264_LOSSLESS_8X8_BUILD` in High 4:4:4 Predictive streams with the transform bypass.
    """
    if build <= X264_SPATIAL_DIRECT_BUILD:
        return True
    return build < X264_LOSSLESS_8X8_BUILD and any(
        profile == H264_HIGH_444_PREDICTIVE and bypass for profile, bypass in sps
    )


def h264_sps(data: bytes, extradata: bytes | None) -> list[tuple[int, bool]]:
    """(profile_idc, qpprime_y_zero_transform_bypass_flag) of each H.264 SPS in a packet (Annex B
    or length-prefixed per ``extradata``) or, with ``data`` empty, in avcC ``extradata`` itself."""
    if not data:
        return [_sps_fields(nal) for nal in _avcc_sps(extradata or b"")]
    length_size = nal_length_size("h264", extradata)
    return [_sps_fields(nal) for nal in _nal_units(data, length_size) if nal[0] & 0x1F == H264_SPS]


def nal_overrun(codec: str, data: bytes | memoryview, extradata: bytes | None) -> bool:
    """Whether a length-prefixed H.264/HEVC packet has a NAL unit whose length runs past its end:
    libavcodec's splitter rejects such a packet ("Invalid NAL unit size"), so a decode stops there.
    Annex B packets (start codes, no lengths) cannot overrun."""
    length_size = nal_length_size(codec, extradata)
    if codec not in CHECKED_CODECS or not length_size:
        return False
    at, end = 0, len(data)
    while end - at >= 4:  # libavcodec stops looking for NAL units with fewer bytes left
        size = int.from_bytes(data[at : at + length_size], "big")
        at += length_size
        if size > end - at:
            return True
        at += size
    return False


def _nal_units(data: bytes, length_size: int | None) -> Iterator[bytes]:
    if length_size:
        at = 0
        while at + length_size < len(data):
            size = int.from_bytes(data[at : at + length_size], "big")
            yield data[at + length_size : at + length_size + size]
            at += length_size + size
        return
    starts = [m.end() for m in re.finditer(rb"\x00\x00\x01", data)]
    for begin, end in zip(starts, [*starts[1:], len(data) + 3], strict=True):
        yield data[begin : end - 3].rstrip(b"\x00") or b"\x00"


def _avcc_sps(extradata: bytes) -> Iterator[bytes]:
    """The SPS NAL units of an avcC record (ISO/IEC 14496-15 5.3.3.1)."""
    if len(extradata) < 7 or extradata[0] != 1:
        return
    at = 6
    for _ in range(extradata[5] & 0x1F):
        size = int.from_bytes(extradata[at : at + 2], "big")
        yield extradata[at + 2 : at + 2 + size]
        at += 2 + size


def _sps_fields(nal: bytes) -> tuple[int, bool]:
    """profile_idc and the transform-bypass flag of one SPS NAL unit (H.264 7.3.2.1.1)."""
    rbsp = nal[1:].replace(b"\x00\x00\x03", b"\x00\x00")  # emulation prevention
    bits = _Bits(rbsp)
    profile = bits.read(8)
    bits.read(16)  # constraint flags, level_idc
    bits.ue()  # seq_parameter_set_id
    if profile not in _H264_HIGH_PROFILES:
        return profile, False
    if bits.ue() == 3:  # chroma_format_idc 4:4:4
        bits.read(1)  # separate_colour_plane_flag
    bits.ue()  # bit_depth_luma_minus8
    bits.ue()  # bit_depth_chroma_minus8
    return profile, bool(bits.read(1))


class _Bits:
    """Big-endian bit reader with Exp-Golomb codes; reading past the end gives zeros."""

    def __init__(self, data: bytes) -> None:
        self.value, self.left = int.from_bytes(data, "big"), len(data) * 8

    def read(self, n: int) -> int:
        self.left -= n
        return (self.value >> self.left) & ((1 << n) - 1) if self.left >= 0 else 0

    def ue(self) -> int:
        zeros = 0
        while self.left > 0 and not self.read(1):
            zeros += 1
        return (1 << zeros) - 1 + self.read(zeros)


class Mpeg4Packets:
    """Whether an MPEG-4 Part 2 stream's packets are its frames, one each, in display order, read
    from the VOP headers (ISO/IEC 14496-2 6.2.5) one packet at a time (:meth:`packet`), and where
    a decoder can start (:meth:`starts`).

    A packet is one frame in display order when it holds one VOP, coded, of type I or P: a B-VOP
    is shown before the VOP decoded ahead of it, DivX's packed B-frames put two VOPs in one packet
    and a VOP not coded (a dropped frame, which FFmpeg outputs nothing for) in the next, and
    S-VOPs (global motion) are refused as never checked here. The headers before a packet's first
    group of VOPs or VOP (VOL, user data naming the encoder: it chooses libavcodec's IDCT and bug
    workarounds) must be the same wherever they are repeated, and a decoder can start at a
    keyframe I-VOP that carries them, or at any where no packet carries them (the extradata does,
    and every decoder is given it).
    """

    def __init__(self, extradata: bytes | None) -> None:
        self.time_bits = _mpeg4_time_bits(extradata or b"")  # of vop_time_increment
        self.headers: bytes | None = None  # the headers the packets carry, once seen
        self._intra: list[tuple[int, bool]] = []  # (position, carries the headers) of keyframe I-VOPs

    def packet(self, position: int, data: bytes, keyframe: bool) -> str | None:
        """Why the packet at decode ``position`` is not one frame in display order, or None."""
        first = data.find(MPEG4_VOP)
        gov = data.find(MPEG4_GOV, 0, first)
        headers = data[: gov if gov >= 0 else max(first, 0)]
        if headers:
            if self.headers is None:
                self.headers = headers
                self.time_bits = _mpeg4_time_bits(headers) or self.time_bits  # the decoder reads it last
            elif headers != self.headers:
                return "repeats the stream's headers (VOL, user data) changed"
        count = data.count(MPEG4_VOP)
        if count != 1:
            return f"holds {count} VOPs"
        if self.time_bits is None:
            return "has VOP headers that cannot be read (no VOL header gives vop_time_increment's size)"
        vop = _mpeg4_vop(data[first + 4 : first + 24], self.time_bits)
        if vop is None:
            return "has a VOP header that does not parse"
        kind, coded = vop
        if not coded:
            return "holds a VOP not coded (a dropped frame: no frame out)"
        if kind not in "IP":
            return f"holds a {kind}-VOP"
        if kind == "I" and keyframe:
            self._intra.append((position, bool(headers)))
        return None

    def starts(self) -> list[int]:
        """Decode positions a fresh decoder (given the extradata) decodes as a full decode from."""
        return [p for p, carries in self._intra if carries or self.headers is None]


def _mpeg4_time_bits(data: bytes) -> int | None:
    """Bits of vop_time_increment, from the first video object layer header in ``data``, as
    libavcodec counts them (``av_log2(resolution - 1) + 1``); None without a rectangular VOL."""
    match = _MPEG4_VOL.search(data)
    if match is None:
        return None
    bits = _Bits(data[match.end() : match.end() + 32])
    bits.read(1)  # random_accessible_vol
    bits.read(8)  # video_object_type_indication
    if bits.read(1):  # is_object_layer_identifier
        bits.read(7)  # video_object_layer_verid, video_object_layer_priority
    if bits.read(4) == 15:  # aspect_ratio_info: extended PAR
        bits.read(16)
    if bits.read(1):  # vol_control_parameters
        bits.read(3)  # chroma_format, low_delay
        if bits.read(1):  # vbv_parameters
            bits.read(79)
    if bits.read(2) != 0:  # video_object_layer_shape: rectangular only
        return None
    if not bits.read(1):  # marker
        return None
    resolution = bits.read(16)
    if not bits.read(1) or resolution == 0:  # marker
        return None
    return max(1, (resolution - 1).bit_length())


def _mpeg4_vop(header: bytes, time_bits: int) -> tuple[str, bool] | None:
    """(vop_coding_type, vop_coded) of a VOP header (after its start code); None if its markers
    are not where ``time_bits`` puts them."""
    bits = _Bits(header)
    kind = _MPEG4_VOP_TYPES[bits.read(2)]
    while bits.left > 0 and bits.read(1):  # modulo_time_base: ones ended by a zero
        pass
    if not bits.read(1):  # marker
        return None
    bits.read(time_bits)  # vop_time_increment
    if not bits.read(1) or bits.left < 1:  # marker
        return None
    return kind, bool(bits.read(1))
