"""Time opening a Hub-layout split with :mod:`builders.hub.splits` against ``load_dataset`` on it.

The folder: the bundled BQA sample, rebuilt offline, its clips repeated into one ``test`` split of
``--rows`` rows (BQA's test split has 1,443) and written with ``write_hub_folder`` (real Parquet,
real MP4 bytes). Each method opens the split, reads the runner's text columns, then every video cell
as ``{"path", "bytes"}`` in order (what an evaluation run does):

- ``ours``: :func:`builders.hub.splits.read_hub_folder` (Parquet read in place, nothing written);
- ``load_dataset``: ``datasets.load_dataset(folder, split=...)`` into a fresh temporary cache that
  is removed afterwards (what the runners did, minus the leak), videos cast to ``Video(decode=False)``.

Printed per method: the median seconds of ``--repeat`` runs (methods interleaved) for the text rows
and for text + every video, the bytes each open writes to disk, and ``speedup`` = load_dataset / ours.
Run: ``python benchmarks/hub_splits.py [--rows 1443] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import datasets

from builders.demo.samples import rebuild_bqa
from builders.hub.layout import write_hub_folder
from builders.hub.splits import read_hub_folder

TEXT = ["id", "question", "choices", "answer", "difficulty", "gender", "age", "ethnicity"]


def make_folder(root: Path, rows: int) -> Path:
    sample = rebuild_bqa(root / "work", root / "sample", root / "cache")
    base = sample.loaded["default"]["train"].cast_column("video", datasets.Video(decode=False))
    picks = [i % len(base) for i in range(rows)]
    repeated = base.select(picks).map(lambda row, i: {"id": f"{row['id']}-{i}"}, with_indices=True)
    repeated = repeated.cast_column("video", datasets.Video())
    return write_hub_folder(
        root / "hub",
        {"default": datasets.DatasetDict(test=repeated)},
        default_config="default",
        card_body="bench",
    )


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def ours(folder: Path, videos: bool) -> int:
    split = read_hub_folder(folder).split("test")
    rows = split.rows(TEXT)
    if videos:
        for i in range(len(rows)):
            assert split.cell(i, "video")["bytes"]
    return 0  # nothing written


def with_load_dataset(folder: Path, videos: bool) -> int:
    cache = Path(tempfile.mkdtemp(prefix="bench-hub-"))
    try:
        ds = datasets.load_dataset(str(folder), split="test", cache_dir=str(cache))
        rows = ds.select_columns(TEXT).to_list()
        if videos:
            media = ds.select_columns(["video"]).cast_column("video", datasets.Video(decode=False))
            for i in range(len(rows)):
                assert media[i]["video"]["bytes"]
        return folder_bytes(cache)
    finally:
        shutil.rmtree(cache)


def measure(run: Callable[[Path, bool], int], folder: Path, videos: bool) -> tuple[float, int]:
    start = time.perf_counter()
    written = run(folder, videos)
    return time.perf_counter() - start, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1443)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    datasets.disable_progress_bars()
    methods = {"ours": ours, "load_dataset": with_load_dataset}
    with tempfile.TemporaryDirectory(prefix="bench-hub-splits-") as tmp:
        folder = make_folder(Path(tmp), args.rows)
        print(f"{args.rows} rows, {folder_bytes(folder / 'data') / 1e6:.1f} MB of Parquet")
        for videos in (False, True):
            times: dict[str, list[float]] = {name: [] for name in methods}
            written: dict[str, int] = {}
            for _ in range(args.repeat):
                for name, run in methods.items():
                    seconds, written[name] = measure(run, folder, videos)
                    times[name].append(seconds)
            median = {name: statistics.median(t) for name, t in times.items()}
            what = "text + every video" if videos else "text columns"
            for name in methods:
                print(f"{what:>20}  {name:<12} {median[name]:8.3f} s   writes {written[name] / 1e6:7.1f} MB")
            print(f"{what:>20}  speedup {median['load_dataset'] / median['ours']:.1f}x")


if __name__ == "__main__":
    main()
