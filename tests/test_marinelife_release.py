"""Work folder -> builder -> Hub-layout export -> load_dataset, on the bundled sample's real MP4s."""

from __future__ import annotations

import io
import json
from collections import Counter

import av
import datasets
import pytest

from builders.cli import main as cli_main
from builders.hub.layout import read_card
from builders.testing.clips import read_frame_code
from builders.testing.samples.make_marinelife_sample import FPS, HEIGHT, WIDTH, write_sample
from builders.video.sampler import sample_frames
from marinelife16k.annotations import read_annotations
from marinelife16k.builder import MarineLife16K, build_configs
from marinelife16k.card import ATTRIBUTE_DESCRIPTIONS, DIMENSION_DESCRIPTIONS, card_body
from marinelife16k.export import export_release
from marinelife16k.features import FEATURES, qa_record
from marinelife16k.sample import (
    sample_attributes_path,
    sample_motion_not_asked,
    sample_qa_path,
    sample_root,
    sample_video_root,
    write_sample_work_folder,
)
from marinelife16k.vocabulary import ATTRIBUTES, DIMENSIONS
from marinelife16k.workfolder import QA_FILE, RELEASE_DIR, VIDEOS_FILE, read_release, write_release


def _sample_records() -> list[dict]:
    with sample_qa_path().open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _decoded_frames(data: bytes) -> tuple[int, int, int]:
    with av.open(io.BytesIO(data)) as container:
        frames = [f for f in container.decode(video=0)]
    return len(frames), frames[0].width, frames[0].height


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The sample's work folder exported to Hub layout, and both configs loaded back from it."""
    base = tmp_path_factory.mktemp("marinelife")
    work = write_sample_work_folder(base / "work")
    result = export_release(work, base / "hub", cache_dir=base / "build-cache", repo_id="me/MarineLife-16K")
    cache = str(base / "load-cache")
    loaded = {
        name: datasets.load_dataset(str(result.folder), name, cache_dir=cache) for name in ("qa", "videos")
    }
    default = datasets.load_dataset(str(result.folder), cache_dir=cache)
    return result, loaded, default


def test_work_folder_round_trip(tmp_path):
    work = write_sample_work_folder(tmp_path / "work")
    release = read_release(work)
    assert len(release.videos) == 24 and release.records == _sample_records()
    assert Counter(row["split"] for row in release.videos) == {"train": 16, "validation": 2, "test": 6}
    assert release.meta["split_sizes"] == {"train": 16, "validation": 2, "test": 6}
    assert all(release.video_file(row).is_file() for row in release.videos)
    # Split by video: every question of a video sits in its video's split.
    splits = release.splits()
    assert {r["id"] for r in release.records} == set(splits)


def test_write_release_refuses_invalid_records_and_splits(tmp_path):
    rows = read_annotations(sample_attributes_path())
    records = _sample_records()
    broken = [dict(r) for r in records]
    broken[0]["answer"] = "Z"
    with pytest.raises(ValueError, match="MVK--mvk-0103--q1: answer"):
        write_release(tmp_path, rows, broken)
    with pytest.raises(ValueError, match="no recorded reason"):  # why type 7 was not asked: unknown
        write_release(tmp_path, rows, records)
    reasons = sample_motion_not_asked(rows, records)
    with pytest.raises(ValueError, match="split 'dev' is not one of"):
        write_release(
            tmp_path,
            rows,
            records,
            motion_not_asked=reasons,
            splits=dict.fromkeys((r["id"] for r in rows), "dev"),
        )
    assert not (tmp_path / RELEASE_DIR).exists()  # nothing half-written


def test_read_release_reports_bad_files(tmp_path):
    work = write_sample_work_folder(tmp_path / "work")
    videos_path = work / RELEASE_DIR / VIDEOS_FILE
    lines = videos_path.read_text().splitlines()
    row = json.loads(lines[2])
    row["split"] = "holdout"
    videos_path.write_text("\n".join([*lines[:2], json.dumps(row), *lines[3:]]) + "\n")
    with pytest.raises(ValueError, match=r"videos\.jsonl: line 3: split 'holdout'"):
        read_release(work)
    work = write_sample_work_folder(tmp_path / "work2")
    qa_path = work / RELEASE_DIR / QA_FILE
    kept = qa_path.read_text().splitlines()[1:]  # drop q1 of the first video
    qa_path.write_text("\n".join(kept) + "\n")
    with pytest.raises(ValueError, match="MVK--mvk-0103: type: mandatory type central_object is missing"):
        read_release(work)
    with pytest.raises(FileNotFoundError, match="not a MarineLife-16K work folder"):
        read_release(tmp_path / "nothing")


