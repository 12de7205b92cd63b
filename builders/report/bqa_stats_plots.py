"""A BQA release's statistics as PNGs (``vqabench bqa stats --out``): the paper's Figure 3
distributions (answer groups, gender, age, ethnicity), Figure 5 (what STEP3 removed and STEP4
labelled), the measured clip durations, and how the questions begin (A.4)."""

from __future__ import annotations

import os
from pathlib import Path

from bqa.features import SPLITS
from bqa.stats import DEMOGRAPHICS, TOTAL, ReleaseStats, is_wh, pipeline_shares
from builders.report.document import report_folder
from builders.report.plots import Bar, grouped_bars
from builders.scoring.stats import proportion


def _share_bar(k: int, n: int) -> Bar:
    value, ci = proportion(k, n) if n else (None, None)
    return Bar(value, ci, n)


def write_stats_plots(stats: ReleaseStats, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write the PNGs into ``out_dir`` (the clip durations when the clips were measured); returns the
    files written."""
    out = report_folder(out_dir)
    splits = [s for s in (*SPLITS, TOTAL) if s in stats.splits and stats.splits[s].size]
    written = []
    for key, title in (("answer_group", "answer emotion group"), *((d, d) for d in DEMOGRAPHICS)):
        labels = list(getattr(stats.splits[TOTAL], key))
        written.append(grouped_bars(
            out / f"figure3_{key}.png",
            title=f"BQA release: share of questions by {title}, per split (Figure 3; 95% Wilson intervals)",
            categories=labels,
            series={s: [_share_bar(getattr(stats.splits[s], key).get(label, 0), stats.splits[s].size)
                        for label in labels] for s in splits},
            xlabel=title, ylabel="share of the split's questions", ylim=(0.0, 1.0), legend="split",
        ))  # fmt: skip
    openings = [w for w in stats.splits[TOTAL].openings][:8]
    written.append(grouped_bars(
        out / "question_openings.png",
        title="BQA release: first word of the questions (A.4: mostly wh-words)",
        categories=[f"{w} (wh)" if is_wh(w) else w for w in openings],
        series={s: [_share_bar(stats.splits[s].openings.get(w, 0), stats.splits[s].size) for w in openings]
                for s in splits},
        xlabel="first word", ylabel="share of the split's questions", ylim=(0.0, 1.0), legend="split",
    ))  # fmt: skip
    if stats.pipeline:
        shares = pipeline_shares(stats.pipeline)
        written.append(grouped_bars(
            out / "figure5_pipeline.png",
            title="BQA build: what STEP3 removed and how STEP4 labelled the rest (Figure 5)",
            categories=[what.replace("_", " ") for what, _, _ in shares],  # spaces: the labels wrap
            series={"share of the step's items": [_share_bar(n, of) for _, n, of in shares]},
            xlabel="step outcome", ylabel="share of the items the step saw", ylim=(0.0, 1.0),
        ))  # fmt: skip
    measured = {sp: clips for sp in splits if (clips := stats.splits[sp].clips)}
    if measured:
        bins = list(next(iter(measured.values())).histogram)
        written.append(grouped_bars(
            out / "clip_durations.png",
            title="BQA release: clip durations measured from the clips (the paper: 5-10 s)",
            categories=bins,
            series={sp: [_share_bar(c.histogram.get(b, 0), c.n) for b in bins] for sp, c in measured.items()},
            xlabel="duration", ylabel="share of the split's clips", ylim=(0.0, 1.0), legend="split",
        ))  # fmt: skip
    return written
