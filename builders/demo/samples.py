"""Rebuild the bundled samples offline from their recorded replies, export them in Hub layout and
load them back: what ``vqabench bqa build --sample --replay --export`` and ``vqabench marinelife
build WORK --sample --replay --export`` do, as one call each (the demo and the recording scripts
share them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets

from builders.hub.layout import check_hub_folder
from builders.runs.summary import BuildSummary


@dataclass
class BuiltSample:
    """A rebuilt sample: its work folder, its Hub-layout folder and the configs loaded back from it."""

    work: Path
    hub: Path
    loaded: dict[str, datasets.DatasetDict]  # config -> DatasetDict, from load_dataset(hub, config)
    summary: str  # one line on what the build did
    build: BuildSummary[Any] | None = None  # what the build returned (also in <work>/summary.json)

    def sizes(self, config: str) -> dict[str, int]:
        return {split: len(ds) for split, ds in self.loaded[config].items()}


def rebuild_bqa(work: str | Path, hub: str | Path, cache_dir: str | Path) -> BuiltSample:
    """BQA: STEP1-4 and the split over the bundled BoLD-format sample, every LLM reply replayed."""
    from bqa.export import export_release
    from builders.demo.bqa_sample import build_options, load_recording
    from builders.pipelines.bqa.runner import build

    recording = load_recording()
    with recording.replay_client() as client:
        summary = build(work, build_options(recording), client)
    if not summary.ok or summary.splits is None:
        raise RuntimeError(f"the BQA sample did not rebuild from its recorded replies:\n{summary.format()}")
    export_release(work, hub, cache_dir=cache_dir, check=False)
    loaded = check_hub_folder(hub, cache_dir=cache_dir)
    run = summary.run
    line = (
        f"{summary.inputs} BoLD rows -> {sum(s['rows'] for s in summary.splits.values())} questions "
        f"({summary.details.difficulty.get('Easy', 0)} Easy / {summary.details.difficulty.get('Hard', 0)} Hard); "
        f"{run.cache_hits if run else 0} recorded replies used, {run.api_calls if run else 0} API calls"
    )
    return BuiltSample(Path(work), Path(hub), loaded, line, summary)


def rebuild_marinelife(work: str | Path, hub: str | Path, cache_dir: str | Path) -> BuiltSample:
    """MarineLife-16K: caption engine and QA generation over the bundled sample, every reply replayed."""
    from builders.pipelines.marinelife.runner import build, replay_client
    from marinelife16k.export import export_release
    from marinelife16k.sample import sample_attributes_path, sample_root, sample_video_root

    client, recorded_config, recorded_note = replay_client(sample_root())
    with client:
        summary = build(work, client, attributes=sample_attributes_path(), video_root=sample_video_root(),
                        config=recorded_config, note=recorded_note)  # fmt: skip
    if not summary.ok:
        raise RuntimeError(
            f"the MarineLife-16K sample did not rebuild from its recorded replies:\n{summary.format()}"
        )
    export_release(work, hub, cache_dir=cache_dir, check=False)
    loaded = check_hub_folder(hub, cache_dir=cache_dir)
    captions, qa, run = summary.details.captions, summary.details.qa, summary.run
    line = (
        f"{summary.inputs} videos -> {captions['kept']} captions kept, {captions['refined']} "
        f"refined -> {qa['records']} questions ({qa['multiple_choice']} multiple-choice, "
        f"{qa['open_ended']} open-ended); {run.cache_hits if run else 0} recorded replies used, "
        f"{run.api_calls if run else 0} API calls"
    )
    return BuiltSample(Path(work), Path(hub), loaded, line, summary)
