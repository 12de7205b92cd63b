"""The papers' human-study designs as one flag (``--paper-design``) and the random draw both papers
used, which is the default. Expected values are the papers' words: MarineLife-16K "six domain experts,
randomly selecting 100 questions ... each question was rated by three experts"; BQA "random sampling
of 100 ... conducted by three people"."""

from __future__ import annotations

from collections import Counter

import pytest

from builders.cli import main as cli_main
from builders.human_study.designs import PAPER_DESIGNS, Settings, resolve
from builders.human_study.draw import assign
from builders.human_study.study import Study

DEFAULTS = Settings(size=100, raters=["r1", "r2", "r3"], ratings_per_item=None, draw="random")


def _paper(benchmark: str, **given) -> Settings:
    options = {"size": None, "raters": None, "ratings_per_item": None, "draw": None, **given}
    return resolve(benchmark, paper=True, defaults=DEFAULTS, **options)


def test_marinelife_paper_design_six_experts_100_items_three_each():
    settings = _paper("marinelife16k")
    assert (settings.size, settings.ratings_per_item, settings.draw) == (100, 3, "random")
    assert settings.raters == ["r1", "r2", "r3", "r4", "r5", "r6"]
    assert "six domain experts" in settings.design
    items = [f"q{k}" for k in range(100)]
    who = assign(items, settings.raters, settings.ratings_per_item)
    assert all(len(set(r)) == 3 for r in who.values())  # three different experts per question
    assert Counter(r for raters in who.values() for r in raters) == dict.fromkeys(
        settings.raters, 50
    )  # 300 / 6
    named = _paper("marinelife16k", raters=["ana", "ben", "cy", "di", "ed", "flo"])
    assert named.raters[0] == "ana" and named.size == 100


def test_bqa_paper_design_three_people_rate_all_100():
    settings = _paper("bqa")
    assert (settings.size, settings.raters, settings.ratings_per_item, settings.draw) == (
        100, ["r1", "r2", "r3"], 3, "random",
    )  # fmt: skip
    assert PAPER_DESIGNS["bqa"].source.startswith("100 test items selected at random")


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"size": 50}, "--size 50 (the design: 100)"),
        ({"ratings_per_item": 2}, "--ratings-per-item 2 (the design: 3)"),
        ({"draw": "stratified"}, "--draw stratified (the design: random)"),
        ({"raters": ["a", "b", "c"]}, "--raters gives 3 raters (the design: 6)"),
    ],
)
def test_options_that_contradict_the_design_are_refused(given, named):
    with pytest.raises(ValueError, match="--paper-design follows the MarineLife-16K paper's design") as err:
        _paper("marinelife16k", **given)
    assert named in str(err.value)
    assert _paper("marinelife16k", size=100, draw="random").size == 100  # agreeing options are fine
    with pytest.raises(ValueError, match="--draw 'even': expected one of random, stratified"):
        resolve(
            "bqa", paper=False, size=None, raters=None, ratings_per_item=None, draw="even", defaults=DEFAULTS
        )


def test_cli_applies_the_design_and_defaults_to_a_random_draw(built_samples, tmp_path, capsys):
    hub = built_samples["bqa"].hub
    base = ["human-study", "make", "bqa", "--data", str(hub), "--split", "train"]
    # the bundled sample is far smaller than the paper's 100 items: the preset's size is what is refused
    assert cli_main([*base, "--paper-design", "--out", str(tmp_path / "p")]) == 2
    assert "the study size 100 is larger than the" in capsys.readouterr().err
    assert cli_main([*base, "--paper-design", "--size", "10", "--out", str(tmp_path / "p")]) == 2
    assert "--size 10 (the design: 100)" in capsys.readouterr().err
    assert cli_main([*base, "--size", "6", "--seed", "2", "--out", str(tmp_path / "r")]) == 0
    study = Study.read(tmp_path / "r")
    assert study.draw == "random" and len(study.items) == 6 and "random draw" in capsys.readouterr().out
    stratified = tmp_path / "s"
    assert (
        cli_main([*base, "--size", "6", "--seed", "2", "--draw", "stratified", "--out", str(stratified)]) == 0
    )
    assert Study.read(stratified).draw == "stratified" and Study.read(stratified).study_id != study.study_id
