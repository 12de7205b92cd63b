"""``vqabench human-study make|score`` on the bundled samples (rebuilt from their recordings):
the draw (stratified, seeded, balanced), what the rater folders hold (no answers, no audio, no
network), and every reported number against independent computations (scipy, statsmodels,
krippendorff, hand counts). The page itself is driven in a real browser in test_human_study_page.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import av
import krippendorff
import numpy as np
import pytest
from human_study_helpers import (
    expert_script,
    judge_score,
    write_answers,
    write_judge_results,
    write_marine_predictions,
)
from markdown_tables import read_table
from PIL import Image
from plot_checks import assert_figures_fit
from scipy.stats import binomtest, pearsonr, spearmanr
from statsmodels.stats.inter_rater import fleiss_kappa

from builders.cli import main as cli_main
from builders.human_study.draw import allocate, assign
from builders.human_study.study import Study

RATERS = ["r1", "r2", "r3"]


@pytest.fixture(scope="module")
def bqa_study(built_samples, tmp_path_factory):
    root = tmp_path_factory.mktemp("bqa-study")
    args = ["human-study", "make", "bqa", "--data", str(built_samples["bqa"].hub), "--split", "train",
            "--draw", "stratified", "--size", "10", "--seed", "7", "--out", str(root / "study")]  # fmt: skip
    assert cli_main(args) == 0
    rows = {r["id"]: r for r in built_samples["bqa"].loaded["default"]["train"].to_list()}
    return {
        "dir": root / "study",
        "study": Study.read(root / "study"),
        "rows": rows,
        "root": root,
        "args": args,
    }


def test_the_draw_is_stratified_reproducible_and_recorded(bqa_study, built_samples, tmp_path):
    study, rows = bqa_study["study"], bqa_study["rows"]
    available = Counter(r["difficulty"] for r in rows.values())
    drawn = Counter(rows[i.id]["difficulty"] for i in study.items)
    # Proportional allocation by hand: 10 * n_s / N, floors first, the remainder to the largest fraction.
    exact = {d: 10 * n / sum(available.values()) for d, n in available.items()}
    floors = {d: int(x) for d, x in exact.items()}
    floors[max(exact, key=lambda d: exact[d] - floors[d])] += 10 - sum(floors.values())
    assert dict(drawn) == floors and sum(drawn.values()) == 10
    assert {s: c["drawn"] for s, c in study.strata.items()} == floors
    assert {s: c["available"] for s, c in study.strata.items()} == dict(available)
    assert all(i.raters == RATERS for i in study.items)  # default: every rater rates every item
    # Same data, size and seed (from the Hub folder or the work folder): the same study, byte for byte.
    again = tmp_path / "again"
    assert cli_main([*bqa_study["args"][:4], str(built_samples["bqa"].work), *bqa_study["args"][5:-2],
                     "--out", str(again)]) == 0  # fmt: skip
    assert Study.read(again).study_id == study.study_id
    assert [i.id for i in Study.read(again).items] == [i.id for i in study.items]
    other = tmp_path / "other"
    assert (
        cli_main([*bqa_study["args"][:11], "--seed", "8", "--out", str(other), *bqa_study["args"][15:]]) == 0
    )
    assert Study.read(other).study_id != study.study_id
    assert study.draw == "stratified"
    # A record written before draws had names (no "draw", no "design") reads as stratified, same id.
    old = json.loads((bqa_study["dir"] / "study.json").read_text())
    del old["draw"], old["design"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    legacy = Study.read(tmp_path / "old.json")
    assert (legacy.draw, legacy.study_id) == ("stratified", study.study_id)


def test_the_default_draw_is_random_as_in_the_papers(bqa_study, built_samples, tmp_path):
    """``--draw random`` (the default): a simple random sample, so the Easy/Hard mix varies from seed
    to seed around the split's own mix (hypergeometric), where a stratified draw fixes it."""
    rows = bqa_study["rows"]
    easy_share = sum(r["difficulty"] == "Easy" for r in rows.values()) / len(rows)
    base = [a for a in bqa_study["args"] if a not in ("--draw", "stratified")]
    easy = []
    for seed in range(12):
        out = tmp_path / f"s{seed}"
        args = [*base[:9], "--seed", str(seed), "--out", str(out)]
        assert cli_main(args) == 0
        study = Study.read(out)
        assert study.draw == "random" and len(study.items) == 10 == len({i.id for i in study.items})
        easy.append(sum(rows[i.id]["difficulty"] == "Easy" for i in study.items))
        assert {s: c["drawn"] for s, c in study.strata.items()} == dict(
            Counter(rows[i.id]["difficulty"] for i in study.items)
        )  # the record still counts what was drawn per difficulty
    assert len(set(easy)) > 1  # not fixed by allocation
    assert abs(sum(easy) / (10 * len(easy)) - easy_share) < 0.15
    again = tmp_path / "again"
    assert cli_main([*base[:9], "--seed", "0", "--out", str(again)]) == 0
    assert [i.id for i in Study.read(again).items] == [i.id for i in Study.read(tmp_path / "s0").items]


