"""``vqabench marinelife stats``: a release's statistics as the paper reports its own (Table 1 row,
"Statistics", Figure 5), beside the paper's figures, as Markdown, JSON and PNG plots.

The numbers are :func:`marinelife16k.stats.release_stats` over every split of a work folder or an
exported Hub-layout folder (or a Hub repo id), the hours measured from the clips; the tables are
:func:`marinelife16k.stats.stat_tables`, the same ones the dataset card shows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builders.hub.source import DataSource
from builders.report.document import Report, Section, report_folder, write_report
from builders.report.plots import Bar, count_histograms, frequency_panels, grouped_bars
from builders.report.provenance import as_source
from builders.report.tables import markdown_table
from marinelife16k.data import open_split, split_names
from marinelife16k.stats import TOTAL, clip_durations, release_stats, stat_tables
from marinelife16k.vocabulary import QUESTION_TYPES


def collect_stats(
    data: str | os.PathLike[str] | DataSource, *, measure: bool = True
) -> tuple[DataSource, dict[str, Any]]:
    """Every split's videos and questions from ``data``, and :func:`release_stats` over them;
    ``measure``: read every clip for the hours of video (else they are "not measured")."""
    source = as_source(data)
    videos: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    sources: dict[str, Any] = {}
    for split in split_names(source.folder):
        opened = open_split(source.folder, split, check_videos=measure)
        videos += [{**row, "split": split} for row in opened.videos.values()]
        records += opened.rows
        if measure:
            sources.update({video_id: opened.video(video_id) for video_id in opened.videos})
    if not videos:
        raise ValueError(f"{source.label}: no videos in any split")
    durations = clip_durations(sources) if measure else None
    return source, release_stats(videos, records, durations=durations)


def stats_markdown(stats: Mapping[str, Any], top: int = 10) -> list[str]:
    """The statistics as Markdown blocks (titles, tables, notes) and the paper's own disagreements."""
    blocks: list[str] = []
    for table in stat_tables(stats, top):
        blocks += [f"**{table.title}**", markdown_table(table.header, table.rows, "l" * len(table.header))]
        if table.note:
            blocks.append(table.note)
    blocks.append("**Where the paper's figures disagree with its rules**")
    blocks.append("\n".join(f"- {note}" for note in stats["paper_notes"]))
    return blocks


def _figures(stats: Mapping[str, Any], out: Path, top: int) -> list[tuple[Path, str]]:
    total = stats["splits"][TOTAL]
    splits = [name for name in stats["splits"] if name != TOTAL]
    figures = [
        (
            frequency_panels(
                out / "stats_objects.png",
                title="MarineLife-16K object instances: frequency per object slot (objects 1-4)",
                panels=stats["objects"],
                top=top,
            ),
            "Object instance frequencies, objects 1-4",
        ),
        (
            frequency_panels(
                out / "stats_attributes.png",
                title="MarineLife-16K fine-grained attribute values: frequency",
                panels=stats["attributes"],
                top=top,
                columns=3,
            ),
            "Fine-grained attribute value frequencies",
        ),
        (
            count_histograms(
                out / "stats_captions.png",
                title="MarineLife-16K captions: length in words and sentences per caption",
                panels={
                    "words per caption": (total["caption_words"]["distribution"], "words"),
                    "sentences per caption": (total["sentences_per_caption"]["distribution"], "sentences"),
                },
                references={
                    "words per caption": (stats["paper"]["caption_words"], "paper"),
                    "sentences per caption": (stats["paper"]["sentences_per_caption"], "paper"),
                },
            ),
            "Caption length and sentences per caption",
        ),
        (
            grouped_bars(
                out / "stats_questions.png",
                title="MarineLife-16K questions per type and split",
                categories=list(QUESTION_TYPES),
                series={
                    s: [Bar(stats["splits"][s]["per_type"][t], None, None) for t in QUESTION_TYPES]
                    for s in splits
                },
                xlabel="question type",
                ylabel="questions",
                legend="split",
            ),
            "Questions per type and split",
        ),
    ]
    return figures


def write_marinelife_stats(
    data: str | os.PathLike[str] | DataSource,
    out_dir: str | os.PathLike[str],
    *,
    measure: bool = True,
    top: int = 10,
) -> tuple[Report, list[str]]:
    """Write ``report.md`` (the tables), ``metrics.json`` (every statistic) and the PNGs to
    ``out_dir``; also return the Markdown blocks (what the command prints)."""
    source, stats = collect_stats(data, measure=measure)
    out = report_folder(out_dir)
    blocks = stats_markdown(stats, top)
    intro = [f"Data: {source.label}. Every number is counted from the release's files; hours from the clips."]
    report = write_report(
        out,
        "MarineLife-16K statistics",
        intro,
        [Section("Statistics", blocks, _figures(stats, out, top))],
        {"benchmark": "MarineLife-16K", "data": source.provenance(), **stats},
    )
    return report, [*intro, *blocks]
