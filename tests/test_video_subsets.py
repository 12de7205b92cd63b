"""Named subsets of a split's videos (``--videos FILE``, ``--video-sample N --seed S``) through the
whole loop: evaluate (real local chat server), judge, report, ``.eval_results`` notes and the
leaderboard, on the bundled MarineLife-16K sample (a work folder of its hand-written release) and BQA.

Expected counts come from the release files read here (questions of the chosen videos), the subset
hash from hashlib over the sorted ids, never from the code under test.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl
from builders.hub.eval_results import parse_notes, read_entries
from builders.hub.subset import VideoSelection
from builders.scripted.baseline_responder import ScriptedJudge
from marinelife16k.sample import write_sample_work_folder

REPO = "org/MarineLife-16K"


def _sha(ids) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


@pytest.fixture(scope="module")
def marine(tmp_path_factory) -> dict:
    work = write_sample_work_folder(tmp_path_factory.mktemp("subset") / "work")
    videos = [json.loads(line) for line in (work / "release" / "videos.jsonl").read_text().splitlines()]
    records = read_jsonl(work / "release" / "qa.jsonl")
    test = sorted(v["id"] for v in videos if v["split"] == "test")
    return {"work": work, "test": test, "records": records}


@pytest.fixture(scope="module")
def runs(marine, tmp_path_factory) -> dict:
    """Two evaluate runs against the local chat server (every reply "A"): one on 3 of the 6 test
    videos (--videos FILE), one on the whole split; and judge results of each."""
    from builders.testing.chat_server import ChatServer

    tmp = tmp_path_factory.mktemp("subset-runs")
    chosen = marine["test"][:3]
    ids = tmp / "three.txt"
    ids.write_text("# three test videos\n" + "\n".join(reversed(chosen)) + "\n\n")
    out = {"ids": ids, "chosen": chosen, "tmp": tmp}
    with ChatServer() as server:
        llm = ["--llm-base-url", server.url, "--llm-api-key-env", "none", "--llm-model", "always-a"]
        server.handler = lambda body: "A"
        for name, extra in (("sub", ["--videos", str(ids)]), ("full", [])):
            path = tmp / f"{name}.jsonl"
            assert cli_main(["marinelife", "evaluate", "--data", str(marine["work"]), "--split", "test",
                             "--out", str(path), *extra, *llm]) == 0  # fmt: skip
            out[name] = path
        server.handler = ScriptedJudge()
        judge = ["--llm-base-url", server.url, "--llm-api-key-env", "none", "--llm-model", "scripted-judge"]
        for name, source, extra in (
            ("sub", "sub", []),
            ("full", "full", []),
            ("full-on-3", "full", ["--videos", str(ids)]),
        ):
            path = tmp / f"judge-{name}.json"
            assert cli_main(["marinelife", "judge", str(out[source]), "--out", str(path), "--name", source,
                             "--llm-cache", str(tmp / f"judge-{name}.sqlite"), *extra, *judge]) == 0  # fmt: skip
            out[f"judge-{name}"] = path
    return out


def test_evaluate_asks_only_the_subsets_questions_and_records_it(marine, runs):
    lines = read_jsonl(runs["sub"])
    expected = [r["question_id"] for r in marine["records"] if r["id"] in runs["chosen"]]
    assert [line["question_id"] for line in lines] == expected  # split order, all of their questions
    videos = lines[0]["provenance"]["videos"]
    assert videos == {"n": 3, "of": 6, "sha256": _sha(runs["chosen"]), "file": "three.txt"}
    assert all(line["provenance"]["videos"] == videos for line in lines)
    assert "videos" not in read_jsonl(runs["full"])[0]["provenance"]  # the whole split: nothing to name


def test_report_on_three_videos_counts_only_their_questions_and_records_them(marine, runs, tmp_path):
    mcq = [
        r
        for r in marine["records"]
        if r["id"] in runs["chosen"] and r["question_format"] == "multiple_choice"
    ]
    opened = [
        r
        for r in marine["records"]
        if r["id"] in runs["chosen"] and r["question_format"] != "multiple_choice"
    ]
    out = tmp_path / "report"
    argv = [
        "report",
        "marinelife",
        "--data",
        str(marine["work"]),
        "--videos",
        str(runs["ids"]),
        "--out",
        str(out),
    ]
    assert (
        cli_main([*argv, "--predictions", f"sub={runs['sub']}", "--judge-results", str(runs["judge-sub"])])
        == 0
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_multiple_choice"] == len(mcq) and metrics["n_open_ended"] == len(opened)
    accuracy = metrics["models"]["sub"]["accuracy"]
    assert accuracy["n"]["overall"] == len(mcq)
    assert accuracy["overall"] == pytest.approx(100 * sum(r["answer"] == "A" for r in mcq) / len(mcq))
    videos = metrics["provenance"]["videos"]
    assert videos["ids"] == runs["chosen"] and videos["sha256"] == _sha(runs["chosen"]) and videos["n"] == 3
    assert "3 of 6 test videos (ids from three.txt" in (out / "report.md").read_text()
    # a full-split run scored on the same three videos gives the same numbers (same replies)
    again = tmp_path / "again"
    assert cli_main([*argv[:-1], str(again), "--predictions", f"full={runs['full']}"]) == 0
    assert json.loads((again / "metrics.json").read_text())["models"]["full"]["accuracy"] == accuracy


def test_runs_on_different_videos_are_refused_side_by_side(marine, runs, tmp_path, capsys):
    argv = ["report", "marinelife", "--data", str(marine["work"]), "--out", str(tmp_path / "r")]
    argv += [
        "--predictions",
        f"sub={runs['sub']}",
        "--predictions",
        f"full={runs['full']}",
        "--allow-missing",
    ]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "videos:" in err
        and "sub 3 of 6 videos" in err
        and "full all videos" in err
        and "--allow-mixed" in err
    )
    assert cli_main([*argv, "--allow-mixed"]) == 0
    assert "**Mixed settings (--allow-mixed):**" in (tmp_path / "r" / "report.md").read_text()
    # judge results on all videos next to a report on three: the OEMU column would be on other items
    on3 = ["report", "marinelife", "--data", str(marine["work"]), "--videos", str(runs["ids"])]
    assert cli_main([*on3, "--out", str(tmp_path / "j"), "--judge-results", str(runs["judge-full"])]) == 2
    assert "full (judge oemu) all videos" in capsys.readouterr().err
    assert (
        cli_main([*on3, "--out", str(tmp_path / "k"), "--judge-results", str(runs["judge-full-on-3"])]) == 0
    )


def test_judge_on_a_subset_judges_only_its_answers(marine, runs):
    results = json.loads(runs["judge-full-on-3"].read_text())["full"]
    opened = [r for r in marine["records"] if r["id"] in runs["chosen"]]
    for task, qtype in (("oemu", "camera_object_open_ended"), ("caption", "caption")):
        assert results[task]["n"] + results[task]["n_failed"] == sum(r["type"] == qtype for r in opened)
        assert results[task]["provenance"]["videos"]["sha256"] == _sha(runs["chosen"])
    full = json.loads(runs["judge-full"].read_text())["full"]
    assert full["oemu"]["provenance"]["videos"] == "all"


def test_subset_goes_into_eval_results_notes_and_the_leaderboard_refuses_mixing(
    marine, runs, tmp_path, capsys
):
    reports = {}
    for name, extra in (("sub", ["--videos", str(runs["ids"])]), ("full", [])):
        out = tmp_path / f"report-{name}"
        assert cli_main(["report", "marinelife", "--data", str(marine["work"]), *extra, "--out", str(out),
                         "--predictions", f"{name}={runs[name]}"]) == 0  # fmt: skip
        reports[name] = out / "metrics.json"
    root = tmp_path / "models"
    for name, metrics in reports.items():
        write = ["results", "write", str(metrics), "--out", str(root / "lab" / name), "--dataset-id", REPO]
        assert (
            cli_main([*write, "--allow-sample"]) == 0
        )  # the bundled sample's scores: publishing them is meant
    entries = {
        e.task_id: e for _, e in read_entries(root / "lab" / "sub" / ".eval_results" / "marinelife16k.yaml")
    }
    notes = parse_notes(entries["mbc_so"].notes)
    assert notes["videos"] == f"3/6,sha256:{_sha(runs['chosen'])[:12]},file:three.txt"
    full = {
        e.task_id: e for _, e in read_entries(root / "lab" / "full" / ".eval_results" / "marinelife16k.yaml")
    }
    assert parse_notes(full["mbc_so"].notes)["videos"] == "all"
    capsys.readouterr()
    board = [
        "leaderboard",
        "marinelife",
        "--from",
        str(root),
        "--dataset-id",
        REPO,
        "--out",
        str(tmp_path / "board"),
    ]
    assert cli_main(board) == 2
    assert "scored on different videos" in capsys.readouterr().err
    assert cli_main([*board, "--allow-mixed"]) == 0
    assert "**Mixed videos (--allow-mixed):**" in (tmp_path / "board" / "report.md").read_text()


def test_video_sample_is_reproducible_and_checked(marine, tmp_path, capsys):
    pool = marine["test"]
    first = VideoSelection(sample=3, seed=7).choose(pool, split="test", source="s")
    assert first == VideoSelection(sample=3, seed=7).choose(list(reversed(pool)), split="test", source="s")
    assert len(first.ids) == 3 and set(first.ids) <= set(pool) and first.ids == tuple(sorted(first.ids))
    assert first.sha256 == _sha(first.ids) and first.provenance()["seed"] == 7
    draws = {VideoSelection(sample=3, seed=s).choose(pool, split="test", source="s").ids for s in range(10)}
    assert len(draws) > 1
    with pytest.raises(ValueError, match="has only 6 videos"):
        VideoSelection(sample=7).choose(pool, split="test", source="s")
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{pool[0]}\nMVK--nope\n")
    with pytest.raises(ValueError, match=r"1 id\(s\) are not videos of the test split of s: \[MVK--nope\]"):
        VideoSelection(file=bad).choose(pool, split="test", source="s")
    bad.write_text(f"{pool[0]}\n{pool[0]}\n")
    with pytest.raises(ValueError, match="line 2: video .* is already at line 1"):
        VideoSelection(file=bad).choose(pool, split="test", source="s")
    base = ["report", "marinelife", "--data", str(marine["work"]), "--out", str(tmp_path / "x")]
    (tmp_path / "x.jsonl").write_text("")  # an existing file: a missing one is refused while parsing
    assert cli_main([*base, "--seed", "3", "--predictions", str(tmp_path / "x.jsonl")]) == 2
    assert "--seed is the seed of --video-sample" in capsys.readouterr().err


def test_bqa_evaluate_and_report_take_the_same_options(built_samples, tmp_path):
    from builders.testing.chat_server import ChatServer

    hub = built_samples["bqa"].hub
    with ChatServer() as server:
        server.handler = lambda body: "Happiness"
        out = tmp_path / "bqa.jsonl"
        assert cli_main(["bqa", "evaluate", "--data", str(hub), "--split", "test", "--out", str(out),
                         "--video-sample", "2", "--seed", "1", "--llm-base-url", server.url,
                         "--llm-api-key-env", "none", "--llm-model", "m"]) == 0  # fmt: skip
    lines = read_jsonl(out)
    assert len(lines) == 2 and lines[0]["provenance"]["videos"]["sample"] == 2
    chosen = sorted(line["id"] for line in lines)
    report = tmp_path / "report"
    assert cli_main(["report", "bqa", "--data", str(hub), "--video-sample", "2", "--seed", "1",
                     "--predictions", f"m={out}", "--out", str(report)]) == 0  # fmt: skip
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["n_items"] == 2 and metrics["provenance"]["videos"]["ids"] == chosen
