"""The benchmarks on the Hub: each export's ``eval.yaml`` (validated by the push check), cards that
survive any YAML tool, a run's scores as ``.eval_results`` entries, a pull request on a model repo,
and the leaderboard, against the real local Hub server (builders.testing.hub_server).

Expected values are counted here from the replies the tests write (and scipy's Wilson interval),
never read back from the code under test.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import yaml
from hub_helpers import use_endpoint
from PIL import Image
from plot_checks import assert_figures_fit
from scipy.stats import binomtest

from builders.cli import main as cli_main
from builders.hub.eval_results import entries_from_metrics, read_entries
from builders.hub.layout import check_hub_folder, read_card, render_card, write_hub_folder
from builders.hub.publish import plan_push
from builders.report import write_bqa_report, write_marinelife_report
from builders.testing.hub_server import HubServer

BQA_TASKS = ["bqa_total", "bqa_easy", "bqa_hard"]
MARINE_ACCURACY = ["mbc_so", "mbc_mo", "pmt", "pdo", "obk", "sm_e", "sm_l"]  # Table 3's order
MARINE_JUDGED = ["oemu", "caption_beh", "caption_ah", "caption_ecf"] + [
    f"caption_{c}_{camera}" for camera in ("static", "moving") for c in ("beh", "ah", "ecf")
]
TOKEN = "hf_SECRETresults0123456789abcdef"
MARINE_REPO = "org/MarineLife-16K"


@pytest.fixture(scope="module")
def exports(built_samples, tmp_path_factory) -> dict[str, Path]:
    """Copies of both exported samples (tests may edit them)."""
    root = tmp_path_factory.mktemp("exports")
    return {name: Path(shutil.copytree(sample.hub, root / name)) for name, sample in built_samples.items()}


def _copy(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / folder.name))


def _eval_yaml(folder: Path) -> dict:
    return yaml.safe_load((folder / "eval.yaml").read_text(encoding="utf-8"))


# --- eval.yaml ---------------------------------------------------------------------------------------
def test_bqa_export_declares_table1_as_tasks(exports, tmp_path):
    spec = _eval_yaml(exports["bqa"])
    assert spec["name"] == "BQA" and spec["evaluation_framework"] == "vqabench"
    assert [t["id"] for t in spec["tasks"]] == BQA_TASKS
    assert all(t["config"] == "default" and t["split"] == "test" for t in spec["tasks"])
    assert all("Scale 0-1, higher is better." in t["description"] for t in spec["tasks"])
    check_hub_folder(exports["bqa"], cache_dir=tmp_path)  # the push check reads and accepts it
    assert "eval.yaml" in {
        f.path_in_repo for f in plan_push(exports["bqa"], "naist-nlp/BQA", allow_sample=True).files
    }


def test_marinelife_export_declares_tables_3_and_4_as_tasks(exports, tmp_path):
    spec = _eval_yaml(exports["marinelife16k"])
    assert [t["id"] for t in spec["tasks"]] == MARINE_ACCURACY + MARINE_JUDGED
    scales = {t["id"]: t["description"].rsplit("Scale ", 1)[1] for t in spec["tasks"]}
    assert {scales[t] for t in MARINE_ACCURACY} == {"0-100, higher is better."}
    assert {scales[t] for t in MARINE_JUDGED} == {"0-5, higher is better."}
    assert all(t["config"] == "qa" and t["split"] == "test" for t in spec["tasks"])
    check_hub_folder(exports["marinelife16k"], cache_dir=tmp_path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s["tasks"][0].update(split="dev"),
            "task 'bqa_total': split 'dev' is not in config 'default'",
        ),
        (
            lambda s: s["tasks"][1].update(config="qa"),
            "task 'bqa_easy': config 'qa' is not in the card's configs",
        ),
        (lambda s: s.pop("evaluation_framework"), "eval.yaml: no 'evaluation_framework'"),
        (lambda s: s["tasks"][2].update(id="bqa_total"), "tasks[2]: id 'bqa_total' is used twice"),
        (lambda s: s["tasks"][0].update(id="has space"), "tasks[0]: 'id' must be letters"),
        (lambda s: s.update(tasks="bqa_total"), "'tasks' must be a list"),
    ],
)
def test_push_check_names_what_is_wrong_with_eval_yaml(exports, tmp_path, change, message):
    folder = _copy(exports["bqa"], tmp_path)
    spec = _eval_yaml(folder)
    change(spec)
    (folder / "eval.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    with pytest.raises(ValueError, match="not a valid Hub dataset folder") as err:
        check_hub_folder(folder, cache_dir=tmp_path / "cache")
    assert message in str(err.value)
    (folder / "eval.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(ValueError, match="eval.yaml: expected a mapping"):
        check_hub_folder(folder, cache_dir=tmp_path / "cache")


# --- cards ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bqa", "marinelife16k"])
def test_card_through_a_plain_yaml_round_trip_still_passes_the_push_check(exports, tmp_path, name):
    folder = _copy(exports[name], tmp_path)
    meta, body = read_card(folder)
    # What any YAML tool may do: load, dump with its defaults (keys sorted), load and dump again.
    text = yaml.safe_dump(yaml.safe_load(yaml.safe_dump(meta)))
    assert text != yaml.safe_dump(meta, sort_keys=False)  # the order really changed
    (folder / "README.md").write_text(f"---\n{text}---\n\n{body}", encoding="utf-8")
    loaded = check_hub_folder(folder, cache_dir=tmp_path / "cache")
    assert sum(len(d) for dd in loaded.values() for d in dd.values()) > 0


def test_an_order_dependent_feature_is_named_not_a_bare_type_error(exports, tmp_path):
    folder = _copy(exports["bqa"], tmp_path)
    meta, body = read_card(folder)
    features = meta["dataset_info"][0]["features"]
    at = next(i for i, f in enumerate(features) if f["name"] == "choices")
    features[at] = {"length": 4, "list": "string", "name": "choices"}  # a sorted fixed-length list
    (folder / "README.md").write_text(render_card(meta, body), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        check_hub_folder(folder, cache_dir=tmp_path / "cache")
    assert "feature 'choices' cannot be read by datasets" in str(err.value)
    assert "sorted keys" in str(err.value)
    # ...and the writer never produces such a card.
    fixed = datasets.Dataset.from_dict(
        {"pair": [["a", "b"]]},
        features=datasets.Features({"pair": datasets.List(datasets.Value("string"), length=2)}),
    )
    with pytest.raises(ValueError, match="feature 'pair' changes meaning when a YAML tool sorts its keys"):
        write_hub_folder(
            tmp_path / "out",
            {"default": datasets.DatasetDict({"test": fixed})},
            default_config="default",
            card_body="x",
        )


def test_bqa_card_is_complete_for_research_only_data(exports):
    meta, body = read_card(exports["bqa"])
    assert meta["license"] == "other" and meta["license_link"] == "LICENSE.md"
    assert "research only" in (exports["bqa"] / "LICENSE.md").read_text(encoding="utf-8")
    assert meta["source_datasets"] == ["extended|BoLD"]
    assert meta["annotations_creators"] == ["crowdsourced", "machine-generated"]
    assert meta["language_creators"] == ["machine-generated"] and meta["multilinguality"] == ["monolingual"]
    assert "research only" in meta["extra_gated_prompt"]
    assert meta["extra_gated_fields"]["Country"] == "country"
    assert meta["extra_gated_fields"]["I will use this dataset for research only"] == "checkbox"
    # Both papers: BQA (authors as in the paper) and BoLD's.
    assert "BQA: Body Language Question Answering Dataset for Video Large Language Models" in body
    assert "Ozaki, Shintaro and Hayashi, Kazuki and Oba, Miyu and Sakai, Yusuke" in body
    # Where it appeared: ACL 2025, short papers, as the ACL Anthology lists it (issue 29: no venue before).
    assert "Proceedings of the 63rd Annual Meeting of the Association for Computational" in body
    assert "url       = {https://aclanthology.org/2025.acl-short.10/}" in body
    assert "Towards Automated Recognition of Bodily Expression of Emotion in the Wild" in body


def test_marinelife_card_is_complete_for_research_only_data(exports):
    meta, body = read_card(exports["marinelife16k"])
    assert meta["license_link"] == "LICENSE.md" and (exports["marinelife16k"] / "LICENSE.md").is_file()
    assert meta["source_datasets"] == ["extended|MVK", "extended|MSC"]
    assert meta["annotations_creators"] == ["expert-generated", "machine-generated"]
    assert "I will ask the MVK and MSC data owners before any other use" in meta["extra_gated_fields"]
    assert "Motion-Aware Marine Video Understanding" in body
    assert "Marine Video Kit: A New Marine Video Dataset" in body
    assert "A Marine Wildlife Video Dataset with Grounded Segmentation and Clip-Level Captioning" in body


def test_a_license_link_to_a_missing_file_is_named(exports, tmp_path):
    folder = _copy(exports["marinelife16k"], tmp_path)
    (folder / "LICENSE.md").unlink()
    with pytest.raises(ValueError, match="license_link 'LICENSE.md' names no file"):
        check_hub_folder(folder, cache_dir=tmp_path / "cache")


# --- a run's scores ------------------------------------------------------------------------------------
def _text_split(folder: Path, config: str | None) -> datasets.Dataset:
    ds = datasets.load_dataset(str(folder), config, split="test")
    return ds.remove_columns([c for c in ("video",) if c in ds.column_names])


@pytest.fixture(scope="module")
def bqa_run(exports, tmp_path_factory) -> dict:
    """A BQA report over replies written here: right on every other item, else a wrong choice."""
    tmp = tmp_path_factory.mktemp("bqa-run")
    rows = list(_text_split(exports["bqa"], None))
    right = [i % 2 == 0 for i in range(len(rows))]
    with (tmp / "mine.jsonl").open("w", encoding="utf-8") as f:
        for row, ok in zip(rows, right, strict=True):
            reply = row["answer"] if ok else next(c for c in row["choices"] if c != row["answer"])
            f.write(json.dumps({"id": row["id"], "raw_output": reply}) + "\n")
    report = write_bqa_report(exports["bqa"], "test", {"mine": tmp / "mine.jsonl"}, tmp / "report")
    hard = [ok for ok, row in zip(right, rows, strict=True) if row["difficulty"] == "Hard"]
    return {"metrics": report.metrics_file, "k": sum(right), "n": len(rows), "hard": (sum(hard), len(hard)),
            "easy": sum(r["difficulty"] == "Easy" for r in rows)}  # fmt: skip


def test_bqa_metrics_become_eval_results_with_provenance_and_intervals(bqa_run, tmp_path, capsys):
    revision = "0123456789abcdef0123456789abcdef01234567"
    argv = ["results", "write", str(bqa_run["metrics"]), "--out", str(tmp_path / "mine"),
            "--dataset-revision", revision, "--date", "2026-11-30", "--allow-sample"]  # fmt: skip
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    entries = {e.task_id: e for _, e in read_entries(tmp_path / "mine")}
    expected = {"bqa_total": (bqa_run["k"], bqa_run["n"]), "bqa_hard": bqa_run["hard"]}
    if bqa_run["easy"] == 0:  # the sample's test split has no Easy item: no Easy score to publish
        assert "not written: bqa_easy" in out
    assert sorted(entries) == sorted(expected)
    for task, (k, n) in expected.items():
        entry = entries[task]
        assert entry.dataset_id == "naist-nlp/BQA" and entry.dataset_revision == revision
        assert entry.value == pytest.approx(k / n) and entry.date == "2026-11-30"
        wilson = binomtest(k, n).proportion_ci(method="wilson")
        notes = dict(pair.split("=", 1) for pair in entry.notes.split("; "))
        low, high = json.loads(notes["ci95"])
        assert (low, high) == (pytest.approx(wilson.low, abs=1e-5), pytest.approx(wilson.high, abs=1e-5))
        assert notes["n"] == str(n) and notes["split"] == "test"
        assert notes["parser"].startswith("vqabench-choice@") and notes["metric"] == "accuracy (0-1)"
    raw = yaml.safe_load((tmp_path / "mine" / ".eval_results" / "bqa.yaml").read_text())
    assert raw[0]["dataset"] == {"id": "naist-nlp/BQA", "task_id": "bqa_total", "revision": revision}


def test_provenance_the_report_recorded_goes_into_notes_and_secrets_do_not(bqa_run):
    from bqa.benchmark import BENCHMARK

    metrics = json.loads(bqa_run["metrics"].read_text())
    metrics["provenance"] = {
        "tool_version": "vqabench 9.9.9",
        "dataset": {"repo": "naist-nlp/BQA", "revision": "f" * 40},
        "frame_spec": "uniform:16",
        "prompt": "bqa-answer@3",
        "llm": {"model": "my-model", "api_key_env": "MY_KEY", "token": "hf_leak"},
    }
    scores = entries_from_metrics(metrics, BENCHMARK, model="mine", dataset_id="naist-nlp/BQA")
    notes = scores.entries[0].notes
    for text in ("tool=vqabench 9.9.9", "dataset=naist-nlp/BQA", "frames=uniform:16", "prompt=bqa-answer@3",
                 "llm.model=my-model"):  # fmt: skip
        assert text in notes
    assert "hf_leak" not in notes and "MY_KEY" not in notes
    assert scores.entries[0].dataset_revision == "f" * 40  # the revision the run recorded
    with pytest.raises(ValueError, match="no model 'theirs'; it has \\['mine'\\]"):
        entries_from_metrics(metrics, BENCHMARK, model="theirs", dataset_id="naist-nlp/BQA")
    metrics["split"] = "validation"
    skipped = entries_from_metrics(metrics, BENCHMARK, model=None, dataset_id="naist-nlp/BQA")
    assert skipped.entries == () and "the report scores split 'validation'" in skipped.skipped[0][1]


@pytest.fixture(scope="module")
def marine_run(exports, tmp_path_factory) -> dict:
    """A MarineLife report: the right letter on MBC-so questions, "A" on the others; judge results by hand."""
    tmp = tmp_path_factory.mktemp("marine-run")
    rows = [
        r for r in _text_split(exports["marinelife16k"], "qa") if r["question_format"] == "multiple_choice"
    ]
    with (tmp / "mine.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            reply = row["answer"] if row["type"] == "central_object" else "A"
            f.write(json.dumps({"question_id": row["question_id"], "raw_output": reply}) + "\n")
    judge = {"mine": {"oemu": {"score": 2.43, "criteria": {"camera": 2.1, "activity": 2.6, "relation": 2.6}, "n": 6,
                               "n_failed": 0},
                      "caption": {"score": 2.7, "criteria": {"BEH": 3.13, "AH": 2.1, "ECF": 2.6}, "n": 6, "n_failed": 0,
                                  "by_camera": {"static": {"score": 2.6, "criteria": {"BEH": 3.0, "AH": 2.0, "ECF": 2.5},
                                                           "n": 4},
                                                "moving": {"score": 2.9, "criteria": {"BEH": 3.4, "AH": 2.3, "ECF": 2.8},
                                                           "n": 2}}}}}  # fmt: skip
    (tmp / "judge.json").write_text(json.dumps(judge), encoding="utf-8")
    report = write_marinelife_report(
        exports["marinelife16k"],
        "test",
        {"mine": tmp / "mine.jsonl"},
        tmp / "report",
        judge_results=[tmp / "judge.json"],
    )
    pmt = [r for r in rows if r["type"] == "central_object_appearance"]
    return {"metrics": report.metrics_file, "pmt": (sum(r["answer"] == "A" for r in pmt), len(pmt)),
            "mbc_so": sum(r["type"] == "central_object" for r in rows)}  # fmt: skip


def test_marinelife_metrics_become_eval_results_on_the_papers_scales(marine_run, tmp_path, capsys):
    argv = [
        "results",
        "write",
        str(marine_run["metrics"]),
        "--out",
        str(tmp_path / "m"),
        "--dataset-id",
        MARINE_REPO,
        "--allow-sample",
    ]
    assert cli_main(argv) == 0
    entries = {e.task_id: e for _, e in read_entries(tmp_path / "m" / ".eval_results" / "marinelife16k.yaml")}
    assert sorted(entries) == sorted(MARINE_ACCURACY + MARINE_JUDGED)
    assert entries["mbc_so"].value == 100.0 and f"n={marine_run['mbc_so']}" in entries["mbc_so"].notes
    k, n = marine_run["pmt"]
    assert entries["pmt"].value == pytest.approx(100 * k / n)
    assert entries["oemu"].value == 2.43 and "metric=LLM-judge score (0-5)" in entries["oemu"].notes
    assert entries["caption_ah"].value == 2.1 and entries["caption_ecf_moving"].value == 2.8
    assert "n=4" in entries["caption_beh_static"].notes


def test_marinelife_repo_id_is_a_setting_and_a_flag(marine_run, tmp_path, capsys, monkeypatch):
    """Issue 29: the paper names no repo; one setting (or --dataset-id) replaces the wall."""
    monkeypatch.delenv("VQABENCH_MARINELIFE16K_REPO_ID", raising=False)
    argv = ["results", "write", str(marine_run["metrics"]), "--allow-sample"]
    assert cli_main([*argv, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "export VQABENCH_MARINELIFE16K_REPO_ID=OWNER/NAME" in err and "--dataset-id" in err
    monkeypatch.setenv("VQABENCH_MARINELIFE16K_REPO_ID", "lab/MarineLife-16K")
    mine = tmp_path / "repos" / "lab" / "mine"
    assert cli_main([*argv, "--out", str(mine)]) == 0
    assert "on lab/MarineLife-16K (from VQABENCH_MARINELIFE16K_REPO_ID)" in capsys.readouterr().out
    assert {e.dataset_id for _, e in read_entries(mine)} == {"lab/MarineLife-16K"}
    board = tmp_path / "board"  # the leaderboard reads the same setting, and records where it came from
    assert (
        cli_main(["leaderboard", "marinelife", "--from", str(tmp_path / "repos"), "--out", str(board)]) == 0
    )
    recorded = json.loads((board / "metrics.json").read_text())
    assert (recorded["dataset_id"], recorded["dataset_id_from"]) == (
        "lab/MarineLife-16K",
        "from VQABENCH_MARINELIFE16K_REPO_ID",
    )
    assert cli_main([*argv, "--out", str(tmp_path / "z"), "--dataset-id", MARINE_REPO]) == 0  # the flag wins
    assert f"on {MARINE_REPO} (from --dataset-id)" in capsys.readouterr().out
    monkeypatch.setenv("VQABENCH_MARINELIFE16K_REPO_ID", "not a repo")
    assert cli_main([*argv, "--out", str(tmp_path / "w")]) == 2
    assert (
        "VQABENCH_MARINELIFE16K_REPO_ID='not a repo': expected a Hub dataset repo id"
        in capsys.readouterr().err
    )


def test_results_from_a_bundled_sample_are_refused_and_notes_hold_no_local_path(bqa_run, tmp_path, capsys):
    """Issue 29: `results write` on the sample wrote entries for naist-nlp/BQA without a word, with the
    local folder (and each field twice) in the notes."""
    argv = ["results", "write", str(bqa_run["metrics"]), "--out", str(tmp_path / "mine")]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "not publishing it" in err
        and "bundled synthetic BoLD-format sample" in err
        and "--allow-sample" in err
    )
    assert not (tmp_path / "mine").exists()
    assert cli_main([*argv, "--allow-sample"]) == 0
    capsys.readouterr()
    local = str(tmp_path.parents[2])  # every folder of this run is under it
    for _, entry in read_entries(tmp_path / "mine"):
        keys = [pair.split("=", 1)[0] for pair in entry.notes.split("; ")]
        assert len(keys) == len(set(keys)), entry.notes  # no field twice
        assert local not in entry.notes and "folder" not in entry.notes and "=/" not in entry.notes, (
            entry.notes
        )
        assert "dataset.sample=built from the bundled" in entry.notes  # said, so that a push can refuse it
    # A runner's predictions record their data too: the same data is said once, and never its folder.
    from bqa.benchmark import BENCHMARK

    metrics = json.loads(bqa_run["metrics"].read_text())
    assert "folder" in metrics["provenance"]["dataset"]  # what the report keeps locally
    metrics["models"]["mine"]["provenance"] = {
        "data": dict(metrics["provenance"]["dataset"]),
        "split": "test",
    }
    notes = (
        entries_from_metrics(metrics, BENCHMARK, model="mine", dataset_id="naist-nlp/BQA").entries[0].notes
    )
    keys = [pair.split("=", 1)[0] for pair in notes.split("; ")]
    assert len(keys) == len(set(keys)) and not any(k.startswith("data.") for k in keys), notes
    assert "folder" not in notes and local not in notes
    # Publishing those entries is refused the same way, before any network.
    assert cli_main(["results", "push", str(tmp_path / "mine"), "org/model", "--dry-run"]) == 2
    assert "its notes says it was built from the bundled" in capsys.readouterr().err


# --- pull request on a model repo -> leaderboard -------------------------------------------------------
@pytest.fixture
def hub(monkeypatch, tmp_path, outside_attempts, exports):
    """A local Hub with the BQA benchmark pushed (its eval.yaml included) and two model repos."""
    with HubServer(
        tokens={TOKEN: "write"}, repos=["naist-nlp/BQA"], model_repos=["org/model", "lab/other"]
    ) as server:
        use_endpoint(monkeypatch, server.url, tmp_path / "hf-home")
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        assert cli_main(["push", str(exports["bqa"]), "naist-nlp/BQA", "--allow-sample"]) == 0
        yield server
    assert outside_attempts == []


def test_results_pr_on_a_model_repo_then_the_leaderboard_lists_it(
    hub, bqa_run, tmp_path, capsys, plot_record
):
    k, n = bqa_run["k"], bqa_run["n"]
    mine = tmp_path / "mine"
    before = len(hub.requests)
    argv = [
        "results",
        "write",
        str(bqa_run["metrics"]),
        "--out",
        str(mine),
        "--push",
        "org/model",
        "--create-pr",
        "--allow-sample",
    ]
    assert cli_main([*argv, "--dry-run"]) == 0
    assert len(hub.requests) == before and "dry run: nothing was sent" in capsys.readouterr().out
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "pull request: " in out and TOKEN not in out
    model = hub.model_repos["org/model"]
    assert list(model.pull_requests) == [1] and ".eval_results/bqa.yaml" not in hub.files(
        "org/model", repo_type="model"
    )
    proposed = yaml.safe_load(
        hub.files("org/model", "refs/pr/1", repo_type="model")[".eval_results/bqa.yaml"]
    )
    assert {e["dataset"]["task_id"]: e["value"] for e in proposed}["bqa_total"] == pytest.approx(k / n)

    # A second model's result committed to its main branch, better on Total.
    other = tmp_path / "other" / ".eval_results"
    other.mkdir(parents=True)
    (other / "bqa.yaml").write_text(yaml.safe_dump([{"dataset": {"id": "naist-nlp/BQA", "task_id": "bqa_total"},
                                                     "value": 0.95, "notes": "ci95=[0.8, 0.99]; n=5"}]))  # fmt: skip
    assert cli_main(["results", "push", str(tmp_path / "other"), "lab/other"]) == 0
    capsys.readouterr()

    board = tmp_path / "board"
    assert cli_main(["leaderboard", "bqa", "--hub", "--out", str(board)]) == 0
    printed = capsys.readouterr().out
    assert "bqa_total: 2 model(s); first lab/other 0.95" in printed
    report = (board / "report.md").read_text(encoding="utf-8")
    total = report.split("(`bqa_total`)")[1].split("##")[0]
    wilson = binomtest(k, n).proportion_ci(method="wilson")
    assert "| 1 | `lab/other` | 0.950 | [0.800, 0.990] | 5 | main |" in total
    assert (
        f"| 2 | `org/model` | {k / n:.3f} | [{wilson.low:.3f}, {wilson.high:.3f}] | {n} | community (PR #1) |"
        in total
    )
    with Image.open(board / "leaderboard_1.png") as png:
        assert png.format == "PNG" and png.size[0] > 300
    assert_figures_fit(plot_record)
    ranked = json.loads((board / "metrics.json").read_text())["tasks"]["bqa_total"]
    assert [(r["model_id"], r["rank"]) for r in ranked] == [("lab/other", 1), ("org/model", 2)]


def test_leaderboard_from_a_folder_of_model_repos(bqa_run, tmp_path, capsys):
    root = tmp_path / "repos"
    argv = [
        "results",
        "write",
        str(bqa_run["metrics"]),
        "--out",
        str(root / "org" / "model"),
        "--allow-sample",
    ]
    assert cli_main(argv) == 0
    value = bqa_run["k"] / bqa_run["n"]
    for name, score in (("lab/tied", value), ("lab/low", value - 0.1)):
        folder = root / name / ".eval_results"
        folder.mkdir(parents=True)
        entry = {"dataset": {"id": "naist-nlp/BQA", "task_id": "bqa_total"}, "value": score}
        (folder / "bqa.yaml").write_text(yaml.safe_dump([entry]))
    assert cli_main(["leaderboard", "bqa", "--from", str(root), "--out", str(tmp_path / "board")]) == 0
    ranked = json.loads((tmp_path / "board" / "metrics.json").read_text())["tasks"]["bqa_total"]
    # best first; a tie shares its rank and the next rank skips (1, 1, 3)
    assert [(r["model_id"], r["rank"]) for r in ranked] == [("lab/tied", 1), ("org/model", 1), ("lab/low", 3)]
    assert ranked[1]["interval"] is not None and ranked[0]["interval"] is None
    report = (tmp_path / "board" / "report.md").read_text()
    assert "| 1 | `lab/tied` |" in report and "| - | - | main |" in report  # no interval, no n: shown as -


def test_a_dataset_without_a_leaderboard_and_a_missing_model_repo_are_clear(hub, bqa_run, tmp_path, capsys):
    assert (
        cli_main(
            ["leaderboard", "marinelife", "--hub", "--dataset-id", MARINE_REPO, "--out", str(tmp_path / "b")]
        )
        == 2
    )
    assert "no leaderboard for org/MarineLife-16K" in capsys.readouterr().err
    argv = [
        "results",
        "write",
        str(bqa_run["metrics"]),
        "--out",
        str(tmp_path / "m"),
        "--push",
        "org/nothing",
        "--create-pr",
        "--allow-sample",
    ]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "model repo org/nothing does not exist" in err and "nothing was pushed" in err and TOKEN not in err


@pytest.mark.parametrize("offline", ["no connection", "HF_HUB_OFFLINE=1"])
def test_leaderboard_from_an_unreachable_hub_is_one_line(tmp_path, offline):
    """Issue 29: a 73-line traceback before; one line and exit status 2 now, as every Hub command."""
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and "proxy" not in k.lower()}
    env.update(
        HF_ENDPOINT=url, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1" if "OFFLINE" in offline else "0"
    )
    done = subprocess.run(
        [sys.executable, "-m", "builders.cli", "leaderboard", "bqa", "--hub", "--out", str(tmp_path / "b")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("vqabench: error: the leaderboard of "), (
        done.stderr
    )
    assert (
        "HF_HUB_OFFLINE is set" if "OFFLINE" in offline else f"cannot reach the Hub at {url}"
    ) in done.stderr
    assert not (tmp_path / "b").exists()


def test_malformed_eval_results_name_file_and_entry(tmp_path):
    folder = tmp_path / ".eval_results"
    folder.mkdir()
    (folder / "bad.yaml").write_text(yaml.safe_dump([{"dataset": {"id": "naist-nlp/BQA"}, "value": "high"}]))
    with pytest.raises(ValueError) as err:
        read_entries(tmp_path)
    assert "bad.yaml: entry 0: dataset.task_id missing" in str(err.value)
    assert "bad.yaml: entry 0: 'value' must be a number, got 'high'" in str(err.value)