def test_builder_builds_both_configs(tmp_path):
    work = write_sample_work_folder(tmp_path / "work")
    builder = MarineLife16K(config_name="videos", data_dir=str(work), cache_dir=str(tmp_path / "cache"))
    builder.download_and_prepare()
    videos = builder.as_dataset()
    assert {s: len(d) for s, d in videos.items()} == {"train": 16, "validation": 2, "test": 6}
    assert videos["train"].features == FEATURES["videos"]
    configs = build_configs(work, cache_dir=tmp_path / "cache")
    assert set(configs) == {"qa", "videos"}
    qa_rows = [row for split in configs["qa"].values() for row in split]
    assert sorted(qa_record(row)["question_id"] for row in qa_rows) == sorted(
        r["question_id"] for r in _sample_records()
    )
    assert Counter(row["dimension"] for row in qa_rows)["PDO"] == 24  # one camera_motion question per video


def test_builder_rebuilds_when_the_work_folder_changes(tmp_path):
    work = write_sample_work_folder(tmp_path / "work", seed=0)
    first = build_configs(work, cache_dir=tmp_path / "cache")["videos"]
    write_sample_work_folder(work, seed=1)  # new split assignment, same cache dir
    second = build_configs(work, cache_dir=tmp_path / "cache")["videos"]
    assert set(first["test"]["id"]) != set(second["test"]["id"])
    assert set(second["test"]["id"]) == {r["id"] for r in read_release(work).videos if r["split"] == "test"}


def test_export_layout_and_card(exported):
    result, _, _ = exported
    folder = result.folder
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")) == [
        f"data/{c}/{s}-00000-of-00001.parquet"
        for c in ("qa", "videos")
        for s in ("test", "train", "validation")
    ]
    assert not list(folder.glob("*.py"))
    meta, body = read_card(folder)
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert configs["qa"].get("default") is True and "default" not in configs["videos"]
    assert meta["license"] == "other" and meta["license_name"] == "marinelife16k-research-only"
    assert meta["size_categories"] == ["n<1K"]
    assert "research purposes only" in body and "me/MarineLife-16K" in body
    for name in ATTRIBUTES:
        assert f"| `{name}` | {ATTRIBUTE_DESCRIPTIONS[name]} |" in body
    for dimension in DIMENSIONS:
        assert f"| {dimension} | {DIMENSION_DESCRIPTIONS[dimension]} |" in body
    assert "qa.id == videos.id" in body
    assert (
        "| total | 24 | 24 | 0.027 | 203 | 155 | 48 | 13 | 11 | 12 | 12 |" in body
    )  # 2 open-ended per video
    assert "video_root" not in body  # no local paths in the card
    # What the paper describes and the release does not carry is said, with why (issue 39)
    out_of_scope = body.split("## Out of scope")[1].split("## ")[0]
    assert "six human reviewers" in out_of_scope and "27 recording locations in 7 countries" in out_of_scope


def test_load_dataset_round_trip_and_join(exported):
    result, loaded, default = exported
    qa, videos = loaded["qa"], loaded["videos"]
    assert {s: len(d) for s, d in default.items()} == {s: len(d) for s, d in qa.items()}  # qa is the default
    release = result.release
    by_split = {
        s: [r for r in release.records if release.splits()[r["id"]] == s]
        for s in ("train", "validation", "test")
    }
    for split, records in by_split.items():
        assert [qa_record(row) for row in qa[split]] == records  # exact round trip of the JSONL records
    sources = {row["id"]: row for row in read_annotations(sample_attributes_path())}
    seen_videos = set()
    for split in ("train", "validation", "test"):
        table = videos[split].cast_column("video", datasets.Video(decode=False))
        row_of = {video_id: i for i, video_id in enumerate(table["id"])}
        assert set(qa[split]["id"]) == set(row_of)  # every question joins a video of its own split
        assert not seen_videos & set(row_of)  # and no video is in two splits
        seen_videos |= set(row_of)
        for question in qa[split].select(range(0, len(qa[split]), 9)):
            video = table[row_of[question["id"]]]
            assert video["video_path"] == question["video_path"]
            assert (
                video["central_object"]
                == question["central_object"]
                == sources[question["id"]]["central_object"]
            )
            data = video["video"]["bytes"]
            assert data == (sample_video_root() / question["video_path"]).read_bytes()
            assert video["video"]["path"] == question["video_file"]  # no local directory leaks
            frames, width, height = _decoded_frames(data)
            assert (width, height) == (WIDTH, HEIGHT) and frames in (3 * FPS, 4 * FPS, 5 * FPS)
            # What the card tells users to do: 8 uniform frames from the {"path", "bytes"} value.
            sampled = sample_frames(video["video"], num_frames=8)
            expected = [round(i * (frames - 1) / 7) for i in range(8)]
            assert sampled.total_frames == frames and sampled.indices == expected
            assert [read_frame_code(f) for f in sampled.frames] == expected
    assert len(seen_videos) == 24


