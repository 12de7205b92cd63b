"""Builder, statistics, card, Hub export and the ``load_dataset`` round trip, on the bundled sample.

The work folder is made the way the pipeline makes it, minus the LLM: STEP1 on the sample's rows,
template questions, alternating difficulty, clips copied without audio, split by film.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

import av
import datasets
import numpy as np
import pytest
from nltk.tokenize import NLTKWordTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from bqa.bold import read_bold
from bqa.builder import BQABuilder, build_dataset
from bqa.candidates import extract_candidates
from bqa.data import open_split
from bqa.export import export_release
from bqa.features import FEATURES, SPLITS, TEXT_COLUMNS
from bqa.records import Provenance, StepProvenance
from bqa.sample import sample_root
from bqa.stats import TOTAL, release_stats
from bqa.vocabulary import DEFAULT_MAPPING_NAME, DIFFICULTIES, GROUP_NAMES
from bqa.workfolder import ReleaseMeta, make_record, read_release, write_release
from builders.cli import main as cli_main
from builders.hub.layout import read_card
from builders.testing.clips import packet_summary, read_frame_code, write_clip
from builders.video.remux import remove_audio
from builders.video.sampler import sample_frames

PROVENANCE = Provenance(
    question=StepProvenance("gen-model-002", "bqa-question", "1"),
    filter=StepProvenance("gen-model-002", "bqa-filter", "1"),
    difficulty=StepProvenance("gen-model-002", "bqa-difficulty", "1"),
)


def _make_work(work: Path) -> dict:
    source = read_bold(sample_root())
    films = sorted({a.film_id for a in source.annotations})
    split_of = {
        film: "train" if i < 4 else "validation" if i == 4 else "test" for i, film in enumerate(films)
    }
    splits = {s: [] for s in SPLITS}
    for i, a in enumerate(source.annotations):
        record = make_record(
            a,
            extract_candidates(a.emotions, key=a.id, seed=11),
            question=f"Looking at the person's posture in clip {i}, which emotion fits best?",
            difficulty=DIFFICULTIES[i % 2],
            difficulty_reason=("right_choice", "wrong_choice")[i % 2],
            provenance=PROVENANCE,
        )
        remove_audio(a.clip_path, work / record.clip)
        splits[split_of[a.film_id]].append(record)
    write_release(work, splits, ReleaseMeta(seed=11))
    return splits


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("work")
    return root, _make_work(root)


@pytest.fixture(scope="module")
def exported(work, tmp_path_factory):
    root, splits = work
    out = tmp_path_factory.mktemp("hub") / "BQA"
    result = export_release(root, out, cache_dir=tmp_path_factory.mktemp("cache"))
    return out, result, splits


def _text_row(record) -> dict:
    example = record.to_example(None)
    return {k: example[k] for k in TEXT_COLUMNS}


def _assert_rows_match(dataset: datasets.Dataset, records) -> None:
    assert dataset["id"] == [r.id for r in records]
    for row, record in zip(dataset.select_columns(list(TEXT_COLUMNS)), records, strict=True):
        expected = _text_row(record)
        for key in ("emotions", "valence", "arousal", "dominance", "annotation_confidence"):
            assert row.pop(key) == pytest.approx(expected.pop(key), rel=1e-6)  # float32 columns
        assert row == expected


def test_builder_builds_the_release_without_torch(work, tmp_path):
    root, splits = work
    with pytest.raises(ImportError):
        import torch  # noqa: F401  (the point: none of this needs it)
    dd = build_dataset(root, cache_dir=tmp_path)
    assert list(dd) == list(SPLITS)
    for split in SPLITS:
        assert dd[split].features == FEATURES
        _assert_rows_match(dd[split], splits[split])
        videos = dd[split].cast_column("video", datasets.Video(decode=False))["video"]
        assert [v["path"] for v in videos] == [str((root / r.clip).resolve()) for r in splits[split]]
        assert all(v["bytes"] is None for v in videos)  # the cache points at the work folder's clips


def test_builder_cache_is_keyed_to_the_release(work, tmp_path):
    root, _ = work
    same = [BQABuilder(work_dir=root, cache_dir=str(tmp_path))._cache_dir for _ in range(2)]
    assert same[0] == same[1]
    copy = tmp_path / "copy"
    splits = _make_work(copy)
    changed = dataclasses.replace(splits["test"][0], question="Which emotion does the person show?")
    write_release(copy, {**splits, "test": [changed, *splits["test"][1:]]}, ReleaseMeta(seed=11))
    dd = build_dataset(copy, cache_dir=tmp_path)
    assert dd["test"]["question"][0] == "Which emotion does the person show?"
    assert BQABuilder(work_dir=copy, cache_dir=str(tmp_path))._cache_dir not in same
    with pytest.raises(ValueError, match="needs work_dir"):
        BQABuilder(cache_dir=str(tmp_path))


def test_hub_folder_layout_and_card(exported):
    out, _, splits = exported
    assert sorted(p.name for p in out.iterdir()) == ["LICENSE.md", "README.md", "data", "eval.yaml"]
    assert sorted(p.name for p in (out / "data" / "default").iterdir()) == [
        f"{s}-00000-of-00001.parquet" for s in ("test", "train", "validation")
    ]
    meta, body = read_card(out)
    assert meta["configs"] == [
        {
            "config_name": "default",
            "default": True,
            "data_files": [{"split": s, "path": f"data/default/{s}-*.parquet"} for s in SPLITS],
        }
    ]
    [info] = meta["dataset_info"]
    assert datasets.DatasetInfo._from_yaml_dict(info).features == FEATURES
    assert {s["name"]: s["num_examples"] for s in info["splits"]} == {s: len(splits[s]) for s in SPLITS}
    assert meta["license"] == "other" and meta["size_categories"] == ["n<1K"]
    assert (
        meta["task_categories"] == ["video-text-to-text", "multiple-choice"] and meta["pretty_name"] == "BQA"
    )
    # The prose states this release's numbers, mapping, codes and how to read frames without torch.
    n = {s: len(splits[s]) for s in SPLITS}
    easy = sum(r.difficulty == "Easy" for rs in splits.values() for r in rs)
    assert f"This release: **{sum(n.values())}** questions over **6** source films" in body
    assert f"{easy} Easy and {sum(n.values()) - easy} Hard" in body
    assert f"Mapping used: `{DEFAULT_MAPPING_NAME}`" in body
    assert "| Anger | Anger, Annoyance, Aversion, Disapproval, Disquietment, Fear |" in body
    assert "| gender | 1 = Male, 2 = Female |" in body
    assert 'cast_column("video", Video(decode=False))' in body and "sample_frames(" in body
    assert "## Known limitations" in body and "No source film has rows in two splits." in body
    assert "| question | `gen-model-002` | `bqa-question` | 1 | 38 |" in body


def test_load_dataset_round_trip_and_frames(exported, tmp_path):
    out, _, splits = exported
    dd = datasets.load_dataset(str(out), cache_dir=str(tmp_path))  # no config name: the default
    assert isinstance(dd, datasets.DatasetDict) and list(dd) == list(SPLITS)
    for split in SPLITS:
        assert dd[split].features == FEATURES
        _assert_rows_match(dd[split], splits[split])
    with pytest.raises(ImportError, match="torchcodec"):
        dd["test"][0]  # decoding needs torchcodec; the card says so and shows the way around
    test = dd["test"].cast_column("video", datasets.Video(decode=False))
    for k in (0, len(test) - 1):
        row, record = test[k], splits["test"][k]
        assert row["video"]["path"] == f"{record.id}.mp4"
        frames = sample_frames(row["video"], num_frames=16)
        expected = np.round(np.linspace(0, 124, 16)).astype(int).tolist()
        assert frames.indices == expected and frames.total_frames == 125
        assert [
            read_frame_code(f) for f in frames.frames
        ] == expected  # the frames painted with those numbers
        with av.open(_bytes_file(tmp_path, row["video"]["bytes"])) as container:
            decoded = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
        assert all(np.array_equal(decoded[i], f) for i, f in zip(expected, frames.frames, strict=True))


def _bytes_file(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "clip.mp4"
    path.write_bytes(data)
    return str(path)


def test_released_clips_are_the_work_clips_without_audio(exported, work):
    out, _, splits = exported
    root, _ = work
    table = datasets.load_dataset(str(out), split="validation", cache_dir=str(root / ".c"))
    videos = table.cast_column("video", datasets.Video(decode=False))["video"]
    for video, record in zip(videos, splits["validation"], strict=True):
        assert video["bytes"] == (root / record.clip).read_bytes()
        assert packet_summary(root / record.clip).has_audio is False
    source = read_bold(sample_root()).annotations[0].clip_path
    assert packet_summary(source).has_audio is True  # the bundled source still has its audio


def _self_bleu_nltk(questions: list[str]) -> float:
    tokens = [NLTKWordTokenizer().tokenize(q) for q in questions]
    smooth = SmoothingFunction().method1
    scores = [
        sentence_bleu(tokens[:i] + tokens[i + 1 :], t, smoothing_function=smooth)
        for i, t in enumerate(tokens)
    ]
    return sum(scores) / len(scores)


def test_statistics_match_an_independent_count(exported):
    _, result, splits = exported
    stats = result.stats
    for split in SPLITS:
        records, s = splits[split], stats.splits[split]
        assert s.size == len(records)
        assert s.difficulty == {d: sum(r.difficulty == d for r in records) for d in DIFFICULTIES}
        assert s.answer_group == {g: sum(r.answer_group == g for r in records) for g in GROUP_NAMES}
        assert {k: v for k, v in s.ethnicity.items() if v} == dict(Counter(r.ethnicity for r in records))
        assert s.films == len({r.source.film_id for r in records})
        assert s.self_bleu == pytest.approx(_self_bleu_nltk([r.question for r in records]), abs=1e-9)
    total = stats.splits[TOTAL]
    assert total.size == 38 and total.films == 6 and total.self_bleu is None
    assert sum(total.answer.values()) == 38 and all(v > 0 for v in total.answer_group.values())
    assert set(total.gender) == {"Male", "Female"} and min(total.age.values()) > 0
    assert stats.shared_films == []
    leaky = {**splits, "test": [*splits["test"], splits["train"][0]]}
    assert release_stats(leaky, ReleaseMeta(), self_bleu=False).shared_films == [
        splits["train"][0].source.film_id
    ]


def test_cli_export_and_check_source(work, tmp_path, capsys):
    root, splits = work
    out = tmp_path / "cli-out"
    args = ["bqa", "export", str(root), str(out), "--no-self-bleu", "--cache-dir", str(tmp_path / "c")]
    assert cli_main(args) == 0
    assert "load_dataset check passed" in capsys.readouterr().out
    assert "Self-BLEU: not computed (disabled for this export)" in read_card(out)[1]
    assert read_release(root).splits == splits  # the export did not touch the release

    assert cli_main(["bqa", "check"]) == 0
    assert "38 usable rows, 6 films" in capsys.readouterr().out
    broken = tmp_path / "bold"
    (broken / "annotations").mkdir(parents=True)
    row = (sample_root() / "annotations" / "train.csv").read_text().splitlines()[0]
    (broken / "annotations" / "train.csv").write_text(row + "\n")
    (broken / "annotations" / "val.csv").write_text("")
    assert cli_main(["bqa", "check", str(broken)]) == 2
    assert "1 clip(s) named in the annotations are missing" in capsys.readouterr().err
    assert cli_main(["bqa", "check", str(broken), "--skip-missing"]) == 0
    printed = capsys.readouterr().out
    assert (
        "0 usable rows" in printed and f"train.csv, line 1, column 1 (video): {row.split(',')[0]}" in printed
    )


def _decoded(path: Path) -> tuple[int, float]:
    """Frames and frame rate of a clip by a plain full PyAV decode (independent of builders.video)."""
    with av.open(str(path)) as container:
        times = [float(f.time) for f in container.decode(video=0)]
    return len(times), (len(times) - 1) / (times[-1] - times[0])


def test_stats_measure_the_clips_and_count_how_questions_begin(tmp_path, capsys):
    root = tmp_path / "work"
    splits = _make_work(root)
    # Clips of other lengths and rates than the sample's 5 s at 25 fps: the statistics measure, not assume.
    for record, (frames, fps) in zip(splits["test"], ((180, 30), (70, 10)), strict=False):
        write_clip(root / record.clip, num_frames=frames, fps=fps)
    questions = {r.id: q for r, q in zip(splits["train"], ("Why is he tense?", "how does she feel?",
                                                           "Judging by the gait, which emotion fits?"), strict=False)}  # fmt: skip
    splits["train"] = [
        dataclasses.replace(r, question=questions.get(r.id, r.question)) for r in splits["train"]
    ]
    write_release(root, splits, ReleaseMeta(seed=11))
    assert (
        cli_main(["bqa", "stats", "--data", str(root), "--no-self-bleu", "--out", str(tmp_path / "stats")])
        == 0
    )
    printed = capsys.readouterr().out
    for heading in (
        "Splits (Table 3):",
        "Clips, measured",
        "How questions begin (A.4):",
        "Gender (Figure 3):",
    ):
        assert heading in printed
    stats = json.loads((tmp_path / "stats" / "stats.json").read_text())
    records = [r for rs in splits.values() for r in rs]
    measured = [_decoded(root / r.clip) for r in records]
    seconds = sorted(n / fps for n, fps in measured)
    clips = stats["splits"]["total"]["clips"]
    assert clips["n"] == len(records) and clips["seconds"]["min"] == pytest.approx(seconds[0])
    assert clips["seconds"]["max"] == pytest.approx(seconds[-1]) == pytest.approx(7.0)  # 70 frames at 10 fps
    assert seconds[0] == pytest.approx(5.0) and pytest.approx(6.0) in seconds  # 180 frames at 30 fps
    assert clips["histogram"] == {"0-4 s": 0, "4-5 s": 0, "5-6 s": len(records) - 2, "6-8 s": 2, "8-10 s": 0,
                                  "10 s or more": 0}  # fmt: skip
    assert clips["fps"] == dict(Counter(f"{fps:.2f}" for _, fps in measured)) and "30.00" in clips["fps"]
    first = Counter(r.question.split()[0].capitalize() for r in records)
    assert stats["splits"]["total"]["openings"] == dict(first)
    wh = {"What", "Which", "Why", "How", "Who", "Where", "When"}
    assert stats["splits"]["total"]["wh_share"] == pytest.approx(
        sum(n for w, n in first.items() if w in wh) / len(records)
    )
    pngs = sorted(p.name for p in (tmp_path / "stats").glob("*.png"))
    assert pngs == sorted(
        [
            "figure3_answer_group.png",
            "figure3_gender.png",
            "figure3_age.png",
            "figure3_ethnicity.png",
            "question_openings.png",
            "clip_durations.png",
        ]
    )  # fmt: skip  (no pipeline record here)
    assert all((tmp_path / "stats" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in pngs)


def test_cli_stats(work, capsys):
    root, splits = work
    # Readable by default (issue 29: 250 lines of JSON): a table per statistic, a row per split.
    assert cli_main(["bqa", "stats", "--data", str(root), "--no-self-bleu", "--no-clips"]) == 0
    tables = capsys.readouterr().out
    assert tables.startswith("Splits (Table 3):") and len(tables.splitlines()) < 80
    for name, rows in splits.items():
        assert re.search(rf"^{name} +{len(rows)} ", tables, re.M)
    assert re.search(r"^Kid ", tables, re.M) and re.search(r"^Hispanic or Latino ", tables, re.M)
    assert cli_main(["bqa", "stats", "--data", str(root), "--no-self-bleu", "--json", "--no-clips"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert {name: s["size"] for name, s in printed["splits"].items() if name in splits} == {
        name: len(rows) for name, rows in splits.items()
    }
    assert printed["splits"]["total"]["size"] == sum(len(rows) for rows in splits.values())


def test_a_hub_folder_without_step4_reasons_is_refused_by_column(exported, tmp_path):
    """The first release's layout has ``difficulty_reason``: a folder without it is an error naming the
    column, not rows read with a guessed reason (issue 40: no readers for unreleased layouts)."""
    import shutil

    import pyarrow.parquet as pq
    from hub_helpers import record_checksums

    out, _, _ = exported
    old = tmp_path / "old"
    shutil.copytree(out, old)
    for shard in old.rglob("*.parquet"):
        table = pq.read_table(shard)
        pq.write_table(table.drop(["difficulty_reason"]), shard)
    record_checksums(old)  # the shards changed on purpose: the release's checksums say so
    with pytest.raises(ValueError, match="difficulty_reason"):
        open_split(old, "train")
    assert "difficulty_reason" in open_split(out, "train").rows[0]
