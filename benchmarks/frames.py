"""Time 16-frame uniform sampling (``builders.video.sampler.sample_frames``) against common baselines.

Clips like BQA's (5-10 s, 25 fps, 720p and smaller, with and without B-frames, one with a single
keyframe) are written into a temporary folder with :mod:`builders.testing.clips`. For each clip:

- ``ours``: ``sample_frames(path, num_frames=16)`` (RGB frames out);
- ``seq``: what evaluation harnesses commonly do: PyAV decodes from the start with FFmpeg's
  threads, keeps the 16 indices (from the header frame count) and converts those to RGB;
- ``decord``: ``VideoReader(path).get_batch(indices)`` when decord is installed;
- ``floor``: bare decoding (PyAV, frame threads, no conversion) of every frame up to the last index.

Each figure is the median of ``--repeat`` runs, methods interleaved. Printed ratios:
``speedup`` = best baseline / ours (target >= 1.5 with B-frames, >= 1 otherwise) and
``vs floor`` = ours / floor (target <= 1.15). Run: ``python benchmarks/frames.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np

from builders.testing.clips import write_clip
from builders.video.index import uniform_indices
from builders.video.sampler import ClipReader, available_cpus, sample_frames

try:
    import decord
except ImportError:  # optional baseline
    decord = None

NUM_FRAMES = 16

# name, width, height, seconds, gop, bframes
CLIPS = [
    ("720p 10s gop50 B2", 1280, 720, 10, 50, 2),
    ("720p 10s gop50 noB", 1280, 720, 10, 50, 0),
    ("720p 6s gop25 B3", 1280, 720, 6, 25, 3),
    ("480p 8s gop25 B2", 854, 480, 8, 25, 2),
    ("480p 8s gop50 noB", 854, 480, 8, 50, 0),
    ("360p 5s 1key noB", 640, 360, 5, 10_000, 0),
    ("360p 5s 1key B2", 640, 360, 5, 10_000, 2),
]


def run_ours(path: Path) -> np.ndarray:
    return sample_frames(path, num_frames=NUM_FRAMES).frames


def run_sequential(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        wanted = uniform_indices(stream.frames, NUM_FRAMES)
        targets, out = set(wanted), {}
        for i, frame in enumerate(container.decode(stream)):
            if i in targets:
                out[i] = frame.to_ndarray(format="rgb24")
            if i >= wanted[-1]:
                break
    return np.stack([out[i] for i in wanted])


def run_decord(path: Path) -> np.ndarray:
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=0)
    return reader.get_batch(uniform_indices(len(reader), NUM_FRAMES)).asnumpy()


def run_floor(path: Path) -> None:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        last = uniform_indices(stream.frames, NUM_FRAMES)[-1]
        for i, _ in enumerate(container.decode(stream)):
            if i >= last:
                break


def median_time(fn: Callable[[Path], object], path: Path, times: list[float]) -> None:
    start = time.perf_counter()
    fn(path)
    times.append(time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per method and clip (median reported)")
    parser.add_argument("--only", help="run only clips whose name contains this text")
    args = parser.parse_args(argv)
    methods: dict[str, Callable[[Path], object]] = {"ours": run_ours, "seq": run_sequential}
    if decord is not None:
        methods["decord"] = run_decord
    methods["floor"] = run_floor
    print(f"{available_cpus()} CPUs, PyAV {av.__version__}, decord {'yes' if decord else 'not installed'}")
    header = f"{'clip':22} {'strategy':9} " + " ".join(f"{m + ' ms':>9}" for m in methods)
    print(header + f" {'speedup':>8} {'vs floor':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, width, height, seconds, gop, bframes in CLIPS:
            if args.only and args.only not in name:
                continue
            path = write_clip(
                Path(tmp) / "clip.mp4",
                num_frames=25 * seconds,
                fps=25,
                width=width,
                height=height,
                gop=gop,
                bframes=bframes,
                pattern="pan",
                seed=len(name),
            )
            # Same frames from every method (decord's RGB conversion may differ slightly: shape only).
            ours, seq = run_ours(path), run_sequential(path)
            if not np.array_equal(ours, seq):
                print(f"{name}: ours and sequential decoding disagree", file=sys.stderr)
                return 1
            with ClipReader(path) as reader:
                strategy = reader.strategy(reader.sample_indices(NUM_FRAMES))
            times: dict[str, list[float]] = {m: [] for m in methods}
            for fn in methods.values():  # warm-up (page cache, lazy imports)
                fn(path)
            for _ in range(args.repeat):
                for m, fn in methods.items():
                    median_time(fn, path, times[m])
            med = {m: statistics.median(t) for m, t in times.items()}
            best = min(v for m, v in med.items() if m not in ("ours", "floor"))
            cells = " ".join(f"{med[m] * 1000:9.1f}" for m in methods)
            print(
                f"{name:22} {strategy:9} {cells} {best / med['ours']:7.2f}x {med['ours'] / med['floor']:7.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