def test_balanced_assignment_and_allocation_edges():
    items = [f"i{n}" for n in range(10)]
    who = assign(items, ["a", "b", "c", "d"], 3)
    loads = Counter(r for raters in who.values() for r in raters)
    assert sorted(loads.values()) == [7, 7, 8, 8] and all(len(set(r)) == 3 for r in who.values())
    assert allocate({"Easy": 707, "Hard": 736}, 100) == {"Easy": 49, "Hard": 51}  # BQA test split sizes
    with pytest.raises(ValueError, match="larger than the 3 items available"):
        allocate({"a": 1, "b": 2}, 4)
    with pytest.raises(ValueError, match="between 1 and the number of raters"):
        assign(items, ["a", "b"], 3)


def _rater_files(study_dir: Path) -> list[Path]:
    return sorted(p for p in (study_dir / "raters").rglob("*") if p.suffix in (".html", ".json"))


def test_rater_folders_hold_no_answer_no_audio_and_no_network(bqa_study):
    study, rows = bqa_study["study"], bqa_study["rows"]
    files = _rater_files(bqa_study["dir"])
    assert len(files) == 2 * len(RATERS)
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, path  # nothing to fetch
        for word in (
            '"answer"',
            "answer_group",
            '"difficulty"',
            '"correct"',
            '"Easy"',
            '"Hard"',
            "reference",
        ):
            assert word not in text, (path, word)
        # Each label appears exactly as often as it is shown as a choice: nothing singles out the answer.
        shown = Counter(c for i in study.items if i.id in text for c in rows[i.id]["choices"])
        for label, n in shown.items():
            assert len(re.findall(f'"{re.escape(label)}"', text)) == n, (path, label)
    page = json.loads((bqa_study["dir"] / "raters" / "r1" / "study.json").read_text())
    assert sorted(page["items"][0]) == ["choices", "clip", "id", "question"]
    for item in page["items"]:
        clip = bqa_study["dir"] / "raters" / "r1" / item["clip"]
        with av.open(str(clip)) as container:
            assert [s.type for s in container.streams] == ["video"]  # the BoLD clips had AAC audio
            assert sum(1 for _ in container.decode(video=0)) > 0


def _bqa_script(study: Study, rows: dict) -> dict[str, dict[str, int]]:
    """r1 always right; r2 wrong (next choice) on the first three items; r3 wrong (two on) on odd ones."""
    script: dict[str, dict[str, int]] = {r: {} for r in RATERS}
    for n, item in enumerate(study.items):
        right = rows[item.id]["choices"].index(rows[item.id]["answer"])
        script["r1"][item.id] = right
        script["r2"][item.id] = (right + 1) % 4 if n < 3 else right
        script["r3"][item.id] = (right + 2) % 4 if n % 2 else right
    return script


def _wilson(k: int, n: int) -> tuple[float, float, float]:
    ci = binomtest(k, n).proportion_ci(method="wilson")
    return k / n, ci.low, ci.high


