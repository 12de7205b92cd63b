"""Evaluation runners and a build step against the floor the endpoint and the CPUs allow.

A synthetic split like BQA's: ``--clips`` H.264 clips (default 300; BQA's test split has 1,443),
5-10 s at 25 fps, 360p to 720p, B-frames, written once with :func:`builders.testing.clips.write_clip`
under ``--root`` (kept for the next run). The local chat server (``ServerProcess`` of
``benchmarks/llm.py``, in its own process) answers every request after ``L`` seconds.

Measured in the same run, each case in a fresh child process (so its peak RSS is its own):

- ``decode``: the CPU seconds of sampling and JPEG-encoding every clip's frames one after another
  (16 frames for BQA, 8 for MarineLife). The floor of a case is ``max(N*L/c, decode CPU / cores)``.
  On a shared machine the cores are not all ours: each case is also shown against
  ``max(N*L/c, wall time of the same decoding on a pool of cores threads)``, measured just before.
- ``shared``: the BQA runner on ``--shared-rows`` rows (default 160) over 3 clips of real length
  (5-10 s, 360p-720p: BoLD clips with several annotated persons), 16 frames, L=1 s, c=8, against
  its floor N*L/c (each clip is decoded once, in process: goal within 1.25x), alternated with the
  same run on frames decoded before its clock starts (what the client, the server and the
  machine's load cost, decoding aside); minima of ``--shared-repeat`` runs;
- ``bqa``: :func:`builders.evaluation.bqa.evaluate` (16 frames) at each ``L, c`` of ``--cases``;
  then the same work folder again (a finished run: 0 requests) and with its step records removed
  (every reply from the cache: 0 requests).
- ``marine``: :func:`builders.evaluation.marinelife.evaluate` (8 frames), ``--questions`` QA
  records per video on the first ``--marine-videos`` clips.
- ``build``: the BQA build's STEP4 (:func:`builders.pipelines.bqa.step4_difficulty.run_difficulty`)
  over every clip.
- ``memory``: the BQA runner from an exported Hub-layout folder against the same clips as files,
  at the full split and at a third of it (peak RSS must not grow with the split).
- ``pool``: preparing every clip's 16 frames as a step does, ``cores`` prepare threads decoding in
  themselves against the same threads handing clips to the step's worker processes
  (:func:`builders.runs.frames.decoding_processes`; a step uses them past its first ``PROCESS_MIN_CLIPS`` clips).

Peak RSS is the case process's own; the decode workers' (and their forkserver's) summed PSS, sampled
every 0.2 s, is shown beside it.
- ``fsync``: ``--records`` step records (16,080: a MarineLife eval) added one fsync each against
  group commits (:meth:`builders.runs.steps.StepRecords.group_commits`), both timed in full.
- ``scale`` (issue 41, the client's cost at the papers' shapes): the BQA runner on BQA's test-split
  shape (``--bqa-rows`` rows over ``--bqa-clips`` clips, default 1,443 over 567, 16 frames, the
  rows of one clip next to each other) at L=0.3 s, c=64, against its floor N*L/c; then the
  MarineLife runner (8 frames, 8 questions a video) at ``--marine-rows`` row counts: wall/floor, CPU
  per row (this process and its decode workers), peak RSS, so that memory per row shows flat.
- ``export``: ``bqa export`` of a BQA-shaped work folder (``--export-rows`` rows over as many clips
  as the split has, every clip its own file as in a release) timed, its peak RSS, and the clip
  files it opened (:func:`builders.video.source.counting_opens`; on code without it, the opener
  wrapped).

Run ``scale``/``export`` on two checkouts for a before/after: ``PYTHONPATH=/path/to/old python
benchmarks/evaluate.py --only scale,export`` (the script runs on either).

Targets (issue 16): L=0.2 s, c=32 within 1.3x of the floor; L=3 s, c=8 within 1.1x; c=32 faster
than c=8 where N*L/c dominates; reruns send 0 requests.

    python benchmarks/evaluate.py [--clips 300] [--root /tmp/vqabench-eval] [--only bqa,marine]
    python benchmarks/evaluate.py --quick      # 40 small clips, a few minutes on 2 cores
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import resource
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from llm import ServerProcess  # benchmarks/llm.py: a ChatServer in a child process

SIZES = ((640, 360), (854, 480), (1280, 720))
EMOTIONS = ("Happiness", "Pleasure", "Anger", "Sadness")
SECTIONS = ("decode", "shared", "bqa", "marine", "build", "memory", "pool", "fsync", "scale", "export")


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# -- the synthetic split ------------------------------------------------------------------------


def make_clips(root: Path, count: int, sizes: tuple[tuple[int, int], ...], preset: str) -> list[Path]:
    from builders.testing.clips import write_clip

    folder = root / "clips"
    paths = []
    for i in range(count):
        path = folder / f"clip{i:04d}.mp4"
        if not path.exists():
            rng = random.Random(i)
            width, height = sizes[i % len(sizes)]
            write_clip(
                path, num_frames=rng.randint(125, 250), fps=25, width=width, height=height,
                gop=50, bframes=2, seed=i, preset=preset,
            )  # fmt: skip
        paths.append(path)
    return paths


def bqa_rows(paths: list[Path]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"clip{i:04d}",
            "question": f"What emotion does person {i + 1} in the video show most clearly?",  # one request each
            "choices": [EMOTIONS[(i + k) % 4] for k in range(4)],
            "answer": EMOTIONS[i % 4],
            "difficulty": ("Easy", "Hard")[i % 2],
            "gender": "Female",
            "age": "Adult",
            "ethnicity": "White",
            # The release's other text columns, which the runner reads but does not use.
            "answer_group": EMOTIONS[i % 4],
            "choice_groups": [EMOTIONS[(i + k) % 4] for k in range(4)],
            "emotions": [0.5] * 26,
            "valence": 5.0,
            "arousal": 5.0,
            "dominance": 5.0,
            "annotation_confidence": 0.5,
            "source": {"film_id": f"film{i % 7}"},
            "provenance": {"question": "bench"},
        }
        for i in range(len(paths))
    ]


def make_hub_folder(root: Path, paths: list[Path]) -> Path:
    """The clips and rows as a one-split Hub-layout folder (video bytes embedded, like a release)."""
    import datasets

    from builders.hub import layout
    from builders.hub.layout import write_hub_folder

    # Named by the writer's row-group rule too: a folder kept from an older writer is not reused.
    folder = root / f"hub-{len(paths)}-groups-{layout.MEDIA_ROW_GROUP_ROWS}-{layout.MEDIA_ROW_GROUP_BYTES}"
    if not (folder / "README.md").exists():
        rows = bqa_rows(paths)
        table = {k: [r[k] for r in rows] for k in rows[0]}
        test = datasets.Dataset.from_dict({**table, "video": [str(p) for p in paths]})
        test = test.cast_column("video", datasets.Video())
        write_hub_folder(folder, {"default": datasets.DatasetDict(test=test)}, default_config="default",
                         card_body="benchmark")  # fmt: skip
    return folder


# -- one case, in a child process ----------------------------------------------------------------


def _client(url: str, concurrency: int, cache: Path):
    from builders.llm import LLMClient, LLMSettings

    settings = LLMSettings(
        model="bench", base_url=url, api_key_env=None, max_concurrency=concurrency, progress=False
    )
    return LLMClient(settings, cache_path=cache)


def _export_case(case: dict[str, Any]) -> dict[str, Any]:
    """``bqa export`` of the work folder ``case["export"]``, counting the clip files opened."""
    from collections import Counter

    from bqa.export import export_release
    from builders.video import source

    counting = getattr(source, "counting_opens", None)
    if counting is not None:
        with counting() as opened:
            export_release(case["export"], Path(case["work"]) / "hub", self_bleu=False,
                           cache_dir=Path(case["work"]) / "cache")  # fmt: skip
    else:  # code from before the hook: the one opener, wrapped
        opened, original = Counter(), source.VideoSource.open_container

        def open_container(self):  # type: ignore[no-untyped-def]
            opened[self.name] += 1
            return original(self)

        source.VideoSource.open_container = open_container  # type: ignore[method-assign]
        export_release(case["export"], Path(case["work"]) / "hub", self_bleu=False,
                       cache_dir=Path(case["work"]) / "cache")  # fmt: skip
    return {"opens": sum(opened.values()), "clips_opened": len(opened)}


def make_export_work(root: Path, rows: int, paths: list[Path]) -> Path:
    """A BQA work folder of ``rows`` records made from the bundled BoLD sample's annotations, each with
    a clip file of its own (a copy of one of ``paths``), split 6:2:2 by film."""
    import dataclasses

    from bqa.bold import read_bold
    from bqa.candidates import extract_candidates
    from bqa.records import Provenance, StepProvenance
    from bqa.sample import sample_root
    from bqa.workfolder import ReleaseMeta, make_record, write_release

    work = root / f"export-work-{rows}"
    if (work / "release" / "meta.json").exists():
        return work
    provenance = Provenance(*(StepProvenance("bench", s, "1") for s in ("question", "filter", "difficulty")))
    annotations = read_bold(sample_root()).annotations
    splits: dict[str, list[Any]] = {"train": [], "validation": [], "test": []}
    for i in range(rows):
        a = annotations[i % len(annotations)]
        record = make_record(a, extract_candidates(a.emotions, key=a.id, seed=5), question=f"How does person {i} feel?",
                             difficulty=("Easy", "Hard")[i % 2], provenance=provenance)  # fmt: skip
        film = f"film{i % 10}"
        record = dataclasses.replace(record, id=f"r{i:05d}", clip=f"clips/r{i:05d}.mp4",
                                     source=dataclasses.replace(record.source, film_id=film))  # fmt: skip
        clip = work / record.clip
        clip.parent.mkdir(parents=True, exist_ok=True)
        if not clip.exists():
            shutil.copyfile(paths[i % len(paths)], clip)
        splits[(("train",) * 6 + ("validation",) * 2 + ("test",) * 2)[i % 10]].append(record)
    write_release(work, splits, ReleaseMeta(seed=5))
    return work


def _bqa_data(case: dict[str, Any]):
    from bqa.data import BQASplitData, open_split
    from builders.hub.split_data import by_id

    paths = [Path(p) for p in case["paths"]]
    if case.get("hub"):
        return open_split(case["hub"], "test")
    rows = bqa_rows(paths)
    clip = {row["id"]: path for row, path in zip(rows, paths, strict=True)}
    return BQASplitData("bench", "test", rows, by_id(rows, "bench"), clip.__getitem__)


def _marine_data(case: dict[str, Any]):
    from builders.hub.split_data import SplitData

    paths = [Path(p) for p in case["paths"]]
    videos, rows = {}, []
    for v in range(len(paths)):
        vid = f"v{v:04d}"
        videos[vid] = {"id": vid, "camera_kind": ("static", "moving")[v % 2]}
        for q in range(case["questions"]):
            rows.append(
                {
                    "question_id": f"{vid}-q{q}",
                    "id": vid,
                    "type": "central_object",
                    "question_format": "multiple_choice",
                    "question": f"Which animal is central in video {vid}? ({q})",
                    "prompt": f"Which animal is central in video {vid}? ({q})\nA. fish\nB. crab\nC. ray\nD. eel",
                    "options": [
                        {"label": c, "text": t}
                        for c, t in zip("ABCD", ("fish", "crab", "ray", "eel"), strict=True)
                    ],
                    "answer": "A",
                    "answer_text": "fish",
                    "evidence_attributes": {"central_object": "fish"},
                }
            )
    by_index = {f"v{v:04d}": p for v, p in enumerate(paths)}
    return SplitData("bench", "test", rows, videos, by_index.__getitem__)


def _descendants_rss_mb() -> float:
    """Proportional resident memory (MB) of this process's descendants (the decode workers, their forkserver)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:  # PSS: pages the forked workers share with the forkserver are counted once
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
            total += next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


