"""Time how long a rater's BQA page takes to load in headless Chromium, for a 100-item study.

A BQA work folder with ``--items`` test questions is written from the bundled BoLD sample (its 38
annotations, each reused under new ids, clips copied), and ``human-study make`` draws a 100-item
study and a 1-item study (the baseline, same run, same browser) from it. Each page is opened from
disk ``--repeat`` times, the two pages interleaved after a warm-up load each, with a fresh
browser profile per load; per load we read:

- ``ready``: from navigation start until the page's script has parsed its data and drawn the first
  item (``document.body.dataset.ready``), read from ``performance.now()`` in the page;
- ``load``: the Navigation Timing ``loadEventEnd``;
- ``clip``: until the first clip can play (``readyState >= 2``), from navigation start, as seen by
  polling from selenium every few ms (an upper bound);
- ``answer``: one key press (answer + next item) until the next item is drawn, in the page.

Printed: medians in ms, the 100-item / 1-item ratio, and the page's size. Needs Debian's chromium and
chromium-driver. Run: ``python benchmarks/human_study_page.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bqa.bold import read_bold
from bqa.candidates import extract_candidates
from bqa.records import Provenance, StepProvenance
from bqa.sample import sample_root
from bqa.workfolder import ReleaseMeta, clip_relpath, make_record, write_release
from builders.human_study.make import make_study
from builders.testing.browser import headless_chromium

PROVENANCE = Provenance(
    *(StepProvenance("bench", step, "1") for step in ("question", "filter", "difficulty"))
)


def write_work_folder(work: Path, n: int) -> None:
    annotations = read_bold(sample_root()).annotations
    records = []
    for k in range(n):
        a = annotations[k % len(annotations)]
        base = make_record(
            a, extract_candidates(a.emotions, key=a.id, seed=k), question="How does the person in this clip feel?",
            difficulty="Easy" if k % 2 else "Hard", difficulty_reason="right_choice" if k % 2 else "wrong_choice",
            provenance=PROVENANCE,
        )  # fmt: skip
        record = dataclasses.replace(base, id=f"{a.id}_b{k}", clip=clip_relpath(f"{a.id}_b{k}"))
        (work / record.clip).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(a.clip_path, work / record.clip)
        records.append(record)
    write_release(work, {"train": [], "validation": [], "test": records}, ReleaseMeta(seed=5))


def load_once(page: Path) -> dict[str, float]:
    """One load of ``page`` in a fresh browser profile (no saved progress, nothing cached)."""
    with headless_chromium() as driver:
        driver.get(page.resolve().as_uri())
        deadline = time.monotonic() + 30
        while True:
            state = driver.execute_script(
                "const t = performance.getEntriesByType('navigation')[0];"
                "window.__clip = window.__clip || (document.getElementById('clip').readyState >= 2 ? performance.now() : 0);"
                "return [document.body && document.body.dataset.ready === 'true', t ? t.loadEventEnd : 0,"
                " window.__clip]"
            )
            if state[0] and state[1] and state[2]:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{page} did not load in 30 s: {state}")
            time.sleep(0.005)
        ready = driver.execute_script(
            "return performance.getEntriesByName('vqabench-ready')[0]?.startTime ?? null"
        )
        answer = driver.execute_script(
            "const t0 = performance.now();"
            "document.dispatchEvent(new KeyboardEvent('keydown', {key: '1', bubbles: true}));"
            "return performance.now() - t0;"
        )
    return {"ready": ready, "load": state[1], "clip": state[2], "answer": answer}


def time_pages(pages: dict[str, Path], repeat: int) -> dict[str, dict[str, float]]:
    """Median per page of ``repeat`` loads, pages interleaved (order alternating), after one warm-up each."""
    for page in pages.values():
        load_once(page)
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in pages}
    for r in range(repeat):
        for name in list(pages)[:: 1 if r % 2 else -1]:
            samples[name].append(load_once(pages[name]))
    return {
        name: {k: statistics.median(s[k] for s in runs) for k in runs[0]} for name, runs in samples.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=120, help="test questions in the generated split")
    parser.add_argument("--size", type=int, default=100, help="study size (default 100, the papers')")
    parser.add_argument("--repeat", type=int, default=5, help="loads per page (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-human-study-") as tmp:
        root = Path(tmp)
        write_work_folder(root / "work", args.items)
        started = time.perf_counter()
        make_study("bqa", root / "work", root / "big", size=args.size, seed=0)
        make_seconds = time.perf_counter() - started
        make_study("bqa", root / "work", root / "one", size=1, seed=0)
        big, one = (root / name / "raters" / "r1" / "index.html" for name in ("big", "one"))
        clips = sum(p.stat().st_size for p in (root / "big" / "raters" / "r1" / "clips").iterdir())
        print(f"make: {args.size} items x 3 raters in {make_seconds:.2f} s; page {big.stat().st_size / 1024:.1f} KiB, "
              f"clips {clips / 1024:.0f} KiB per rater")  # fmt: skip
        timed = time_pages({"one": one, "big": big}, args.repeat)
        base, ours = timed["one"], timed["big"]
        print(f"{'median ms':<10} {'1 item':>9} {f'{args.size} items':>10} {'ratio':>7}")
        for key in ("ready", "load", "clip", "answer"):
            print(f"{key:<10} {base[key]:>9.1f} {ours[key]:>10.1f} {ours[key] / base[key]:>7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