def test_bqa_score_matches_independent_statistics(bqa_study, tmp_path, plot_record):
    study, rows = bqa_study["study"], bqa_study["rows"]
    script = _bqa_script(study, rows)
    files = [write_answers(study, r, script[r], tmp_path / f"{r}.json") for r in RATERS]
    model = tmp_path / "always_right.jsonl"
    model.write_text("".join(json.dumps({"id": i, "raw_output": rows[i]["answer"]}) + "\n" for i in rows))
    out = tmp_path / "report"
    assert cli_main(["human-study", "score", str(bqa_study["dir"]), *map(str, files), "--out", str(out),
                     "--predictions", f"oracle={model}"]) == 0  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["draw"] == "stratified"  # the scores say how the study was drawn
    right = {i.id: rows[i.id]["choices"].index(rows[i.id]["answer"]) for i in study.items}
    difficulty = {i.id: rows[i.id]["difficulty"] for i in study.items}
    for label in ("Easy", "Hard", "Total"):
        ids = [i for i in right if label in ("Total", difficulty[i])]
        k = sum(script[r][i] == right[i] for r in RATERS for i in ids)
        cell = metrics["human"][label]
        assert (cell["accuracy"], *cell["ci95"]) == pytest.approx(_wilson(k, 3 * len(ids)))
        votes = [Counter(script[r][i] for r in RATERS).most_common() for i in ids]
        k_vote = sum(
            v[0][0] == right[i] and (len(v) == 1 or v[0][1] > v[1][1])
            for v, i in zip(votes, ids, strict=True)
        )
        assert metrics["majority_vote"][label]["correct"] == k_vote
        assert metrics["models"]["oracle"][label]["accuracy"] == 1.0
    # Items 1 (r2 and r3 both wrong, differently) is a 1-1-1 tie; every other item has a majority.
    assert metrics["majority_vote"]["ties"] == [study.items[1].id]
    table = np.array([np.bincount([script[r][i.id] for r in RATERS], minlength=4) for i in study.items])
    reliability = np.array([[script[r][i.id] for i in study.items] for r in RATERS], dtype=float)
    agreement = metrics["agreement"]
    assert agreement["fleiss_kappa"] == pytest.approx(fleiss_kappa(table))
    assert agreement["krippendorff_alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    )
    assert metrics["per_rater"]["r1"]["Total"]["accuracy"] == 1.0
    assert metrics["per_rater"]["r2"]["Total"]["correct"] == 7
    markdown = (out / "report.md").read_text()
    header, table_rows = read_table(markdown, "Model")
    assert header == ["Model", "Easy", "Hard", "Total"]
    assert list(table_rows) == ["Human", "Human (majority vote)", "oracle"]
    assert table_rows["oracle"][2].startswith("1.000 [")
    with Image.open(out / "human_accuracy_by_difficulty.png") as image:
        assert image.format == "PNG" and image.width > 300
    assert_figures_fit(plot_record)


def _score_error(capsys, args: list[str]) -> str:
    assert cli_main(["human-study", "score", *args]) == 2
    return capsys.readouterr().err


def test_bqa_score_names_bad_answer_files(bqa_study, tmp_path, capsys):
    study, rows = bqa_study["study"], bqa_study["rows"]
    script = _bqa_script(study, rows)
    good = [write_answers(study, r, script[r], tmp_path / f"{r}.json") for r in RATERS]
    base = [str(bqa_study["dir"]), "--out", str(tmp_path / "out")]
    other = write_answers(study, "r3", script["r3"], tmp_path / "other.json", study_id="0123456789abcdef")
    assert "answers to another study" in _score_error(capsys, [*base, str(good[0]), str(good[1]), str(other)])
    err = _score_error(capsys, [*base, str(good[0]), str(good[1]), str(good[1])])
    assert "rater r2 already answered in" in err
    partial = dict(script["r3"])
    del partial[study.items[4].id]
    short = write_answers(study, "r3", partial, tmp_path / "short.json")
    err = _score_error(capsys, [*base, str(good[0]), str(good[1]), str(short)])
    assert f"rater r3 has not answered 1 of their 10 items: [{study.items[4].id}]" in err
    assert "no answers file from rater(s) ['r3']" in _score_error(capsys, [*base, str(good[0]), str(good[1])])
    wrong = write_answers(study, "r3", {**script["r3"], study.items[0].id: 7}, tmp_path / "wrong.json")
    assert "choice 7 is not one of 0..3" in _score_error(
        capsys, [*base, str(good[0]), str(good[1]), str(wrong)]
    )
    stranger = write_answers(study, "r3", script["r3"], tmp_path / "stranger.json", rater_id="eve")
    assert "rater 'eve' is not one of" in _score_error(
        capsys, [*base, str(good[0]), str(good[1]), str(stranger)]
    )


@pytest.fixture(scope="module")
def marine_study(built_samples, tmp_path_factory):
    root = tmp_path_factory.mktemp("ml-study")
    work = built_samples["marinelife16k"].work
    rows = write_marine_predictions(work, "test", root / "qwen.jsonl")
    judge = write_judge_results(rows, root / "judge.json", "qwen", root / "judge-cache.sqlite")
    assert cli_main(["human-study", "make", "marinelife", "--data", str(work), "--split", "test", "--size", "6",
                     "--draw", "stratified",
                     "--seed", "3", "--predictions", str(root / "qwen.jsonl"), "--raters", "a,b,c,d",
                     "--ratings-per-item", "3", "--out", str(root / "study")]) == 0  # fmt: skip
    return {
        "dir": root / "study",
        "study": Study.read(root / "study"),
        "rows": rows,
        "judge": judge,
        "root": root,
    }


def test_marinelife_folders_show_the_judges_rubric_and_no_reference(marine_study):
    study, rows = marine_study["study"], marine_study["rows"]
    assert {s: c["drawn"] for s, c in study.strata.items()} == {"camera_object_open_ended": 3, "caption": 3}
    loads = Counter(r for i in study.items for r in i.raters)
    assert sorted(loads.values()) == [4, 4, 5, 5]  # 6 items x 3 ratings over 4 raters
    by_id = {r["question_id"]: r for r in rows}
    for path in _rater_files(marine_study["dir"]):
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else None
        for item in data["items"] if data else []:
            assert sorted(item) == ["answer_to_rate", "clip", "id", "question", "rubric"]
            assert item["answer_to_rate"] == by_id[item["id"]]["raw_output"]
        for item in study.items:
            if item.id in text:
                reference = by_id[item.id]["reference"]
                assert json.dumps(reference)[1:-1] not in text and reference not in text, (path, item.id)
                for value in by_id[item.id]["evidence"].values():
                    assert f'"{value}"' not in text, (path, value)
        if data:  # the rubric as the judge has it: same version, criteria and the prompt's anchors
            oemu = data["rubrics"]["marinelife_open_ended"]
            assert oemu["version"] == "2" and [c["name"] for c in oemu["criteria"]] == [
                "camera",
                "activity",
                "relation",
            ]
            assert [a["score"] for a in oemu["anchors"]] == [5, 4, 3, 2, 1, 0]
            assert oemu["anchors"][0]["text"] == "correct and complete for this criterion."


def test_marinelife_score_against_the_judge(marine_study, tmp_path, plot_record):
    study = marine_study["study"]
    criteria = {name: [c["name"] for c in r["criteria"]] for name, r in study.rubrics.items()}
    script = expert_script(study)  # a scripted spread with real disagreement
    files = [write_answers(study, r, script[r], tmp_path / f"{r}.json") for r in study.raters]
    out = tmp_path / "report"
    assert cli_main(["human-study", "score", str(marine_study["dir"]), *map(str, files), "--out", str(out),
                     "--judge-results", str(marine_study["root"] / "judge.json")]) == 0  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    tag = {r["question_id"]: int(re.search(r"\[answer (\d+)\]", r["raw_output"]).group(1))
           for r in marine_study["rows"] if r["question_format"] != "multiple_choice"}  # fmt: skip
    for name, names in criteria.items():
        part = metrics["rubrics"][name]
        ids = [i.id for i in study.items if i.shown["rubric"] == name]
        weights = {c["name"]: c["weight"] for c in study.rubrics[name]["criteria"]}
        for j, c in enumerate(names):
            experts = [np.mean([script[r][i][c] for r in study.item(i).raters]) for i in ids]
            judged = [judge_score(tag[i], j) for i in ids]
            stats = part["judge"]["stats"][c]
            assert stats["pearson"] == pytest.approx(pearsonr(judged, experts).statistic)
            assert stats["spearman"] == pytest.approx(spearmanr(judged, experts).statistic)
            assert stats["mae"] == pytest.approx(np.mean(np.abs(np.subtract(judged, experts))))
            reliability = np.array([[script[r][i][c] if r in study.item(i).raters else np.nan for i in ids]
                                    for r in study.raters])  # fmt: skip
            assert part["krippendorff_alpha_interval"][c] == pytest.approx(
                krippendorff.alpha(reliability_data=reliability, level_of_measurement="interval")
            )
            assert [metrics["items"][i]["criteria"][c] for i in ids] == pytest.approx(experts)
        weighted = [np.mean([sum(weights[c] * script[r][i][c] for c in names) / sum(weights.values())
                             for r in study.item(i).raters]) for i in ids]  # fmt: skip
        assert part["expert_mean"]["score"] == pytest.approx(np.mean(weighted))
        with Image.open(out / f"judge_vs_experts_{name}.png") as image:
            assert image.format == "PNG"
    assert_figures_fit(plot_record)
    markdown = (out / "report.md").read_text()
    header, table = read_table(markdown, "Scorer")
    assert header[:3] == ["Scorer", "n", "camera"] and list(table) == [
        "Human (mean of 3 experts)",
        "LLM judge (qwen answers)",
    ]


def test_marinelife_judge_results_must_match_the_study(marine_study, tmp_path, capsys):
    study = marine_study["study"]
    files = [
        write_answers(study, r, {i: {c["name"]: 3 for c in study.rubrics[study.item(i).shown["rubric"]]["criteria"]}
                                 for i in study.assigned(r)}, tmp_path / f"{r}.json")
        for r in study.raters
    ]  # fmt: skip
    judge = json.loads((marine_study["root"] / "judge.json").read_text())
    for task in judge["qwen"].values():
        for item in task["items"]:
            del item["question_id"]
    (tmp_path / "no_ids.json").write_text(json.dumps(judge))
    err = _score_error(capsys, [str(marine_study["dir"]), *map(str, files), "--out", str(tmp_path / "o"),
                                "--judge-results", str(tmp_path / "no_ids.json")])  # fmt: skip
    assert "no question_id (judge results written without --items?)" in err
    (tmp_path / "other_model.json").write_text(
        json.dumps({"gpt": json.loads((marine_study["root"] / "judge.json").read_text())["qwen"]})
    )
    err = _score_error(capsys, [str(marine_study["dir"]), *map(str, files), "--out", str(tmp_path / "o"),
                                "--judge-results", str(tmp_path / "other_model.json")])  # fmt: skip
    assert "judge results are for model 'gpt', the experts rated 'qwen'" in err


def test_make_refuses_what_it_cannot_draw(built_samples, tmp_path, capsys):
    work = built_samples["marinelife16k"].work
    rows = write_marine_predictions(work, "test", tmp_path / "all.jsonl")
    open_ended = [r for r in rows if r["question_format"] != "multiple_choice"]
    partial = tmp_path / "partial.jsonl"
    partial.write_text("".join(json.dumps(r) + "\n" for r in rows if r is not open_ended[2]))
    base = [
        "human-study",
        "make",
        "marinelife",
        "--data",
        str(work),
        "--split",
        "test",
        "--out",
        str(tmp_path / "s"),
    ]
    assert cli_main([*base, "--size", "4", "--predictions", str(partial)]) == 2
    assert f"no answer to 1 of the {len(open_ended)} open-ended questions" in capsys.readouterr().err
    assert cli_main([*base, "--size", "99", "--predictions", str(tmp_path / "all.jsonl")]) == 2
    assert (
        f"the study size 99 is larger than the {len(open_ended)} items available" in capsys.readouterr().err
    )
    assert cli_main([*base, "--size", "4"]) == 2
    assert "give --predictions FILE" in capsys.readouterr().err
    assert (
        cli_main([*base, "--size", "4", "--predictions", str(tmp_path / "all.jsonl"), "--raters", "a,b c"])
        == 2
    )
    assert "rater id 'b c'" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()  # nothing half-written


def test_page_data_cannot_close_its_script_block():
    from builders.human_study.page import render_page

    data = {
        "benchmark": "bqa",
        "items": [{"question": "Is it </script><img src=x onerror=alert(1)> & <!-- ?"}],
    }
    html = render_page(data, "T <b>")
    assert (
        "<img" not in html
        and "<!--" not in html.split("<script id=")[1]
        and "<title>T &lt;b&gt;</title>" in html
    )
    block = html.split('<script id="study-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(block) == data
