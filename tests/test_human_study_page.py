"""The rater pages in a real browser (Debian's Chromium, headless, through selenium and the system
chromedriver): a study from each bundled sample, every item answered with the keyboard and the mouse
as a person would, a reload midway that keeps the progress, the answers downloaded, and three such
raters scored through ``vqabench human-study score`` against a hand-worked kappa and the reference
libraries. Screenshots of both pages are kept as artifacts (folder printed; set
``VQABENCH_TEST_ARTIFACTS`` to choose it). Without Chromium this test fails: CI installs it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from human_study_helpers import (
    SCRIPTED_KAPPA,
    expert_script,
    judge_score,
    position_script,
    write_judge_results,
    write_marine_predictions,
)
from PIL import Image
from scipy.stats import pearsonr
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from statsmodels.stats.inter_rater import fleiss_kappa

from builders.cli import main as cli_main
from builders.human_study.study import Study
from builders.testing.browser import headless_chromium, missing_browser

pytestmark = pytest.mark.timeout(600)
RATERS = ["r1", "r2", "r3"]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    chosen = os.environ.get("VQABENCH_TEST_ARTIFACTS")
    folder = (Path(chosen) if chosen else tmp_path_factory.mktemp("artifacts")) / "human-study"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nhuman-study page screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    assert missing_browser() is None, missing_browser()  # a failure, not a skip: CI installs Chromium
    downloads = tmp_path_factory.mktemp("downloads")
    with headless_chromium(downloads) as driver:
        yield driver, downloads


def _wait(driver, condition, what: str, timeout: float = 60):
    # A bound on a hang, not a measure of speed: generous, so a loaded machine only makes it slower.
    return WebDriverWait(driver, timeout).until(lambda d: condition(d), message=what)


def _text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def _open(driver, page: Path) -> None:
    driver.get(page.resolve().as_uri())
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === 'true'"), "page ready")


def _keys(driver, *keys: str) -> None:
    ActionChains(driver).send_keys(*keys).perform()


def _check_offline_and_clip(driver) -> None:
    """Only local files were loaded, and the clip plays muted, looping, without error."""
    urls = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(u.startswith(("file://", "blob:")) for u in urls), urls
    _wait(
        driver,
        lambda d: d.execute_script("return document.getElementById('clip').readyState >= 2"),
        "clip loads",
    )
    video = driver.execute_script(
        "const v = document.getElementById('clip'); return [v.muted, v.loop, v.error === null, v.src]"
    )
    assert video[:3] == [True, True, True] and video[3].startswith("file://"), video


def _click(driver, selector: str) -> None:
    """Scroll the element into the middle of the window, as a person would, and click it."""
    element = driver.find_element(By.CSS_SELECTOR, selector)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def _download(driver, downloads: Path, name: str, keyboard: bool = False) -> dict:
    """Download the answers with a click, or (``keyboard``) by focusing the button and pressing Enter."""
    target = downloads / name
    target.unlink(missing_ok=True)
    button = driver.find_element(By.ID, "download")
    button.send_keys(Keys.ENTER) if keyboard else button.click()
    _wait(driver, lambda d: target.is_file() and not list(downloads.glob("*.crdownload")), f"download {name}")
    _wait(driver, lambda d: _complete_json(target), f"download {name} complete")
    return json.loads(target.read_text(encoding="utf-8"))


def _complete_json(path: Path) -> bool:
    """Whether the file holds a whole JSON document yet (Chromium may still be writing it)."""
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return True


def _storage_key(study: Study, rater: str) -> str:
    """Where a rater's page keeps its progress (the page's own KEY)."""
    return f"vqabench-human-study:{study.study_id}:{rater}"


def _reload_and_step_back(driver, position: int, n: int, storage_key: str) -> None:
    """Reload the page at ``position``: it reopens there with every answer so far, then go back one."""
    # The page saves on every answer; wait until this page's storage holds the position reached
    # (a loaded machine may still be handling the last key), then reload into a new document.
    saved_index = f"return JSON.parse(localStorage.getItem({storage_key!r}) || 'null').index;"
    _wait(driver, lambda d: d.execute_script(saved_index) == position, f"progress saved at {position}")
    # Close and reopen: leave the page (its pagehide handler saves too), then load it again.
    # Chromium 156 sometimes gives a file:// document opened right after another a stale view of
    # localStorage (seen with a 6-line page too: one load in ~5 reads a missing key, the next load
    # reads it again), so a reopen that sees no saved progress at all is retried, up to 5 times;
    # the page must then restore the position and every answer from what it saved.
    page = driver.current_url
    for _ in range(5):
        driver.get("about:blank")
        driver.get(page)
        _wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === 'true'"), "reopen")
        if driver.execute_script(f"return localStorage.getItem({storage_key!r}) !== null;"):
            break
    assert _text(driver, "position") == f"{position + 1} / {n}"
    assert _text(driver, "answered") == f"{position} of {n} answered"
    _keys(driver, Keys.ARROW_LEFT)


def _answer_bqa(
    driver, downloads: Path, folder: Path, rater: str, choices: dict[str, int], shots: Path | None
):
    study = Study.read(folder)
    _open(driver, folder / "raters" / rater / "index.html")
    _check_offline_and_clip(driver)
    order = study.assigned(rater)
    n = len(order)
    for position, item_id in enumerate(order):
        if position == n // 2:  # close and reopen midway: nothing is lost
            _reload_and_step_back(
                driver, position, n, _storage_key(study, rater)
            )  # the previous answer is still chosen
            pressed = driver.find_elements(By.CSS_SELECTOR, "#task button[aria-pressed='true']")
            assert [b.get_attribute("data-choice") for b in pressed] == [str(choices[order[position - 1]])]
            _keys(driver, Keys.ARROW_RIGHT)
            if shots:
                driver.save_screenshot(str(shots / "bqa-page-after-reload.png"))
        assert _text(driver, "position") == f"{position + 1} / {n}"
        assert _text(driver, "question") == study.item(item_id).shown["question"]
        if position % 2 == 0:
            _keys(driver, str(choices[item_id] + 1))  # keys 1-4
        else:
            driver.find_element(By.CSS_SELECTOR, f"#task button[data-choice='{choices[item_id]}']").click()
        if position < n - 1:
            _wait(driver, lambda d, p=position: _text(d, "position") == f"{p + 2} / {n}", "next item")
    assert _text(driver, "answered") == f"{n} of {n} answered"
    _keys(driver, "r")  # replay from the start
    if shots:
        driver.save_screenshot(str(shots / "bqa-page.png"))
    return _download(driver, downloads, f"answers-{study.study_id}-{rater}.json")


def test_bqa_page_in_chromium(built_samples, browser, artifacts, tmp_path):
    driver, downloads = browser
    study_dir = tmp_path / "study"
    assert cli_main(["human-study", "make", "bqa", "--data", str(built_samples["bqa"].hub), "--split", "train",
                     "--size", "10", "--seed", "11", "--out", str(study_dir)]) == 0  # fmt: skip
    study = Study.read(study_dir)
    script = position_script(study)
    files = []
    for rater in RATERS:
        exported = _answer_bqa(
            driver, downloads, study_dir, rater, script[rater], artifacts if rater == "r1" else None
        )
        assert exported["rater"] == rater and exported["complete"] and exported["study_id"] == study.study_id
        got = {a["item_id"]: a["choice"] for a in exported["answers"]}
        assert got == script[rater]
        assert all(a["time_ms"] > 0 for a in exported["answers"])
        files.append(downloads / f"answers-{study.study_id}-{rater}.json")
    out = tmp_path / "report"
    assert cli_main(["human-study", "score", str(study_dir), *map(str, files), "--out", str(out)]) == 0
    agreement = json.loads((out / "metrics.json").read_text())["agreement"]
    table = np.array([np.bincount([script[r][i.id] for r in RATERS], minlength=4) for i in study.items])
    reliability = np.array([[script[r][i.id] for i in study.items] for r in RATERS], dtype=float)
    alpha = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert agreement["fleiss_kappa"] == pytest.approx(SCRIPTED_KAPPA) == pytest.approx(fleiss_kappa(table))
    assert agreement["krippendorff_alpha_nominal"] == pytest.approx(alpha)
    print(f"BQA: Fleiss' kappa {agreement['fleiss_kappa']:.6f} (hand 37/112 = {SCRIPTED_KAPPA:.6f}, statsmodels "
          f"{fleiss_kappa(table):.6f}); Krippendorff's alpha {agreement['krippendorff_alpha_nominal']:.6f} "
          f"(krippendorff {alpha:.6f})")  # fmt: skip
    shutil.copytree(out, artifacts / "bqa-report", dirs_exist_ok=True)
    _check_screenshot(artifacts / "bqa-page.png")


def _answer_marine(driver, downloads: Path, folder: Path, rater: str, scores: dict, shots: Path | None):
    study = Study.read(folder)
    _open(driver, folder / "raters" / rater / "index.html")
    _check_offline_and_clip(driver)
    order = study.assigned(rater)
    n = len(order)
    for position, item_id in enumerate(order):
        if position == n // 2:
            _reload_and_step_back(driver, position, n, _storage_key(study, rater))
            pressed = {
                b.find_element(By.XPATH, "ancestor::fieldset").get_attribute("data-criterion"): int(b.text)
                for b in driver.find_elements(By.CSS_SELECTOR, "#task button[aria-pressed='true']")
            }
            assert pressed == scores[order[position - 1]]
            _keys(driver, Keys.ARROW_RIGHT)
        assert _text(driver, "position") == f"{position + 1} / {n}"
        item = study.item(item_id)
        assert driver.find_element(By.ID, "answer-to-rate").text == item.shown["answer_to_rate"].strip()
        if position % 2 == 0:  # keyboard: one digit per criterion (the highlight moves on), Enter for next
            _keys(driver, *(str(s) for s in scores[item_id].values()))
            if shots and position == 0:
                driver.save_screenshot(str(shots / "marinelife-page.png"))  # a laptop's window
                size = driver.get_window_size()
                driver.set_window_size(size["width"], 1500)  # and the whole rubric, anchors included
                driver.save_screenshot(str(shots / "marinelife-page-full.png"))
                driver.set_window_size(size["width"], size["height"])
            if position < n - 1:
                _keys(driver, Keys.ENTER)
        else:  # mouse: click each criterion's score, then Next
            for criterion, s in scores[item_id].items():
                _click(driver, f"fieldset[data-criterion='{criterion}'] button[data-score='{s}']")
            if position < n - 1:
                _click(driver, "#next")
        if position < n - 1:
            _wait(driver, lambda d, p=position: _text(d, "position") == f"{p + 2} / {n}", "next item")
    assert _text(driver, "answered") == f"{n} of {n} answered"
    return _download(driver, downloads, f"answers-{study.study_id}-{rater}.json", keyboard=True)


def test_marinelife_page_in_chromium(built_samples, browser, artifacts, tmp_path):
    driver, downloads = browser
    work = built_samples["marinelife16k"].work
    rows = write_marine_predictions(work, "test", tmp_path / "qwen.jsonl")
    write_judge_results(rows, tmp_path / "judge.json", "qwen", tmp_path / "judge.sqlite")
    study_dir = tmp_path / "study"
    assert cli_main(["human-study", "make", "marinelife", "--data", str(work), "--split", "test", "--size", "6",
                     "--seed", "5", "--predictions", str(tmp_path / "qwen.jsonl"), "--draw", "stratified",
                     "--out", str(study_dir)]) == 0  # fmt: skip
    study = Study.read(study_dir)
    script = expert_script(study)
    files = []
    for rater in RATERS:
        exported = _answer_marine(
            driver, downloads, study_dir, rater, script[rater], artifacts if rater == "r1" else None
        )
        assert {a["item_id"]: a["scores"] for a in exported["answers"]} == script[rater]
        files.append(downloads / f"answers-{study.study_id}-{rater}.json")
    out = tmp_path / "report"
    assert cli_main(["human-study", "score", str(study_dir), *map(str, files), "--out", str(out),
                     "--judge-results", str(tmp_path / "judge.json")]) == 0  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    tags = {
        r["question_id"]: int(r["raw_output"].split("]")[0].split()[-1])
        for r in rows
        if r["raw_output"] != "A"
    }
    for name, part in metrics["rubrics"].items():
        ids = [i.id for i in study.items if i.shown["rubric"] == name]
        for j, c in enumerate(study.rubrics[name]["criteria"]):
            experts = [np.mean([script[r][i][c["name"]] for r in RATERS]) for i in ids]
            judged = [judge_score(tags[i], j) for i in ids]
            assert part["judge"]["stats"][c["name"]]["pearson"] == pytest.approx(
                pearsonr(judged, experts).statistic
            )
            reliability = np.array([[script[r][i][c["name"]] for i in ids] for r in RATERS], dtype=float)
            expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="interval")
            assert part["krippendorff_alpha_interval"][c["name"]] == pytest.approx(expected)
            print(f"MarineLife {name}.{c['name']}: alpha {part['krippendorff_alpha_interval'][c['name']]:.6f} "
                  f"(krippendorff {expected:.6f})")  # fmt: skip
    shutil.copytree(out, artifacts / "marinelife-report", dirs_exist_ok=True)
    _check_screenshot(artifacts / "marinelife-page.png")


def _check_screenshot(path: Path) -> None:
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size[0] >= 1000
        assert len(image.convert("RGB").resize((64, 64)).getcolors(4096)) > 20  # a drawn page, not a blank
