"""Time 16-frame uniform sampling (``builders.video.sampler.sample_frames``) against common baselines.

Clips like BQA's (5-10 s, 25 fps, 720p and smaller, with and without B-frames, one with a single
keyframe) are written into a temporary folder with :mod:`builders.testing.clips`, followed by
the messier shapes of :mod:`builders.testing.corpus` (a stream-copy cut that starts mid-GOP,
intra refresh, an HEVC cut at a CRA picture, AVI, a raw stream, an MPEG-TS splice). For each clip:

- ``ours``: ``sample_frames(path, num_frames=16)`` (RGB frames out);
- ``seq``: what evaluation harnesses commonly do: PyAV decodes from the start with FFmpeg's
  threads, keeps the 16 indices and converts those to RGB (indices from the true frame count,
  counted beforehand: header counts are wrong or missing on several of the messy shapes);
- ``decord``: ``VideoReader(path).get_batch(indices)`` when decord is installed;
- ``floor``: bare decoding (PyAV, frame threads, no conversion) of every frame up to the last index.

Each figure is the median of ``--repeat`` runs, methods interleaved. Printed ratios:
``speedup`` = best baseline / ours (target >= 1.5 with B-frames, >= 1 otherwise) and
``vs floor`` = ours / floor (target <= 1.15). Run: ``python benchmarks/frames.py``.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np

from builders.testing.clips import write_clip
from builders.testing.corpus import concatenate, remux, write_encoded
from builders.video.index import uniform_indices
from builders.video.sampler import ClipReader, available_cpus, sample_frames
from builders.video.source import VideoError

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


def _messy(name: str, folder: Path) -> Path:
    """The messy shapes, 480p, 8 s (the TS splice: two 4 s parts)."""
    size = dict(width=854, height=480, num_frames=200)
    if name == "480p 8s cut midGOP B2":
        whole = write_clip(folder / "whole.mp4", gop=50, bframes=2, pattern="pan", seed=7, **size)
        return remux(whole, folder / "cut.mp4", keyframe=0, after=37)
    if name == "480p 8s intra-refresh":
        return Path(
            write_encoded(
                folder / "ir.mp4", format="mp4", gop=50, options={"x264-params": "intra-refresh=1"}, **size
            )
        )
    if name == "480p 8s HEVC CRA cut":
        hevc = write_encoded(
            folder / "hevc.mp4",
            format="mp4",
            codec="libx265",
            options={
                "x265-params": "keyint=24:min-keyint=24:open-gop=1:bframes=3:scenecut=0:log-level=error"
            },
            **size,
        )
        return remux(hevc, folder / "cra.mkv", format="matroska", keyframe=2)
    if name == "480p 8s AVI H.264 B2":
        return Path(write_encoded(folder / "clip.avi", format="avi", gop=50, bframes=2, **size))
    if name == "480p 8s raw H.264 B2":
        return Path(write_encoded(folder / "clip.h264", format="h264", gop=50, bframes=2, **size))
    if name == "480p 8s TS splice B2":
        half = dict(size, num_frames=100)
        first = write_encoded(io.BytesIO(), format="mpegts", gop=50, bframes=2, **half).getvalue()
        second = write_encoded(
            io.BytesIO(), format="mpegts", gop=50, bframes=2, first_number=100, seed=1, **half
        )
        return concatenate([first, second.getvalue()], folder / "splice.ts")
    raise ValueError(name)


MESSY = [
    "480p 8s cut midGOP B2",
    "480p 8s intra-refresh",
    "480p 8s HEVC CRA cut",
    "480p 8s AVI H.264 B2",
    "480p 8s raw H.264 B2",
    "480p 8s TS splice B2",
]


def main_stream(container: av.container.InputContainer) -> av.VideoStream:
    return next(s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic)


def count_frames(path: Path) -> int:
    with av.open(str(path)) as container:
        stream = main_stream(container)
        stream.thread_type = "AUTO"
        return sum(1 for _ in container.decode(stream))


def run_ours(path: Path) -> np.ndarray:
    return sample_frames(path, num_frames=NUM_FRAMES).frames


def run_sequential(path: Path, wanted: list[int]) -> np.ndarray:
    with av.open(str(path)) as container:
        stream = main_stream(container)
        stream.thread_type = "AUTO"
        targets, out = set(wanted), {}
        for i, frame in enumerate(container.decode(stream)):
            if i in targets:
                out[i] = frame.to_ndarray(format="rgb24")
            if i >= wanted[-1]:
                break
    return np.stack([out[i] for i in wanted])


def run_decord(path: Path, wanted: list[int]) -> np.ndarray:
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=0)
    return reader.get_batch(wanted).asnumpy()


def run_floor(path: Path, wanted: list[int]) -> None:
    with av.open(str(path)) as container:
        stream = main_stream(container)
        stream.thread_type = "AUTO"
        for i, _ in enumerate(container.decode(stream)):
            if i >= wanted[-1]:
                break


def median_time(
    fn: Callable[[Path, list[int]], object], path: Path, wanted: list[int], times: list[float]
) -> None:
    start = time.perf_counter()
    fn(path, wanted)
    times.append(time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per method and clip (median reported)")
    parser.add_argument("--only", help="run only clips whose name contains this text")
    args = parser.parse_args(argv)
    methods: dict[str, Callable[[Path, list[int]], object]] = {
        "ours": lambda path, _: run_ours(path),
        "seq": run_sequential,
    }
    if decord is not None:
        methods["decord"] = run_decord
    methods["floor"] = run_floor
    print(f"{available_cpus()} CPUs, PyAV {av.__version__}, decord {'yes' if decord else 'not installed'}")
    header = f"{'clip':22} {'strategy':10} " + " ".join(f"{m + ' ms':>9}" for m in methods)
    print(header + f" {'speedup':>8} {'vs floor':>8}")
    names = [c[0] for c in CLIPS] + MESSY
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if args.only and args.only not in name:
                continue
            folder = Path(tmp) / str(names.index(name))
            folder.mkdir()
            path = _write(name, folder)
            wanted = uniform_indices(count_frames(path), NUM_FRAMES)
            # Same frames from every method (decord's RGB conversion may differ slightly: shape only).
            try:
                ours = run_ours(path)
                with ClipReader(path) as reader:
                    strategy = reader.strategy(reader.sample_indices(NUM_FRAMES))
            except VideoError as err:
                print(f"{name:22} refused: {err}")
                failed = True
                continue
            if not np.array_equal(ours, run_sequential(path, wanted)):
                print(f"{name:22} WRONG: ours and sequential decoding disagree")
                failed = True
                continue
            times: dict[str, list[float]] = {m: [] for m in methods}
            for fn in methods.values():  # warm-up (page cache, lazy imports)
                fn(path, wanted)
            for _ in range(args.repeat):
                for m, fn in methods.items():
                    median_time(fn, path, wanted, times[m])
            med = {m: statistics.median(t) for m, t in times.items()}
            best = min(v for m, v in med.items() if m not in ("ours", "floor"))
            cells = " ".join(f"{med[m] * 1000:9.1f}" for m in methods)
            print(
                f"{name:22} {strategy:10} {cells} {best / med['ours']:7.2f}x {med['ours'] / med['floor']:7.2f}x"
            )
    return 1 if failed else 0


def _write(name: str, folder: Path) -> Path:
    for clip_name, width, height, seconds, gop, bframes in CLIPS:
        if clip_name == name:
            return write_clip(
                folder / "clip.mp4",
                num_frames=25 * seconds,
                fps=25,
                width=width,
                height=height,
                gop=gop,
                bframes=bframes,
                pattern="pan",
                seed=len(name),
            )
    return _messy(name, folder)


if __name__ == "__main__":
    sys.exit(main())
