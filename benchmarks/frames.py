"""Frame sampling against every peer a user would otherwise pick, on the shapes users have: speed and exactness.

Peers (each run when installed; a missing one is named, not silently skipped):

- ``ours``: :func:`builders.video.sampler.sample_frames` (RGB frames out);
- ``pyav-seq``: PyAV decoding from the start with FFmpeg's threads, keeping the wanted frames as
  RGB, as lmms-eval's ``read_video_pyav`` does;
- ``tc-exact`` / ``tc-approx``: torchcodec's ``VideoDecoder(seek_mode="exact" | "approximate")``
  and ``get_frames_at`` (defaults otherwise: one FFmpeg thread); ``tc-approx-mt``: approximate with
  ``num_ffmpeg_threads=0`` (FFmpeg's threads, as ours and the others use). torchcodec runs in its own
  process (``benchmarks/torchcodec_peer.py``), under this Python if it has torchcodec, else under
  ``--torchcodec-python`` (a separate venv: PyPI's torchcodec wants its own torch); its times are
  taken there, around the decode alone;
- ``decord``: ``VideoReader(path).get_batch``;
- ``ffmpeg``: the FFmpeg command line with a ``select`` filter on the frame number, rawvideo RGB
  out through a pipe (CPU time: the child's).

Every peer is given the same indices, those of the reference: a full sequential decode of the
main stream on one thread (PyAV), which ends at a packet the decoder rejects. Its exactness is
``exact`` (every frame equal, pixel for pixel), ``pixels`` (each the right frame, converted to RGB
differently: the largest difference is shown), ``WRONG k/n`` (k frames are nearer another frame of
the reference), or the error it raised.

Each shape is written into a temporary folder (``--root`` keeps them for the next run): clips like
BQA's (5-10 s, 25 fps, 360p-720p, B-frames or not, one keyframe), the messy shapes of
:mod:`builders.testing.corpus`, and the candidates where a peer may win (cuts, MJPEG and VFR AVI,
VP8 with alternate references, 3-frame files, 60 s of 1080p, old x264 builds, a damaged file).
Peers are alternated within a round, rounds repeated (``--repeat`` at least, more up to
``--max-repeat`` while a case has taken under ``--seconds``), and each figure is the minimum over
rounds, with CPU time beside wall time. Each peer shows its wall ratio (its minimum over ours';
above 1: ours is faster) and its CPU ratio; ``noise`` is ours' spread in the same run ((median -
min) / min), and a peer is marked ``<`` only where it is faster than ours beyond both its own
spread and ours: a ratio within that is a tie on this machine at this moment. On a loaded machine
the CPU ratios are the steady figures (wall minima wait on the scheduler).

    python benchmarks/frames.py [--repeat 5] [--max-repeat 15] [--seconds 20] [--only TEXT]
                                [--modes 16,fps1] [--root DIR] [--torchcodec-python PATH] [--json F]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from builders.testing.clips import write_clip
from builders.testing.corpus import concatenate, corrupt_packet, patch_x264_build, remux, write_encoded
from builders.video.index import fps_indices, uniform_indices
from builders.video.sampler import ClipReader, available_cpus, sample_frames

try:
    import decord
except ImportError:  # optional peer
    decord = None
FFMPEG = shutil.which("ffmpeg")
TORCHCODEC_PEER = Path(__file__).with_name("torchcodec_peer.py")

# name -> how to write it (folder -> path). BQA-like clips first, then the shapes users have.
SIZES = {"360p": (640, 360), "480p": (854, 480), "720p": (1280, 720), "1080p": (1920, 1080)}


def _clip(size: str, seconds: int, gop: int, bframes: int, **kw) -> Callable[[Path], Path]:
    width, height = SIZES[size]
    return lambda folder: write_clip(
        folder / "clip.mp4", num_frames=25 * seconds, width=width, height=height, gop=gop, bframes=bframes,
        pattern="pan", seed=seconds + gop, **kw,
    )  # fmt: skip


def _encoded(name: str, **kw) -> Callable[[Path], Path]:
    return lambda folder: Path(write_encoded(folder / name, width=854, height=480, num_frames=200, **kw))


def _cut(fmt: str, suffix: str, open_gop: bool) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        params = "keyint=50:min-keyint=50:scenecut=0:bframes=2:b-adapt=0" + (
            ":open-gop=1" if open_gop else ""
        )
        whole = write_encoded(folder / "whole.mp4", format="mp4", width=854, height=480, num_frames=250,
                              bframes=2, gop=50, options={"x264-params": params})  # fmt: skip
        return remux(whole, folder / f"cut{suffix}", format=fmt, keyframe=1, after=17)

    return write


def _ts_splice(folder: Path) -> Path:
    half = dict(width=854, height=480, num_frames=100, gop=50, bframes=2)
    first = write_encoded(io.BytesIO(), format="mpegts", **half).getvalue()
    second = write_encoded(io.BytesIO(), format="mpegts", first_number=100, seed=1, **half).getvalue()
    return concatenate([first, second], folder / "splice.ts")


def _hevc_cra(folder: Path) -> Path:
    params = "keyint=24:min-keyint=24:open-gop=1:bframes=3:scenecut=0:log-level=error"
    hevc = write_encoded(folder / "hevc.mp4", format="mp4", codec="libx265", width=854, height=480,
                         num_frames=200, options={"x265-params": params})  # fmt: skip
    return remux(hevc, folder / "cra.mkv", format="matroska", keyframe=2)


def _old_x264(folder: Path) -> Path:
    # A film-like 640x272 High-profile clip whose SEI announces build 148 (libavcodec changes no pixel).
    clip = write_clip(
        folder / "new.mp4", num_frames=500, width=640, height=272, gop=50, bframes=3, pattern="pan"
    )
    return patch_x264_build(clip, folder / "old148.mp4", 148)


def _old_x264_lossless(folder: Path) -> Path:
    clip = write_encoded(folder / "ll.mp4", format="mp4", pix_fmt="yuv444p", width=640, height=272, gop=25,
                         bframes=2, num_frames=150, options={"x264-params": "qp=0"})  # fmt: skip
    return patch_x264_build(clip, folder / "ll142.mp4", 142)


def _damaged(folder: Path) -> Path:
    clip = write_clip(folder / "clip.mp4", num_frames=50, fps=10, width=1280, height=720, gop=250, bframes=3)
    return corrupt_packet(clip, folder / "corrupted.mp4", 30)


SHAPES: dict[str, Callable[[Path], Path]] = {
    "720p 10s gop50 B2": _clip("720p", 10, 50, 2),
    "720p 10s gop50 noB": _clip("720p", 10, 50, 0),
    "480p 8s gop25 B2": _clip("480p", 8, 25, 2),
    "360p 5s 1key B2": _clip("360p", 5, 10_000, 2),
    "1080p 20s gop50 B2": _clip("1080p", 20, 50, 2),
    "1080p 60s gop250 B2": _clip("1080p", 60, 250, 2),
    "3 frames 360p": lambda folder: write_clip(folder / "three.mp4", num_frames=3, width=640, height=360),
    "cut midGOP MP4": _cut("mp4", ".mp4", open_gop=False),
    "cut midGOP MKV": _cut("matroska", ".mkv", open_gop=False),
    "cut open-GOP MP4": _cut("mp4", ".mp4", open_gop=True),
    "intra refresh MP4": _encoded("ir.mp4", format="mp4", gop=50, options={"x264-params": "intra-refresh=1"}),
    "HEVC CRA cut MKV": _hevc_cra,
    "AVI H.264 B2": _encoded("clip.avi", format="avi", gop=50, bframes=2),
    "AVI MJPEG": _encoded("mjpeg.avi", format="avi", codec="mjpeg", pix_fmt="yuvj420p"),
    "AVI VFR MPEG-4": _encoded("vfr.avi", format="avi", codec="mpeg4", skip=(10, 11, 40, 99, 150)),
    "VP8 alt-ref WebM": _encoded(
        "vp8.webm",
        format="webm",
        codec="libvpx",
        gop=50,
        options={"auto-alt-ref": "1", "lag-in-frames": "16"},
    ),  # fmt: skip
    "raw H.264 B2": _encoded("clip.h264", format="h264", gop=50, bframes=2),
    "TS splice B2": _ts_splice,
    "old x264 148 High 640x272": _old_x264,
    "old x264 142 lossless 4:4:4": _old_x264_lossless,
    "damaged (decord corrupted.mp4)": _damaged,
}


@dataclass
class Reference:
    """What a one-thread full decode gives: the frame count, frame times, and the frames kept."""

    stream: int
    count: int
    times: list[Fraction]
    frames: dict[int, np.ndarray]  # wanted frames and their neighbours


def main_stream(container: av.container.InputContainer) -> av.VideoStream:
    return next(s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic)


def reference(path: Path, keep: Callable[[int, list[Fraction]], set[int]]) -> Reference:
    """Decode twice on one thread: once to count (and time) the frames, once to keep those asked for."""

    def decode(deliver: Callable[[int, av.VideoFrame], None]) -> int:
        count = 0
        with av.open(str(path)) as container:
            stream = main_stream(container)
            stream.codec_context.thread_type, stream.codec_context.thread_count = "NONE", 1
            decoder = stream.codec_context
            for packet in container.demux(stream):
                try:
                    frames = decoder.decode(packet) if packet.size else []
                except av.FFmpegError:
                    break
                for frame in frames:
                    deliver(count, frame)
                    count += 1
            for frame in decoder.decode(None):
                deliver(count, frame)
                count += 1
        return count

    pts: list[int | None] = []
    first: list[tuple[int, int, Fraction, int]] = []

    def note(i: int, frame: av.VideoFrame) -> None:
        pts.append(frame.pts)
        if not first:
            first.append((frame.width, frame.height, frame.time_base, i))

    count = decode(note)
    base = first[0][2] or Fraction(1, 25)
    if None not in pts and len(set(pts)) == len(pts):
        times = [(p - min(pts)) * base for p in sorted(pts)]
    else:
        times = [Fraction(i, 25) for i in range(count)]
    kept = keep(count, times)
    width, height = first[0][:2]
    frames: dict[int, np.ndarray] = {}

    def store(i: int, frame: av.VideoFrame) -> None:
        if i in kept:
            same = (frame.width, frame.height) == (width, height)
            frames[i] = (frame if same else frame.reformat(width=width, height=height)).to_ndarray(
                format="rgb24"
            )

    decode(store)
    with av.open(str(path)) as container:
        index = main_stream(container).index
    return Reference(index, count, times, frames)


# -- the peers -----------------------------------------------------------------------------------


def run_ours(path: Path, wanted: list[int], mode: str) -> np.ndarray:
    if mode.startswith("fps"):
        return sample_frames(path, fps=float(mode[3:])).frames
    return sample_frames(path, num_frames=len(wanted)).frames  # all of them, where there are fewer


def run_pyav(path: Path, wanted: list[int], mode: str) -> np.ndarray:
    with av.open(str(path)) as container:
        stream = main_stream(container)
        stream.thread_type = "AUTO"
        targets, out, last = set(wanted), {}, max(wanted)
        for i, frame in enumerate(container.decode(stream)):
            if i in targets:
                out[i] = frame.to_ndarray(format="rgb24")
            if i >= last:
                break
    return np.stack([out[i] for i in wanted])


@dataclass
class Measured:
    """Frames with the wall and CPU seconds their peer measured itself (one in another process)."""

    frames: np.ndarray
    wall: float
    cpu: float


class TorchcodecProcess:
    """``benchmarks/torchcodec_peer.py`` under ``python``, started once (importing torch takes
    seconds): each call sends one task and reads back the frames and the peer's own times."""

    def __init__(self, python: str) -> None:
        self.process = subprocess.Popen(
            [python, str(TORCHCODEC_PEER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        line = self.process.stdout.readline()
        if not line:
            error = self.process.stderr.read().decode(errors="replace").strip().splitlines()
            raise RuntimeError(error[-1] if error else f"{python} {TORCHCODEC_PEER.name} exited")
        self.versions = json.loads(line)

    def run(self, seek_mode: str, threads: int) -> Callable[[Path, list[int], str], Measured]:
        def run(path: Path, wanted: list[int], mode: str) -> Measured:
            with av.open(str(path)) as container:
                stream = main_stream(container).index
            task = {"path": str(path), "stream": stream, "indices": wanted, "seek_mode": seek_mode,
                    "threads": threads}  # fmt: skip
            self.process.stdin.write(json.dumps(task).encode() + b"\n")
            self.process.stdin.flush()
            answer = json.loads(self.process.stdout.readline())
            if "error" in answer:
                raise RuntimeError(answer["error"])
            shape = answer["shape"]
            data = self.process.stdout.read(int(np.prod(shape)))
            return Measured(np.frombuffer(data, np.uint8).reshape(shape), answer["wall"], answer["cpu"])

        return run

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def run_decord(path: Path, wanted: list[int], mode: str) -> np.ndarray:
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=0)
    return reader.get_batch(wanted).asnumpy()


def run_ffmpeg(path: Path, wanted: list[int], mode: str) -> np.ndarray:
    with av.open(str(path)) as container:
        stream = main_stream(container)
        width, height, index = stream.codec_context.width, stream.codec_context.height, stream.index
    unique = sorted(set(wanted))
    select = "+".join(f"eq(n\\,{i})" for i in unique)
    command = [FFMPEG, "-v", "error", "-nostdin", "-i", str(path), "-map", f"0:{index}", "-vf", f"select='{select}'",
               "-fps_mode", "passthrough", "-frames:v", str(len(unique)), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]  # fmt: skip
    out = subprocess.run(command, capture_output=True, check=True).stdout
    frames = np.frombuffer(out, np.uint8)
    if frames.size != len(unique) * height * width * 3:
        raise ValueError(f"{frames.size // (height * width * 3)} frames out of {len(unique)}")
    frames = frames.reshape(len(unique), height, width, 3)
    return np.stack([frames[unique.index(i)] for i in wanted])


Peer = Callable[[Path, list[int], str], "np.ndarray | Measured"]


def peers(
    torchcodec_python: str | None,
) -> tuple[dict[str, Peer], list[str], list[str], TorchcodecProcess | None]:
    """The peers that run here, those that do not (and why), the versions run, the torchcodec process."""
    found: dict[str, Peer] = {"ours": run_ours, "pyav-seq": run_pyav}
    missing, versions = [], [f"PyAV {av.__version__} (FFmpeg {av.ffmpeg_version_info})"]
    python = sys.executable if importlib.util.find_spec("torchcodec") else torchcodec_python
    tc = None
    if python:
        try:
            tc = TorchcodecProcess(python)
        except (OSError, RuntimeError, ValueError) as err:
            missing.append(f"torchcodec ({python}: {err})")
        else:
            found["tc-exact"], found["tc-approx"] = tc.run("exact", 1), tc.run("approximate", 1)
            found["tc-approx-mt"] = tc.run("approximate", 0)
            versions.append(f"torchcodec {tc.versions['torchcodec']} (torch {tc.versions['torch']})")
    else:
        missing.append("torchcodec (not importable here: --torchcodec-python PATH of a venv that has it)")
    if decord is not None:
        found["decord"] = run_decord
        versions.append(f"decord {decord.__version__}")
    else:
        missing.append("decord (not installed: pip install '.[bench]')")
    if FFMPEG:
        found["ffmpeg"] = run_ffmpeg
        versions.append(
            subprocess.run([FFMPEG, "-version"], capture_output=True, text=True).stdout.split("\n")[0]
        )
    else:
        missing.append("ffmpeg (no ffmpeg on PATH)")
    return found, missing, versions, tc


def exactness(got: np.ndarray, wanted: list[int], ref: Reference) -> str:
    if got.shape[0] != len(wanted) or got.shape[1:] != ref.frames[wanted[0]].shape:
        return f"shape {tuple(got.shape)}"
    if all(np.array_equal(got[k], ref.frames[i]) for k, i in enumerate(wanted)):
        return "exact"
    wrong, largest = 0, 0
    for k, i in enumerate(wanted):
        distance = {j: np.abs(got[k].astype(np.int16) - f).mean() for j, f in ref.frames.items()}
        if min(distance, key=distance.get) != i and distance[i] > min(distance.values()):
            wrong += 1
        largest = max(largest, int(np.abs(got[k].astype(np.int16) - ref.frames[i]).max()))
    return f"WRONG {wrong}/{len(wanted)}" if wrong else f"pixels (max {largest})"


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn`` (this process's threads plus any child it waited for), or
    those it measured itself (:class:`Measured`)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if isinstance(result, Measured):
        return result.wall, result.cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, cpu + (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)


def wanted_of(mode: str, ref_count: int, times: list[Fraction]) -> list[int]:
    if mode.startswith("fps"):
        return fps_indices(times, float(mode[3:]))
    return uniform_indices(ref_count, min(int(mode), ref_count))


def spread(runs: list[tuple[float, float]]) -> float:
    """(median - min) / min of the wall times: how far one run strays on this machine now."""
    best = min(w for w, _ in runs)
    return (statistics.median(w for w, _ in runs) - best) / best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="rounds at least (peers alternated in each); minima reported"
    )
    parser.add_argument(
        "--max-repeat",
        type=int,
        default=15,
        help="rounds at most: more while a case has taken under --seconds",
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="time a case may take in extra rounds")
    parser.add_argument("--only", help="shapes whose name contains this text (comma-separated: any of them)")
    parser.add_argument(
        "--modes", default="16,fps1", help="16 (uniform frames) or fps1 (per second), comma-separated"
    )
    parser.add_argument(
        "--root", type=Path, help="keep the written shapes here (default: a temporary folder)"
    )
    parser.add_argument(
        "--torchcodec-python",
        default=os.environ.get("VQABENCH_TORCHCODEC_PYTHON"),
        help="a Python with torchcodec, where this one has none (default: $VQABENCH_TORCHCODEC_PYTHON)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    methods, missing, versions, tc = peers(args.torchcodec_python)
    modes = args.modes.split(",")
    others = [m for m in methods if m != "ours"]
    print(f"{available_cpus()} CPUs, load {os.getloadavg()[0]:.1f}; {'; '.join(versions)}"
          + (f"; not run: {'; '.join(missing)}" if missing else ""))  # fmt: skip
    print(
        "each peer: wall ratio (its min / ours; above 1: ours faster) / CPU ratio, its exactness; "
        "noise: ours' (median - min) / min; '<' marks a peer faster than ours beyond both spreads"
    )
    print(f"{'shape':30} {'mode':4} {'T':>4} {'ours ms':>7} {'cpu':>5} {'noise':>5} "
          + " ".join(f"{m:>24}" for m in others))  # fmt: skip
    root = args.root or Path(tempfile.mkdtemp(prefix="frames-bench-"))
    failed = False
    figures: list[dict] = []
    try:
        for name, write in SHAPES.items():
            if args.only and not any(part in name for part in args.only.split(",")):
                continue
            folder = root / name.replace(" ", "_").replace("/", "-").replace(":", "")
            done = folder / ".done"
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                path = write(folder)
                done.write_text(path.name)
            path = folder / done.read_text()

            def keep(count: int, times: list[Fraction]) -> set[int]:
                near = set()
                for mode in modes:
                    for i in wanted_of(mode, count, times):
                        near.update(range(max(0, i - 3), min(count, i + 4)))
                return near

            ref = reference(path, keep)
            for mode in modes:
                wanted = wanted_of(mode, ref.count, ref.times)
                verdicts: dict[str, str] = {}
                for m, fn in methods.items():
                    try:
                        got = fn(path, wanted, mode)
                        verdicts[m] = exactness(got.frames if isinstance(got, Measured) else got, wanted, ref)
                    except Exception as err:
                        verdicts[m] = f"error: {type(err).__name__}: {str(err).splitlines()[0][:120]}"
                with ClipReader(path) as reader:
                    strategy = reader.strategy(wanted) if reader.num_frames == ref.count else "?"
                if verdicts["ours"] != "exact":
                    failed = True
                runs: dict[str, list[tuple[float, float]]] = {
                    m: [] for m in methods if not verdicts[m].startswith("error")
                }
                order, began, round_ = list(runs), time.perf_counter(), 0
                # Alternated, each round starting one peer later; short cases get more rounds (their
                # minima need them on a loaded machine), long ones --repeat.
                while round_ < args.repeat or (
                    round_ < args.max_repeat and time.perf_counter() - began < args.seconds
                ):
                    for m in order[round_ % len(order) :] + order[: round_ % len(order)]:
                        runs[m].append(timed(lambda fn=methods[m], p=path, w=wanted, o=mode: fn(p, w, o)))
                    round_ += 1
                ours_wall = min(w for w, _ in runs["ours"])
                ours_cpu = min(c for _, c in runs["ours"])
                noise = spread(runs["ours"])
                row = {"shape": name, "mode": mode, "frames": ref.count, "wanted": len(wanted), "strategy": strategy,
                       "noise": noise, "rounds": round_, "load": os.getloadavg()[0], "peers": {}}  # fmt: skip
                cells = []
                for m in methods:
                    if m not in runs:
                        row["peers"][m] = {"exactness": verdicts[m]}
                        cells.append(f"{'error':>24}")
                        continue
                    wall, cpu = min(w for w, _ in runs[m]), min(c for _, c in runs[m])
                    faster = m != "ours" and wall * (1 + max(noise, spread(runs[m]))) < ours_wall
                    row["peers"][m] = {"wall": wall, "cpu": cpu, "spread": spread(runs[m]),
                                       "exactness": verdicts[m], "faster": faster}  # fmt: skip
                    if m != "ours":
                        mark = "<" if faster else " "
                        cells.append(
                            f"{mark}{wall / ours_wall:5.2f}/{cpu / ours_cpu:4.2f} {verdicts[m][:12]:>12}"
                        )
                figures.append(row)
                print(f"{name[:30]:30} {mode:4} {ref.count:4} {ours_wall * 1000:7.1f} {ours_cpu * 1000:5.0f} "
                      f"{noise:5.2f} " + " ".join(cells) + f"  [{strategy}, ours {verdicts['ours']}]", flush=True)  # fmt: skip
                for m in methods:
                    if m not in runs:
                        print(f"    {m}: {verdicts[m]}")
    finally:
        if tc is not None:
            tc.close()
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)
        if args.json:
            args.json.write_text(
                json.dumps({"versions": versions, "missing": missing, "rows": figures}, indent=1)
            )
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", str(available_cpus()))
    sys.exit(main())
