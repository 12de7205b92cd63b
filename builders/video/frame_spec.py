"""Which frames of a clip the LLM sees: one setting object shared by the pipelines and evaluation runners.

The paper gives API models one frame per second and open models 16 uniform frames. The frames
become JPEG data URLs, whose bytes are part of the LLM cache key: the same clip and the same
:class:`FrameSpec` give the same key on every run, so reruns hit the cache.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from builders.video.source import SourceLike


@dataclass(frozen=True)
class FrameSpec:
    """``fps`` frames per second or ``num_frames`` uniform frames (exactly one), longer side at most
    ``max_side`` pixels (None: as decoded)."""

    fps: float | None = 1.0
    num_frames: int | None = None
    max_side: int | None = None

    def __post_init__(self) -> None:
        if (self.fps is None) == (self.num_frames is None):
            raise ValueError("give exactly one of fps or num_frames")
        if self.fps is not None and not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.num_frames is not None and self.num_frames < 1:
            raise ValueError(f"num_frames must be at least 1, got {self.num_frames}")
        if self.max_side is not None and self.max_side < 16:
            raise ValueError(f"max_side must be at least 16 pixels, got {self.max_side}")

    def data_urls(self, source: SourceLike) -> list[str]:
        """The sampled frames of ``source`` as JPEG data URLs (VideoError/FileNotFoundError if unreadable)."""
        # Lazy for start-up speed: commands add the frame options without loading PyAV, numpy, PIL.
        from builders.video.sampler import frames_to_data_urls, sample_frames

        return frames_to_data_urls(sample_frames(source, self.num_frames, self.fps, self.max_side))

    def describe(self, count: int) -> str:
        """How the frames were taken, for the prompt ("6 frames taken at 1 frame per second")."""
        if self.fps is not None:
            rate = f"{self.fps:g} frame{'s' if self.fps != 1 else ''} per second"
            return f"{count} frame{'s' if count != 1 else ''} taken at {rate}"
        return f"{count} frame{'s' if count != 1 else ''} spread evenly over the clip"

    def to_json(self) -> dict[str, Any]:
        return {"fps": self.fps, "num_frames": self.num_frames, "max_side": self.max_side}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FrameSpec:
        return cls(fps=data.get("fps"), num_frames=data.get("num_frames"), max_side=data.get("max_side"))


def add_frame_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """``--fps`` | ``--num-frames`` and ``--max-side``, for every command that shows frames to an LLM."""
    group = parser.add_argument_group("frames", f"what the LLM sees of each clip (default: {default})")
    which = group.add_mutually_exclusive_group()
    which.add_argument("--fps", type=float, help="frames per second of the clip")
    which.add_argument("--num-frames", type=int, help="this many frames spread evenly over the clip")
    group.add_argument(
        "--max-side", type=int, help="shrink frames so their longer side is at most this (e.g. 512)"
    )


def frame_spec_from_args(
    args: argparse.Namespace, default_fps: float | None, default_num_frames: int | None
) -> FrameSpec:
    """The :class:`FrameSpec` of :func:`add_frame_arguments` options, or the command's default."""
    if args.fps is None and args.num_frames is None:
        return FrameSpec(fps=default_fps, num_frames=default_num_frames, max_side=args.max_side)
    return FrameSpec(fps=args.fps, num_frames=args.num_frames, max_side=args.max_side)
