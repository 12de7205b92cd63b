"""``vqabench frames``: sample frames from one video the way the benchmarks' evaluations do."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.files.arguments import existing_file
from builders.options.numbers import POSITIVE_INT, POSITIVE_NUMBER, int_at_least
from builders.video.jpeg import JPEG_QUALITY  # light: numpy and PIL load when a frame is encoded


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "frames",
        help="sample frames from a video (uniform N frames or F per second), optionally save JPEGs",
        description=(
            "Sample frames from VIDEO exactly as a full sequential decode would give them: "
            "--num-frames N takes N evenly spaced frames, first and last included (BQA evaluates "
            "open models on 16); --fps F takes one frame every 1/F seconds from the start (BQA "
            "evaluates API models at 1 fps). Prints each frame's index and timestamp."
        ),
    )
    parser.add_argument("video", type=existing_file, metavar="VIDEO", help="video file (MP4, MKV, WebM, ...)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--num-frames", type=POSITIVE_INT, metavar="N", help="number of evenly spaced frames")
    mode.add_argument("--fps", type=POSITIVE_NUMBER, metavar="F", help="frames per second of video")
    parser.add_argument(
        "--max-side",
        type=POSITIVE_INT,
        metavar="S",
        help="shrink frames so that the longer side is at most S pixels",
    )
    parser.add_argument(
        "--frame-rule",
        default="uniform",
        metavar="RULE",
        help="which indices: uniform (default; the papers'), lmms-eval, lmms-eval-openai or vlmevalkit "
        "(the harnesses' rules, see builders.video.frame_rules)",
    )
    parser.add_argument("--out-dir", type=Path, metavar="DIR", help="write the frames as JPEG files into DIR")
    parser.add_argument(
        "--quality",
        type=int_at_least(1, 95),
        default=JPEG_QUALITY,
        help=f"JPEG quality 1-95 for --out-dir (default: {JPEG_QUALITY}, what LLM requests show)",
    )
    parser.set_defaults(func=run)


FRAMES_MARKER = ".vqabench-frames"  # left in --out-dir: frames are written only into a folder of frames


def run(args: argparse.Namespace) -> int:
    from builders.video.frame_spec import FrameSpec  # lazy for start-up speed, like PyAV below
    from builders.video.jpeg import jpeg_bytes

    spec = FrameSpec(fps=args.fps, num_frames=args.num_frames, max_side=args.max_side, rule=args.frame_rule)
    frames = spec.sample(args.video)
    height, width = frames.frames.shape[1:3]
    print(f"{args.video}: {frames.total_frames} frames; sampled {len(frames)} at {width}x{height}")
    print("index\ttime_s")
    for index, timestamp in zip(frames.indices, frames.timestamps, strict=True):
        print(f"{index}\t{timestamp:.3f}")
    if args.out_dir is not None:
        from builders.files.folders import claim_folder
        from builders.files.jsonio import write_bytes_atomic

        out = claim_folder(args.out_dir, marker=FRAMES_MARKER)
        for k, (index, rgb) in enumerate(zip(frames.indices, frames.frames, strict=True)):
            write_bytes_atomic(
                out / f"{args.video.stem}_{k:03d}_frame{index:06d}.jpg", jpeg_bytes(rgb, args.quality)
            )
        print(f"wrote {len(frames)} JPEG files to {args.out_dir}")
    return 0