class _PeakOfWorkers:
    """Samples the descendants' summed RSS every 0.2 s while a case runs; ``peak`` in MB."""

    def __init__(self) -> None:
        self.peak, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, _descendants_rss_mb())

    def __enter__(self) -> _PeakOfWorkers:
        if Path("/proc/self/stat").exists():
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()


def _run_case(case: dict[str, Any]) -> dict[str, Any]:
    with _PeakOfWorkers() as workers:
        result = _run_case_body(case)
    result["workers_rss_mb"] = workers.peak
    return result


def _run_case_body(case: dict[str, Any]) -> dict[str, Any]:
    work = Path(case["work"])
    images = None
    if case.get("predecoded"):  # every clip's frames decoded before the clock starts
        from builders.runs.frames import FrameImages
        from builders.video.frame_spec import FrameSpec

        images = FrameImages()
        for path in dict.fromkeys(case["paths"]):
            images(path, FrameSpec(fps=None, num_frames=case["frames"]))
    started = time.perf_counter()
    cpu = time.process_time()
    children = os.times()
    result: dict[str, Any] = {}
    if case["kind"] == "decode":
        from builders.video.frame_spec import FrameSpec

        spec = FrameSpec(fps=None, num_frames=case["frames"])
        for path in case["paths"]:
            spec.data_urls(path)
    elif case["kind"] in ("bqa", "marine"):
        from builders.evaluation import bqa, marinelife
        from builders.video.frame_spec import FrameSpec

        spec = FrameSpec(fps=None, num_frames=case["frames"])
        with _client(case["url"], case["c"], work / "llm-cache.sqlite") as client:
            if case["kind"] == "bqa":
                summary = bqa.evaluate(
                    _bqa_data(case), client, work, work / "predictions.jsonl", frames=spec, images_of=images
                )
            else:
                summary = marinelife.evaluate(
                    _marine_data(case), client, work, work / "predictions.jsonl", frames=spec
                )
        result["ok"] = summary.ok and summary.out is not None
    elif case["kind"] == "build":
        from builders.pipelines.bqa.step4_difficulty import run_difficulty
        from builders.video.frame_spec import FrameSpec

        clips = work / "clips"
        clips.mkdir(parents=True, exist_ok=True)
        items = []
        for row, path in zip(bqa_rows([Path(p) for p in case["paths"]]), case["paths"], strict=True):
            link = clips / f"{row['id']}.mp4"
            if not link.exists():
                link.symlink_to(path)
            items.append(
                {k: row[k] for k in ("id", "question", "choices", "answer")} | {"clip": f"clips/{link.name}"}
            )
        spec = FrameSpec(fps=None, num_frames=case["frames"])
        with _client(case["url"], case["c"], work / "llm-cache.sqlite") as client:
            failures = run_difficulty(work, items, client, spec)
        result["ok"] = not failures
    elif case["kind"] == "pool":
        from builders.video.frame_spec import FrameSpec

        spec = FrameSpec(fps=None, num_frames=case["frames"])
        if case["pool"] == "threads":  # the researcher's sampler, on a thread pool (the floor's check)
            with ThreadPoolExecutor(case["workers"]) as pool:
                for _ in pool.map(spec.data_urls, case["paths"]):
                    pass
        else:  # what a step does: its prepare threads, decoding in threads or in its worker processes
            from builders.runs.frames import decode_images, decoding_processes

            processes = decoding_processes(case["workers"]) if case["pool"] == "step processes" else None
            with processes or contextlib.nullcontext(), ThreadPoolExecutor(case["workers"]) as pool:
                for _ in pool.map(decode_images, case["paths"], [spec] * len(case["paths"])):
                    pass
    elif case["kind"] == "export":
        result.update(_export_case(case))
    result["wall"] = time.perf_counter() - started
    result["cpu"] = time.process_time() - cpu
    done = os.times()  # the decode workers, once they have exited (a step waits for them)
    result["cpu_children"] = (
        done.children_user + done.children_system - children.children_user - children.children_system
    )
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def _child(case: dict[str, Any], conn: Any) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    # Imported before the clock starts: a case measures its work, not the start-up.
    import builders.evaluation.bqa
    import builders.evaluation.marinelife
    import builders.pipelines.bqa.step4_difficulty  # noqa: F401

    try:
        conn.send(_run_case(case))
    except BaseException as err:  # report, do not hang the parent
        conn.send({"error": f"{type(err).__name__}: {err}"})


