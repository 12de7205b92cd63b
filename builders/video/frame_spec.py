"""Which frames of a clip the LLM sees: one setting object shared by the pipelines and evaluation runners.

The paper gives API models one frame per second and open models 16 uniform frames. ``rule`` names
how indices are chosen (:mod:`builders.video.frame_rules`: ``uniform``, the papers' and the default,
or an evaluation harness's rule, to reproduce its frames). ``video_input`` says how they are sent:
``images`` (one JPEG data URL each) or ``video`` (one lossless MP4 data URL of exactly those frames,
:mod:`builders.video.video_url`). The URLs' bytes are part of the LLM cache key: the same clip and
the same :class:`FrameSpec` give the same key on every run, so reruns hit the cache, and a change of
rule or input is a new key.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from builders.options.numbers import POSITIVE_INT, POSITIVE_NUMBER
from builders.video.frame_rules import DEFAULT_RULE, RULES, check_request, get_rule

VIDEO_INPUTS: tuple[str, ...] = ("images", "video")

if TYPE_CHECKING:
    from builders.video.sampler import Frames
    from builders.video.source import SourceLike


@dataclass(frozen=True)
class FrameSpec:
    """``fps`` frames per second or ``num_frames`` frames (exactly one; with the ``lmms-eval`` rules
    both, ``num_frames`` capping the fps count), chosen by ``rule``, longer side at most ``max_side``
    pixels (None: as decoded), sent as ``video_input`` (``images`` or one ``video``)."""

    fps: float | None = 1.0
    num_frames: int | None = None
    max_side: int | None = None
    rule: str = DEFAULT_RULE
    video_input: str = "images"

    def __post_init__(self) -> None:
        get_rule(self.rule)
        if self.fps is None and self.num_frames is None:
            raise ValueError("give exactly one of fps or num_frames")
        if (
            self.fps is not None
            and self.num_frames is not None
            and not RULES[self.rule].fps_caps_with_num_frames
        ):
            raise ValueError(f"give exactly one of fps or num_frames (the {self.rule} frame rule takes one)")
        if self.fps is not None and not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.num_frames is not None and self.num_frames < 1:
            raise ValueError(f"num_frames must be at least 1, got {self.num_frames}")
        check_request(self.rule, self.num_frames, self.fps)
        if self.max_side is not None and self.max_side < 16:
            raise ValueError(f"max_side must be at least 16 pixels, got {self.max_side}")
        if self.video_input not in VIDEO_INPUTS:
            raise ValueError(f"video_input must be one of {list(VIDEO_INPUTS)}, got {self.video_input!r}")

    def sample(self, source: SourceLike) -> Frames:
        """The frames of ``source`` this spec names, exact (VideoError/FileNotFoundError if unreadable)."""
        # Lazy for start-up speed: commands add the frame options without loading PyAV, numpy, PIL.
        from builders.video.frame_rules import reader_indices
        from builders.video.sampler import ClipReader

        with ClipReader(source) as reader:
            indices = reader_indices(reader, self.rule, self.num_frames, self.fps)
            return reader.get_frames_at(indices, max_side=self.max_side)

    def data_urls(self, source: SourceLike) -> list[str]:
        """What a request shows of ``source``: one JPEG data URL per frame (``images``), or one MP4
        data URL holding exactly those frames (``video``); VideoError/FileNotFoundError if unreadable."""
        from builders.video.sampler import frames_to_data_urls  # lazy: start-up speed

        frames = self.sample(source)
        if self.video_input == "video":
            from builders.video.video_url import frames_to_video_url  # lazy: start-up speed

            return [frames_to_video_url(frames)]
        return frames_to_data_urls(frames)

    def frame_count(self, urls: Sequence[str]) -> int:
        """How many frames ``data_urls`` put in ``urls`` (a video's are counted from its header)."""
        if self.video_input == "images":
            return len(urls)
        from builders.video.video_url import video_url_frame_count  # lazy: start-up speed

        return sum(video_url_frame_count(url) for url in urls)

    def describe(self, count: int) -> str:
        """How the frames were taken, for the prompt ("6 frames taken at 1 frame per second")."""
        if self.fps is not None and not RULES[self.rule].fps_spreads:
            rate = f"{self.fps:g} frame{'s' if self.fps != 1 else ''} per second"
            return f"{count} frame{'s' if count != 1 else ''} taken at {rate}"
        return f"{count} frame{'s' if count != 1 else ''} spread evenly over the clip"

    def to_json(self) -> dict[str, Any]:
        return {
            "fps": self.fps,
            "num_frames": self.num_frames,
            "max_side": self.max_side,
            "rule": self.rule,
            "video_input": self.video_input,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FrameSpec:
        """Also reads specs recorded before ``rule`` and ``video_input`` existed (uniform images)."""
        return cls(
            fps=data.get("fps"),
            num_frames=data.get("num_frames"),
            max_side=data.get("max_side"),
            rule=data.get("rule") or DEFAULT_RULE,
            video_input=data.get("video_input") or "images",
        )


NUM_FRAMES_HELP = "this many frames spread evenly over the clip"
MAX_SIDE_HELP = "shrink frames so their longer side is at most this (e.g. 512)"


def add_frame_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """``--fps`` | ``--num-frames`` and ``--max-side``, for every command that shows frames to an LLM."""
    group = parser.add_argument_group("frames", f"what the LLM sees of each clip (default: {default})")
    which = group.add_mutually_exclusive_group()
    which.add_argument("--fps", type=POSITIVE_NUMBER, help="frames per second of the clip")
    which.add_argument("--num-frames", type=POSITIVE_INT, help=NUM_FRAMES_HELP)
    group.add_argument("--max-side", type=POSITIVE_INT, help=MAX_SIDE_HELP)
    group.add_argument(
        "--frame-rule",
        choices=sorted(RULES),
        default=DEFAULT_RULE,
        help="which frame indices: "
        + "; ".join(f"{name}: {rule.source}" for name, rule in sorted(RULES.items()))
        + f" (default {DEFAULT_RULE})",
    )
    group.add_argument(
        "--max-frames",
        type=POSITIVE_INT,
        help="with --fps and an lmms-eval rule: at most this many frames (lmms-eval's max_num_frames)",
    )
    group.add_argument(
        "--video-input",
        choices=VIDEO_INPUTS,
        default="images",
        help="send the frames as separate JPEG images (default), or as one lossless MP4 video_url part "
        "holding exactly those frames at their times (for servers such as vLLM that take video)",
    )


def frame_spec_from_args(
    args: argparse.Namespace, default_fps: float | None, default_num_frames: int | None
) -> FrameSpec:
    """The :class:`FrameSpec` of :func:`add_frame_arguments` options, or the command's default."""
    extra = {
        "rule": getattr(args, "frame_rule", DEFAULT_RULE),
        "video_input": getattr(args, "video_input", "images"),
    }
    cap = getattr(args, "max_frames", None)
    if cap is not None and args.fps is None:
        raise ValueError("--max-frames caps an --fps count; give --fps too (or --num-frames alone)")
    if args.fps is None and args.num_frames is None:
        return FrameSpec(fps=default_fps, num_frames=default_num_frames, max_side=args.max_side, **extra)
    return FrameSpec(
        fps=args.fps, num_frames=args.num_frames if cap is None else cap, max_side=args.max_side, **extra
    )
