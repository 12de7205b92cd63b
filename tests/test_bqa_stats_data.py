"""``vqabench bqa stats --data``: the same statistics from an exported Hub-layout folder as from the work
folder that built it (clips measured from the Parquet's embedded bytes; Self-BLEU of the same questions),
and what only the build knows (Figure 5: STEP3's removals) said to need the work folder."""

from __future__ import annotations

import json

import pytest
from bqa_work import write_work_folder
from processes import vqabench

from bqa.export import export_release
from bqa.stats import BUILD_ONLY
from bqa.workfolder import ReleaseMeta, read_release, write_release
from builders.cli import main as cli_main

PIPELINE = {
    "filter": {"in": 50, "kept": 38, "rejected": {"rule: no question mark": 7, "llm: answer leak": 5}}
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    work = tmp_path_factory.mktemp("bqa-stats-work")
    write_work_folder(work, 10)
    release = read_release(work)  # the same release, now with what the build recorded of STEP3
    write_release(work, release.splits, ReleaseMeta(seed=5, extra={"pipeline": PIPELINE}))
    hub = tmp_path_factory.mktemp("bqa-stats-hub") / "BQA"
    export_release(work, hub, self_bleu=False, cache_dir=tmp_path_factory.mktemp("cache"))
    return work, hub


def _stats(data, capsys) -> tuple[dict, str]:
    assert cli_main(["bqa", "stats", "--data", str(data), "--json"]) == 0
    as_json = capsys.readouterr().out
    assert cli_main(["bqa", "stats", "--data", str(data), "--no-clips", "--no-self-bleu"]) == 0
    return json.loads(as_json), capsys.readouterr().out


def test_exported_folder_gives_the_work_folders_numbers(folders, capsys):
    work, hub = folders
    from_work, work_text = _stats(work, capsys)
    from_hub, hub_text = _stats(hub, capsys)
    assert from_work.pop("pipeline") == PIPELINE and from_hub.pop("pipeline") is None
    assert from_hub == from_work  # sizes, Easy/Hard, reasons, groups, demographics, Self-BLEU, clips measured
    total = from_hub["splits"]["total"]
    assert total["size"] == 38 and total["clips"]["n"] == 38 and total["self_bleu"] is None
    assert from_hub["splits"]["test"]["size"] == 10 and from_hub["splits"]["test"]["self_bleu"] is not None
    assert "What the pipeline kept (Figure 5):" in work_text and BUILD_ONLY not in work_text
    assert BUILD_ONLY in hub_text and "Figure 5" in hub_text
    # every printed table up to Figure 5 is the same
    assert work_text.split("What the pipeline kept")[0] == hub_text.split(BUILD_ONLY)[0]


def test_revision_with_a_folder_is_refused_as_for_marinelife(folders):
    _, hub = folders
    done = vqabench(["bqa", "stats", "--data", str(hub), "--revision", "v1"])
    assert done.returncode != 0 and "is a local folder; --revision is for Hub repo ids" in done.stderr