def run_case(case: dict[str, Any], server: ServerProcess | None = None) -> dict[str, Any]:
    if server is not None:
        server.reset()
        server_cpu = server.cpu()
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_child, args=(case, child))
    process.start()
    result = parent.recv()
    process.join()
    if "error" in result:
        raise RuntimeError(f"case {case['kind']} failed: {result['error']}")
    if server is not None:
        result["requests"], _, result["max_in_flight"] = server.stats()
        result["server_cpu"] = server.cpu() - server_cpu
    return result


def fsync_section(work: Path, count: int) -> dict[str, Any]:
    from builders.runs.steps import StepRecords

    record = {"raw_output": "A", "parsed_answer": "A", "usage": [700, 4], "model": "bench"}
    figures: dict[str, Any] = {"records": count}
    for mode in ("per record", "grouped"):
        records = StepRecords(work, mode.replace(" ", "-"))
        started = time.perf_counter()
        if mode == "grouped" and hasattr(records, "group_commits"):
            with records.group_commits():
                for i in range(count):
                    records.add({"id": f"q{i}", **record})
        else:
            for i in range(count):
                records.add({"id": f"q{i}", **record})
        elapsed = time.perf_counter() - started
        commits = getattr(records, "commits", count if mode == "per record" else None)
        print(f"fsync: {count} records, {mode:<10}: {elapsed:6.2f} s, {commits} fsyncs")
        figures[mode] = {"seconds": elapsed, "fsyncs": commits}
    return figures


