"""``vqabench marinelife stats`` and the card's statistics, against numbers worked out by hand.

A release of two bundled sample videos: the green sea turtle (MVK--mvk-0103) and the kelp
(MSC--msc-0052, whose movement_behavior is about a garibaldi, so it gets no central_object_motion
question). Words were counted by hand from the captions in builders/testing/samples/make_marinelife_sample.py;
the durations come from a full sequential PyAV decode (frames / frame rate), not from the code under test.
"""

from __future__ import annotations

import json

import av
import pytest
from PIL import Image
from plot_checks import assert_figures_fit

from builders.cli import main as cli_main
from marinelife16k.annotations import read_annotations
from marinelife16k.card import card_body
from marinelife16k.sample import (
    sample_attributes_path,
    sample_motion_not_asked,
    sample_records,
    sample_video_root,
)
from marinelife16k.stats import release_stats, sentence_count, word_count
from marinelife16k.workfolder import read_release, write_release

TURTLE, KELP = "MVK--mvk-0103", "MSC--msc-0052"


def _decoded_seconds(path) -> float:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.decode(stream))
        return frames / float(stream.average_rate)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    rows = [r for r in read_annotations(sample_attributes_path()) if r["id"] in (TURTLE, KELP)]
    records = [r for r in sample_records() if r["id"] in (TURTLE, KELP)]
    work = tmp_path_factory.mktemp("two") / "work"
    write_release(
        work, rows, records, motion_not_asked=sample_motion_not_asked(rows, records),
        splits={TURTLE: "test", KELP: "test"}, video_root=sample_video_root(),
    )  # fmt: skip
    seconds = {r["id"]: _decoded_seconds(sample_video_root() / r["video_path"]) for r in rows}
    return {"work": work, "rows": rows, "seconds": seconds}


def test_caption_rules_by_hand():
    assert word_count("A turtle, swimming slowly.  It eats.") == 6
    assert sentence_count("A turtle swims. It eats.") == 2
    assert sentence_count("A turtle swims; the camera pans left.") == 1
    assert sentence_count("A turtle swims") == 1 and sentence_count("  ") == 0


def test_stats_of_two_videos_equal_the_hand_worked_numbers(two, tmp_path, capsys, plot_record):
    out = tmp_path / "stats"
    assert cli_main(["marinelife", "stats", "--data", str(two["work"]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    stats = json.loads((out / "metrics.json").read_text())
    total = stats["splits"]["total"]
    assert sorted(two["seconds"].values()) == [3.0, 5.0]  # the sample writes 3-5 s clips at 25 fps
    assert total["hours"] == pytest.approx(8.0 / 3600)
    assert total["seconds"] == {"mean": 4.0, "min": 3.0, "max": 5.0}
    assert total["videos"] == total["video_text_pairs"] == 2
    # the turtle's caption: 57 words, one sentence; the kelp's: 45 words, one sentence
    assert total["caption_words"] == {"mean": 51.0, "min": 45, "max": 57, "distribution": {"45": 1, "57": 1}}
    assert total["sentences_per_caption"] == {"mean": 1.0, "min": 1, "max": 1, "distribution": {"1": 2}}
    # turtle: 6 mandatory + central_object_motion + environment + lighting; kelp: no central_object_motion
    assert (total["questions"], total["multiple_choice"], total["open_ended"]) == (17, 13, 4)
    assert total["per_type"]["central_object_motion"] == 1 and total["per_type"]["lighting"] == 2
    assert total["per_dimension"]["OBK"] == 1 and total["per_dimension"]["OEMU"] == 2
    assert stats["central_object_motion"] == {
        "asked": 1, "movement_behavior_empty": 0, "not_about_the_central_object": 1,
    }  # fmt: skip
    assert stats["objects"] == {
        "object 1": {"green sea turtle": 1, "kelp": 1},
        "object 2": {"garibaldi": 1, "hard coral": 1},
        "object 3": {"sea urchin": 1, "yellow tang": 1},
        "object 4": {},
    }
    assert stats["objects_per_video"] == {"1": 0, "2": 0, "3": 2, "4": 0}
    assert stats["attributes"]["video_clarity"] == {"clear": 2}
    assert stats["attributes"]["camera_position"] == {"full scene": 2}
    assert stats["attributes"]["lighting"] == {"bright natural sunlight": 1, "sunbeams through the canopy": 1}
    assert "| sentences per caption (mean) | 1.00 | 3.4 |" in printed
    assert "| caption length in words (mean) | 51.0 (min 45, max 57) | 44 |" in printed
    assert "| videos | 2 | 2,000 |" in printed
    assert "3.4, but its captioner and refiner prompts ask for" in printed  # the paper against its own rule
    for name in ("stats_objects.png", "stats_attributes.png", "stats_captions.png", "stats_questions.png"):
        with Image.open(out / name) as image:
            assert image.size[0] > 600 and len(image.convert("RGB").getcolors(maxcolors=1 << 20)) > 20
    assert_figures_fit(plot_record, expected=4)  # the one plot helper's rules (tests/plot_checks.py)
    questions = next(r for r in plot_record if r["path"].endswith("stats_questions.png"))
    assert questions["legend_titles"] == ["split"]  # its series are splits (it said "model")


def test_card_shows_the_same_statistics(two):
    release = read_release(two["work"])
    body = card_body(release)
    assert (
        "| hours of video (measured from the clips) | 0.002 (2 clips; mean 4.0 s, 3.0-5.0 s) | 18.48 |"
        in body
    )
    assert "| caption length in words (mean) | 51.0 (min 45, max 57) | 44 |" in body
    assert "### Where the paper's figures disagree with its rules" in body
    assert "GPT-5.5" in body and "| Qwen2.5-VL-72B | Open-source VLMs (31B - 78B) | ViT/Qwen2.5 |" in body
    # the card's numbers are release_stats' (one computation), hours from the clips
    stats = release_stats(release.videos, release.records, durations=two["seconds"])
    assert stats["splits"]["total"]["hours"] == pytest.approx(8.0 / 3600)


def test_a_hub_folder_gives_the_work_folders_statistics(built_samples):
    from builders.report.marinelife_stats import collect_stats

    sample = built_samples["marinelife16k"]
    _, from_work = collect_stats(sample.work)
    _, from_hub = collect_stats(sample.hub)
    assert from_hub == from_work
    assert from_work["splits"]["total"]["videos"] == 24 and from_work["splits"]["total"]["questions"] == 203
