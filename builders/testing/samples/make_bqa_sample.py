"""Write the bundled BoLD-format sample (``bqa/sample/bold/``); run ``python -m builders.testing.samples.make_bqa_sample``.

Everything is drawn from one seeded generator, so a rerun writes the same annotations and clips
painted with the same pictures. The encoded bytes are not guaranteed to repeat (we saw a few clips
of a rerun differ slightly under another CPU load, and x264 builds differ), so tests check what is
painted (the frame index code), never a hash of the files.

Design of the rows (what the tests and the demo rely on):

* 6 films (11-character ids like YouTube's, as in BoLD) in folders ``001``-``003``, 6 clips each;
  films 1-4 go to ``train.csv``, films 5-6 to ``val.csv``, so a split by film is meaningful.
* 38 rows: every clip once, and 2 clips with a second person (person 1 and 2).
* Row ``i`` gets emotion ``ORDER[i % 26]`` as its clearly highest score, so each of the 26 labels
  (hence each of the 4 groups) is the answer at least once. Row ``TIE_ROW`` has two labels of
  different groups tied for the top score: BoLD order decides (see :mod:`bqa.candidates`).
* Demographic codes cycle so that every code of the default tables appears, skewed towards adult
  white men as in BoLD (Figure 3 of the paper).
* Clips: :func:`builders.testing.clips.write_clip` (frame index painted in each frame) plus a
  low-bitrate mono AAC track (write_clip's own track is 128 kb/s stereo, too big to ship 36 times).
"""

from __future__ import annotations

import argparse
import csv
import string
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from bqa.bold import ANNOTATIONS_DIR, BOLD_FILES, VIDEOS_DIR
from bqa.sample import sample_root
from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES, EMOTIONS
from builders.files.folders import atomic_directory
from builders.testing.clips import write_clip

SEED = 2025
SAMPLE_MARKER = ".vqabench-bold-sample"
NUM_FILMS, CLIPS_PER_FILM = 6, 6
TRAIN_FILMS = 4
NUM_FRAMES, FPS, WIDTH, HEIGHT = 125, 25, 160, 120
SECOND_PERSON = ((0, 2), (4, 5))  # (film, clip) pairs annotated for a second person
TIE_ROW = 7
TIE_LABELS = ("Surprise", "Fatigue")  # Pleasure vs Sadness; Surprise comes first in BoLD order
GENDER_CYCLE = (1, 1, 2)
AGE_CYCLE = (3, 3, 1, 3, 2)
ETHNICITY_CYCLE = (1, 1, 2, 1, 3, 4, 1, 5, 6, 7, 1)


def _film_ids(rng: np.random.Generator) -> list[str]:
    alphabet = np.array(list(string.ascii_letters + string.digits + "-_"))
    return ["".join(rng.choice(alphabet, size=11)) for _ in range(NUM_FILMS)]


def _row(index: int, video: str, person: int, rng: np.random.Generator, order: list[str]) -> list[str]:
    scores = {label: round(float(rng.uniform(0.0, 0.45)), 4) for label in EMOTIONS}
    target = order[index % len(order)]
    scores[target] = round(float(rng.uniform(0.55, 0.95)), 4)
    if index == TIE_ROW:
        scores[TIE_LABELS[0]] = scores[TIE_LABELS[1]] = 0.8
    first = int(rng.integers(0, 20))
    last = int(rng.integers(100, NUM_FRAMES))
    vad = [round(float(v), 4) for v in rng.uniform(1.0, 10.0, size=3)]
    codes = [
        GENDER_CYCLE[index % len(GENDER_CYCLE)],
        AGE_CYCLE[index % len(AGE_CYCLE)],
        ETHNICITY_CYCLE[index % len(ETHNICITY_CYCLE)],
    ]
    confidence = round(float(rng.uniform(0.3, 1.0)), 4)
    cells = [video, person, first, last, *(scores[e] for e in EMOTIONS), *vad, *codes, confidence]
    return [str(c) for c in cells]


def _add_audio(video_only: Path, dst: Path, seed: int) -> None:
    """Remux ``video_only``'s packets into ``dst`` with a quiet mono AAC tone (16 kHz, 16 kb/s)."""
    rate = 16000
    with av.open(str(video_only)) as src, av.open(str(dst), "w", format="mp4") as out:
        vin = src.streams.video[0]
        vout = out.add_stream_from_template(vin)
        aout = out.add_stream("aac", rate=rate)
        aout.layout = "mono"
        aout.bit_rate = 16000
        for packet in src.demux(vin):
            if packet.dts is None:  # the flush packet
                continue
            packet.stream = vout
            out.mux(packet)
        total, chunk = NUM_FRAMES * rate // FPS, 1024
        freq = 200.0 + 40.0 * (seed % 7)
        for start in range(0, total, chunk):
            t = np.arange(start, min(start + chunk, total)) / rate
            tone = (0.1 * np.sin(2 * np.pi * freq * t)).astype(np.float32)[None, :]
            frame = av.AudioFrame.from_ndarray(tone, format="fltp", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = rate, start, Fraction(1, rate)
            out.mux(aout.encode(frame))
        out.mux(aout.encode(None))


def make_sample(out: Path) -> Path:
    """Write the sample BoLD root to ``out`` (replacing it) and return it."""
    for key, cycle in (("gender", GENDER_CYCLE), ("age", AGE_CYCLE), ("ethnicity", ETHNICITY_CYCLE)):
        assert set(cycle) == set(DEFAULT_DEMOGRAPHIC_CODES[key]), f"{key} cycle must cover every code"
    rng = np.random.default_rng(SEED)
    films = _film_ids(rng)
    order = list(EMOTIONS)
    rng.shuffle(order)
    # The sample root: ANNOTATIONS_DIR and VIDEOS_DIR (what it held before it had a marker).
    with atomic_directory(out, marker=SAMPLE_MARKER, legacy=(ANNOTATIONS_DIR, VIDEOS_DIR)) as tmp:
        rows: dict[str, list[list[str]]] = {split: [] for split in BOLD_FILES}
        index = 0
        for f, film in enumerate(films):
            folder = f"{f // 2 + 1:03d}"
            split = "train" if f < TRAIN_FILMS else "val"
            for c in range(CLIPS_PER_FILM):
                video = f"{folder}/{film}.mp4/{c + 1:04d}.mp4"
                seed = SEED + index
                raw = write_clip(
                    tmp / "raw.mp4", num_frames=NUM_FRAMES, fps=FPS, width=WIDTH, height=HEIGHT, seed=seed
                )
                clip = tmp / VIDEOS_DIR / video
                clip.parent.mkdir(parents=True, exist_ok=True)
                _add_audio(raw, clip, seed)
                for person in (1, 2) if (f, c) in SECOND_PERSON else (1,):
                    rows[split].append(_row(index, video, person, rng, order))
                    index += 1
        (tmp / "raw.mp4").unlink()
        (tmp / ANNOTATIONS_DIR).mkdir()
        for split, name in BOLD_FILES.items():
            with (tmp / ANNOTATIONS_DIR / name).open("w", newline="", encoding="utf-8") as handle:
                csv.writer(handle, lineterminator="\n").writerows(rows[split])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=sample_root(), help="BoLD root to write (default: the bundled one)"
    )
    args = parser.parse_args(argv)
    out = make_sample(args.out.resolve())
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