SCALE_L, SCALE_C = 0.3, 64  # the measurement: BQA's test split at the README's concurrency


def scale_section(root: Path, args: argparse.Namespace, server: ServerProcess, fresh: Any) -> dict[str, Any]:
    """BQA's test-split shape and MarineLife's, at L=0.3 s and c=64 (module doc)."""
    clips = [str(p) for p in make_clips(root, args.bqa_clips, SIZES, args.preset)]
    n = args.bqa_rows
    rows = [clips[i * len(clips) // n] for i in range(n)]  # the rows of one clip next to each other
    figures: dict[str, Any] = {}

    def line(label: str, n: int, r: dict[str, Any]) -> dict[str, Any]:
        floor = n * SCALE_L / SCALE_C
        cpu = r["cpu"] + r["cpu_children"]
        print(f"{label:<34} N={n:<6} wall {r['wall']:7.1f} s  floor N*L/c {floor:6.1f} s  {r['wall'] / floor:5.2f}x  "
              f"CPU {1000 * cpu / n:5.1f} ms/row ({1000 * r['cpu'] / n:.1f} here + {1000 * r['cpu_children'] / n:.1f} "
              f"decode workers)  peak RSS {r['rss_mb']:6.0f} MB (+ workers {r['workers_rss_mb']:.0f})  "
              f"requests {r['requests']}")  # fmt: skip
        return {**r, "n": n, "floor": floor, "ratio": r["wall"] / floor, "cpu_per_row_ms": 1000 * cpu / n}

    case = {"kind": "bqa", "frames": 16, "paths": rows, "c": SCALE_C, "url": server.url}
    r = run_case({**case, "work": fresh("scale-bqa")}, server)
    figures["bqa"] = line(f"BQA test shape ({len(clips)} clips)", n, r)
    figures["marine"] = []
    for count in (int(x) for x in args.marine_rows.split(",")):
        videos = count // 8  # the clip files are reused: this case is the per-row cost, not decoding
        case = {"kind": "marine", "frames": 8, "paths": [clips[v % len(clips)] for v in range(videos)],
                "questions": 8, "c": SCALE_C, "url": server.url}  # fmt: skip
        r = run_case({**case, "work": fresh(f"scale-marine-{count}")}, server)
        figures["marine"].append(line(f"MarineLife shape ({videos} videos)", videos * 8, r))
    small, large = figures["marine"][0], figures["marine"][-1]
    if large["n"] > small["n"]:
        slope = (large["rss_mb"] - small["rss_mb"]) * 1024 / (large["n"] - small["n"])
        print(f"MarineLife peak RSS per extra row: {slope:.1f} KB")
        figures["marine_kb_per_row"] = slope
    return figures


# -- the report ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clips", type=int, default=300, help="clips in the split (default 300)")
    parser.add_argument(
        "--marine-videos", type=int, help="videos for the MarineLife runner (default clips/5)"
    )
    parser.add_argument(
        "--questions", type=int, default=8, help="MarineLife QA records per video (default 8)"
    )
    parser.add_argument(
        "--root", type=Path, default=Path("/tmp/vqabench-eval"), help="clips and work folders"
    )
    parser.add_argument("--cases", default="0.2:8,0.2:32,3:8,3:32", help="L:c pairs (seconds:requests)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"sections to run ({','.join(SECTIONS)})")
    parser.add_argument("--preset", default="veryfast", help="x264 preset of the clips (default veryfast)")
    parser.add_argument("--quick", action="store_true", help="40 clips of 360p-480p, cases 0.2:32 and 3:8")
    parser.add_argument("--records", type=int, default=16080, help="step records for the fsync section")
    parser.add_argument("--shared-rows", type=int, default=160, help="rows of the shared section (3 clips)")
    parser.add_argument("--shared-repeat", type=int, default=3, help="runs of the shared section (minima)")
    parser.add_argument("--bqa-rows", type=int, default=1443, help="rows of the scale section's BQA case")
    parser.add_argument("--bqa-clips", type=int, default=567, help="clips of the scale section's BQA case")
    parser.add_argument("--marine-rows", default="2000,8000",
                        help="row counts of the scale section's MarineLife cases (8 a video)")  # fmt: skip
    parser.add_argument("--export-rows", type=int, default=1000, help="rows of the export section")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    sizes = SIZES
    if args.quick:
        args.clips, sizes = min(args.clips, 40), SIZES[:2]
        if args.cases == parser.get_default("cases"):
            args.cases = "0.2:32,3:8"
    only = set(args.only.split(","))
    cases = [(float(lc.split(":")[0]), int(lc.split(":")[1])) for lc in args.cases.split(",")]
    root = args.root / ("quick" if args.quick else "full")
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    paths = [str(p) for p in make_clips(root, args.clips, sizes, args.preset)]
    n_marine = args.marine_videos or max(1, args.clips // 5)
    print(f"{len(paths)} clips ready under {root} ({time.perf_counter() - started:.0f} s); {cores()} cores")
    figures: dict[str, Any] = {"clips": len(paths), "cores": cores()}

    def fresh(name: str) -> str:
        work = root / "work" / name
        shutil.rmtree(work, ignore_errors=True)
        return str(work)

    decode, pooled = {}, {}
    for frames, subset in ((16, paths), (8, paths[:n_marine])):
        r = run_case({"kind": "decode", "frames": frames, "paths": subset, "work": fresh("decode")})
        decode[frames] = r["cpu"]
        # What the cores give right now (the machine may be shared): the same work on a thread pool.
        p = run_case({"kind": "pool", "pool": "threads", "workers": cores(), "frames": frames, "paths": subset,
                      "work": fresh("pool")})  # fmt: skip
        pooled[frames] = p["wall"]
        print(f"decode {frames} frames x {len(subset)} clips: {r['cpu']:.1f} CPU s ({r['wall']:.1f} s wall); "
              f"on {cores()} threads {p['wall']:.1f} s wall")  # fmt: skip
    figures["decode_cpu"], figures["decode_pool_wall"] = decode, pooled

    def report(label: str, n: int, latency: float, c: int, frames: int, r: dict[str, Any]) -> dict[str, Any]:
        cpu = decode[frames]
        floor = max(n * latency / c, cpu / cores())
        here = max(n * latency / c, pooled[frames])
        row = {**r, "n": n, "L": latency, "c": c, "floor": floor, "ratio": r["wall"] / floor,
               "floor_here": here, "ratio_here": r["wall"] / here}  # fmt: skip
        print(
            f"{label:<22} L={latency:<4g} c={c:<3} N={n:<5} wall {r['wall']:7.1f} s  floor {floor:6.1f} s "
            f"(N*L/c {n * latency / c:6.1f}, decode {cpu / cores():5.1f})  {row['ratio']:.2f}x  "
            f"[vs pooled decode {pooled[frames]:.1f} s: {row['ratio_here']:.2f}x]  "
            f"requests {r.get('requests', '-')}, max in flight {r.get('max_in_flight', '-')}, peak RSS {r['rss_mb']:.0f} MB, "
            f"+ decode workers {r.get('workers_rss_mb', 0):.0f} MB, CPU s: client {r['cpu']:.1f}, server {r.get('server_cpu', 0):.1f}"
        )
        return row

    latencies = sorted({latency for latency, _ in cases} | ({1.0} if "shared" in only else set())
                       | ({SCALE_L} if "scale" in only else set()))  # fmt: skip
    servers = {latency: ServerProcess(latency) for latency in latencies}
    try:
        if "shared" in only:
            three = [str(p) for p in make_clips(root / "shared", 3, SIZES, args.preset)]
            rows = [three[i % 3] for i in range(args.shared_rows)]
            case = {"kind": "bqa", "frames": 16, "paths": rows, "c": 8, "url": servers[1.0].url}
            floor = len(rows) * 1.0 / 8
            # Alternated with the same rows whose frames were decoded before the clock started: what
            # the client, the server and this machine's load cost beyond N*L/c, decoding aside.
            runs: dict[str, list[dict[str, Any]]] = {"runner": [], "predecoded": []}
            for _ in range(args.shared_repeat):
                for kind in runs:
                    work = fresh(f"shared-{kind}")
                    runs[kind].append(run_case({**case, "work": work, "predecoded": kind == "predecoded"},
                                               servers[1.0]))  # fmt: skip
            best = {kind: min(rs, key=lambda r: r["wall"]) for kind, rs in runs.items()}
            r, pre = best["runner"], best["predecoded"]
            print(f"BQA evaluate, {len(rows)} rows over 3 clips, L=1 c=8 (min of {args.shared_repeat}): wall "
                  f"{r['wall']:.1f} s, floor N*L/c {floor:.1f} s: {r['wall'] / floor:.2f}x; frames decoded "
                  f"beforehand {pre['wall']:.1f} s ({pre['wall'] / floor:.2f}x); requests {r['requests']}, max "
                  f"in flight {r['max_in_flight']}, client CPU {r['cpu']:.1f} s; all walls: "
                  + ", ".join(f"{k} {[round(x['wall'], 1) for x in rs]}" for k, rs in runs.items()))  # fmt: skip
            figures["shared"] = {**r, "n": len(rows), "floor": floor, "ratio": r["wall"] / floor,
                                 "predecoded": pre, "runs": runs}  # fmt: skip
        if "bqa" in only:
            rows = []
            for latency, c in cases:
                case = {"kind": "bqa", "frames": 16, "paths": paths, "c": c, "url": servers[latency].url}
                work = fresh(f"bqa-{latency}-{c}")
                r = run_case({**case, "work": work}, servers[latency])
                rows.append(report("BQA evaluate", len(paths), latency, c, 16, r))
            again = run_case({**case, "work": work}, servers[latency])
            print(
                f"BQA evaluate, finished work folder again: {again['requests']} requests ({again['wall']:.1f} s)"
            )
            shutil.rmtree(Path(work) / "steps")
            cached = run_case({**case, "work": work}, servers[latency])
            print(
                f"BQA evaluate, step records removed, cache kept: {cached['requests']} requests ({cached['wall']:.1f} s)"
            )
            figures["bqa"] = {
                "cases": rows,
                "rerun_requests": again["requests"],
                "cached_requests": cached["requests"],
            }
        if "marine" in only:
            rows = []
            for latency, c in cases:
                case = {"kind": "marine", "frames": 8, "paths": paths[:n_marine], "questions": args.questions,
                        "c": c, "url": servers[latency].url}  # fmt: skip
                r = run_case({**case, "work": fresh(f"marine-{latency}-{c}")}, servers[latency])
                rows.append(report("MarineLife evaluate", n_marine * args.questions, latency, c, 8, r))
            figures["marine"] = {"cases": rows}
        if "build" in only:
            rows = []
            for latency, c in cases:
                case = {"kind": "build", "frames": 16, "paths": paths, "c": c, "url": servers[latency].url}
                r = run_case({**case, "work": fresh(f"build-{latency}-{c}")}, servers[latency])
                rows.append(report("BQA build STEP4", len(paths), latency, c, 16, r))
            figures["build"] = {"cases": rows}
        if "memory" in only:
            latency, c = cases[0]
            rows = []
            for n in (len(paths) // 3, len(paths)):
                subset = paths[:n]
                for source in ("files", "hub"):
                    hub = str(make_hub_folder(root, [Path(p) for p in subset])) if source == "hub" else None
                    case = {"kind": "bqa", "frames": 16, "paths": subset, "c": c, "url": servers[latency].url,
                            "hub": hub, "work": fresh(f"memory-{source}-{n}")}  # fmt: skip
                    r = run_case(case, servers[latency])
                    print(f"memory: BQA evaluate from {source:<5} N={n:<5} peak RSS {r['rss_mb']:6.0f} MB "
                          f"+ decode workers {r['workers_rss_mb']:4.0f} MB  wall {r['wall']:.1f} s")  # fmt: skip
                    rows.append({"source": source, "n": n, **r})
            figures["memory"] = rows
        if "pool" in only:
            rows = []
            for pool in ("step threads", "step processes"):
                r = run_case({"kind": "pool", "pool": pool, "workers": cores(), "frames": 16, "paths": paths,
                              "work": fresh("pool")})  # fmt: skip
                print(f"prepare pool: {pool:<14} x{cores()}: {r['wall']:.1f} s wall for {len(paths)} clips "
                      f"({len(paths) / r['wall']:.1f} clips/s)")  # fmt: skip
                rows.append({"pool": pool, **r})
            figures["pool"] = rows
        if "fsync" in only:
            figures["fsync"] = fsync_section(Path(fresh("fsync")), args.records)
        if "scale" in only:
            figures["scale"] = scale_section(root, args, servers[SCALE_L], fresh)
        if "export" in only:
            work = make_export_work(root, args.export_rows, [Path(p) for p in paths])
            r = run_case({"kind": "export", "export": str(work), "paths": [], "work": fresh("export")})
            print(f"export: {args.export_rows} rows, {r['wall']:.1f} s, peak RSS {r['rss_mb']:.0f} MB, "
                  f"{r['opens']} clip opens of {r['clips_opened']} clip files")  # fmt: skip
            figures["export"] = {"rows": args.export_rows, **r}
    finally:
        for server in servers.values():
            server.__exit__()
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