def test_cli_validates_and_exports(tmp_path, capsys):
    assert cli_main(["marinelife", "check-attributes"]) == 0
    assert "24 videos, all found under" in capsys.readouterr().out
    assert (
        cli_main(
            [
                "marinelife",
                "validate",
                str(sample_qa_path()),
                "--attributes",
                str(sample_attributes_path()),
            ]
        )
        == 0
    )
    bad = tmp_path / "qa.jsonl"
    records = _sample_records()[:6]
    records[3]["answer"] = "Q"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli_main(["marinelife", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "MVK--mvk-0103--q4: answer: must be one of A, B, C, D, got 'Q'" in out
    with pytest.raises(SystemExit) as refused:  # refused as the command line is parsed (issue 29)
        cli_main(["marinelife", "export", str(tmp_path / "missing"), str(tmp_path / "out")])
    assert refused.value.code == 2 and f"{tmp_path / 'missing'}: no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli_main(["marinelife", "export", str(tmp_path / "empty"), str(tmp_path / "out")]) == 2
    assert "not a MarineLife-16K work folder" in capsys.readouterr().err


def test_make_sample_is_deterministic_and_current(tmp_path):
    counts = write_sample(tmp_path)
    assert counts == {"videos": 24, "questions": 203}
    for name in ("attributes.csv", "qa.jsonl"):
        assert (tmp_path / name).read_bytes() == (sample_root() / name).read_bytes(), f"{name} is stale"
    shipped = sorted(p.relative_to(sample_video_root()) for p in sample_video_root().rglob("*.mp4"))
    assert shipped == sorted(p.relative_to(tmp_path / "videos") for p in (tmp_path / "videos").rglob("*.mp4"))
    total = sum((sample_video_root() / p).stat().st_size for p in shipped)
    assert total < 1_500_000
    frames, width, height = _decoded_frames((sample_video_root() / shipped[0]).read_bytes())
    assert (width, height) == (WIDTH, HEIGHT) and frames >= 3 * FPS


def test_card_shows_provenance_but_no_credentials(tmp_path):
    rows = read_annotations(sample_attributes_path())
    write_release(
        tmp_path,
        rows,
        _sample_records(),
        motion_not_asked=sample_motion_not_asked(rows, _sample_records()),
        seed=5,
        provenance={
            "models": {"captioner": "gpt-test-1"},
            "tau": 3.5,
            "api_key": "sk-do-not-show",
            "llm": {"token": "t0k"},
        },
    )
    body = card_body(read_release(tmp_path, check_videos=False))
    assert '"captioner": "gpt-test-1"' in body and '"tau": 3.5' in body and '"seed": 5' in body
    assert "sk-do-not-show" not in body and "t0k" not in body


def test_cli_sample_writes_a_valid_work_folder(tmp_path, capsys):
    assert cli_main(["marinelife", "sample", str(tmp_path / "work")]) == 0
    release = tmp_path / "work" / "release"
    assert capsys.readouterr().out.strip() == f"wrote {release}"
    qa = release / "qa.jsonl"
    assert len(qa.read_text().splitlines()) == len(sample_qa_path().read_text().splitlines())
    assert cli_main(["marinelife", "validate", str(qa), "--attributes", str(sample_attributes_path())]) == 0
    assert "0 violation(s)" in capsys.readouterr().out
