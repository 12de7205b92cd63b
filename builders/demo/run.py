"""The demo itself: six timed steps, offline, into one output folder.

1. BQA: rebuild the bundled sample from its recorded pipeline replies, export it in Hub layout,
   check and load it back with ``load_dataset``.
2. MarineLife-16K: the same (configs ``qa`` and ``videos``).
3. Frames: 16 uniform frames of a BQA clip and 8 of a MarineLife-16K video, from the loaded
   datasets (``Video(decode=False)``, no torch), saved as contact sheets.
4. Baseline predictions: the evaluation runners over every split, answered from the bundled replies
   of a *scripted baseline* (not a model): BQA in the paper's two styles (``single_word`` and the
   answer-leaking two-stage ``multimodal_cot``), MarineLife-16K every question.
5. Scoring with every metric (:class:`builders.demo.scoring.Metrics`), on the test split (the
   papers' convention) and on all splits pooled (the sample's test split is tiny): BQA accuracy with
   bias breakdowns and leakage, Self-BLEU per split, MarineLife-16K accuracy per dimension, the judge
   (OEMU, captions by camera) replayed from its bundled replies.
6. Reports for the test split (``builders.report``) and ``reports/scores.json`` with every result.

Then it prints the paper-style tables (:mod:`builders.report.paper_tables`), what was built where and what to
run next, and writes the same to ``summary.md``.

Output folder layout::

    <out>/work/{bqa,marinelife16k}/           pipeline work folders (rebuilt by replay)
    <out>/hub/{bqa,marinelife16k}/            exported Hub-layout folders (load_dataset works on them)
    <out>/frames/*.jpg                        contact sheets of the sampled frames
    <out>/eval/...                            evaluation runners' resumable state
    <out>/predictions/bqa/<split>.<style>.jsonl, predictions/marinelife16k/<split>.jsonl
    <out>/reports/{bqa,marinelife16k}/        report.md, metrics.json, PNGs (test split)
    <out>/reports/scores.json                 every metric result, test split and all splits
    <out>/summary.md                          the tables, timings and next steps
"""

from __future__ import annotations

import logging
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import builders
from bqa.predictions import accuracy_inputs as bqa_inputs
from bqa.vocabulary import OTHERS
from builders.demo.baseline import predict_bqa, predict_marinelife
from builders.demo.recordings import SCRIPTED_NOTE, bqa_baseline, marine_baseline, marine_judge
from builders.demo.samples import BuiltSample, rebuild_bqa, rebuild_marinelife
from builders.demo.scoring import Metrics
from builders.files.folders import claim_folder, remove_entries
from builders.files.jsonio import read_jsonl, write_json_atomic, write_text_atomic
from builders.llm import ReplayMissError
from builders.report import paper_tables
from builders.report.document import relative_paths
from builders.report.model_groups import ModelRow, arrange
from builders.report.tables import markdown_table
from builders.scoring.judge_results import results_from_dict
from builders.video.sampler import Frames
from marinelife16k.predictions import accuracy_inputs as marine_inputs

MARKER = ".vqabench-demo"
OWNED = ("work", "hub", "frames", "eval", "predictions", "reports", "cache", "summary.md")
SCOPES: dict[str, tuple[str, ...]] = {"test": ("test",), "all": ("train", "validation", "test")}
BQA_MODEL = "scripted-baseline"
BQA_MODELS = {"single_word": BQA_MODEL, "multimodal_cot": f"{BQA_MODEL} (multimodal_cot)"}
MARINE_MODEL = "scripted-baseline"
BQA_FRAMES, MARINE_FRAMES = 16, 8  # the frames step's samples (the runners' come from the recordings)
STEP_COUNT = 6
SCOPE_LABELS: dict[str, str] = {"test": "test split", "all": "all splits"}
STYLE_LABELS: dict[str, str] = {
    "single_word": "single word",
    "multimodal_cot": "multimodal_cot (answer-leaking)",
}


def prepare_output(out: str | Path) -> Path:
    """An empty folder, or a previous demo's (marked), whose outputs are removed to rebuild them."""
    out = claim_folder(out, marker=MARKER)
    remove_entries(out, OWNED)
    return out


class Steps:
    """Numbered, timed steps, each printed as it starts and ends."""

    def __init__(self, echo: Callable[[str], None], total: int = STEP_COUNT) -> None:
        self.echo, self.total = echo, total
        self.timings: list[tuple[str, float]] = []

    @contextmanager
    def step(self, title: str) -> Iterator[None]:
        self.echo(f"[{len(self.timings) + 1}/{self.total}] {title}")
        start = time.perf_counter()
        yield
        seconds = time.perf_counter() - start
        self.timings.append((title, seconds))
        self.echo(f"      done in {seconds:.1f} s")

    def note(self, text: str) -> None:
        self.echo(f"      {text}")


@dataclass
class DemoResult:
    out: Path
    seconds: float
    timings: list[tuple[str, float]]
    scores: dict[str, Any]
    predictions: dict[str, Any]  # bqa: split -> style -> path; marinelife16k: split -> path
    reports: dict[str, Path] = field(default_factory=dict)
    startup_seconds: float = 0.0  # of ``seconds``: the libraries' imports, before the demo ran


def _sizes(sample: BuiltSample) -> str:
    return "; ".join(
        f"{config}: " + ", ".join(f"{split} {n}" for split, n in sample.sizes(config).items())
        for config in sample.loaded
    )


def contact_sheet(frames: Frames, path: Path, columns: int = 8) -> Path:
    """The frames side by side (``columns`` per row), as one JPEG."""
    import numpy as np

    from builders.files.jsonio import write_bytes_atomic
    from builders.video.jpeg import jpeg_bytes

    n, h, w = frames.frames.shape[:3]
    rows, used = -(-n // columns), min(columns, n)
    sheet = np.zeros((h * rows, w * used, 3), np.uint8)  # black where the last row ends early
    for k, rgb in enumerate(frames.frames):
        row, column = divmod(k, columns)
        sheet[row * h : (row + 1) * h, column * w : (column + 1) * w] = rgb
    return write_bytes_atomic(path, jpeg_bytes(sheet))


def sample_some_frames(bqa: BuiltSample, marine: BuiltSample, out: Path, steps: Steps) -> list[Path]:
    """Uniform frames of the first test clip of each dataset, read as bytes (no torch)."""
    import datasets

    from builders.video.sampler import sample_frames

    sheets = []
    picks = (
        ("bqa", bqa.loaded["default"]["test"], BQA_FRAMES),
        ("marinelife16k", marine.loaded["videos"]["test"], MARINE_FRAMES),
    )
    for name, split, n in picks:
        row = split.select_columns(["id", "video"]).cast_column("video", datasets.Video(decode=False))[0]
        frames = sample_frames(row["video"], num_frames=n)
        sheet = contact_sheet(frames, out / "frames" / f"{name}-{row['id']}.jpg")
        sheets.append(sheet)
        steps.note(
            f"{name} {row['id']}: {len(frames)} of {frames.total_frames} frames, indices {frames.indices}, "
            f"array {frames.frames.shape} {frames.frames.dtype} -> {sheet.relative_to(out)}"
        )
    return sheets


def score_everything(
    metrics: Metrics,
    bqa: BuiltSample,
    bqa_preds: Mapping[str, Mapping[str, Path]],
    marine_preds: Mapping[str, Path],
) -> dict[str, Any]:
    """Every metric on the test split and on all splits pooled (see the module doc)."""
    from builders.evaluation.marinelife import judge_inputs
    from marinelife16k.rubrics import JUDGE_TASKS

    questions = bqa.loaded["default"]
    bqa_scores: dict[str, Any] = {
        "self_bleu": {
            split: {"n": len(ds), **metrics.self_bleu(ds["question"])} for split, ds in questions.items()
        },
        "accuracy": {},
    }
    marine_scores: dict[str, Any] = {"accuracy": {}, "judge": {}}
    styles = list(next(iter(bqa_preds.values())))
    for scope, splits in SCOPES.items():
        bqa_scores["accuracy"][scope] = {}
        for style in styles:
            pooled = [r for s in splits for r in read_jsonl(bqa_preds[s][style])]
            bqa_scores["accuracy"][scope][style] = metrics.bqa_accuracy(**bqa_inputs(pooled))
        rows = [r for s in splits for r in read_jsonl(marine_preds[s])]
        marine_scores["accuracy"][scope] = metrics.marinelife_qa(**marine_inputs(rows))
        marine_scores["judge"][scope] = {
            task: metrics.judge(judged.rubric, inputs)
            for task, judged in JUDGE_TASKS.items()
            if (inputs := judge_inputs(rows, task)) is not None
        }
    bqa_scores["frames"] = paper_tables.frames_cell(bqa_baseline().options["frames"])
    return {"bqa": bqa_scores, "marinelife16k": marine_scores}


def release_statistics(bqa: BuiltSample) -> str:
    """The sample release's statistics, as ``vqabench bqa stats`` prints them (clips measured)."""
    from bqa.stats import format_stats, release_stats
    from bqa.workfolder import read_release

    release = read_release(bqa.work)
    return format_stats(release_stats(release.splits, release.meta, clips=release.clip_path))


def all_tables(
    bqa: Mapping[str, Any], marine: Mapping[str, Any], note: str, stats: str | None = None
) -> list[tuple[str, str]]:
    """(title, Markdown) of every paper table over the demo's scores, in the order printed; ``note``
    labels the baseline's tables; ``stats``: the BQA release statistics as ``bqa stats`` prints them.
    BQA's bias tables are over all splits (the test split is tiny)."""
    accuracy, pooled = bqa["accuracy"], bqa["accuracy"]["all"]
    rows = [  # the renderer of `vqabench report bqa`: the model's CoT run beside its plain run
        paper_tables.BQARow(f"{BQA_MODEL} ({SCOPE_LABELS.get(scope, scope)})", bqa["frames"], by_style)
        for scope, by_style in accuracy.items()
    ]
    tables = [
        (f"BQA: accuracy by difficulty, paper Table 1 layout [{note}]", paper_tables.bqa_table(rows, "Sample")),
        *([("BQA: the sample release's statistics, as `vqabench bqa stats` prints them", stats)] if stats else []),
        ("BQA: Self-BLEU (4-gram) of the sample's questions per split, paper Table 2 layout",
         paper_tables.self_bleu_table(bqa["self_bleu"])),
        (f"BQA: error rate by gender, age and ethnicity, all splits [{note}]",
         paper_tables.bias_table({STYLE_LABELS.get(s, s): r for s, r in pooled.items()})),
        (f"BQA: wrong answers by emotion group, single word, all splits ({OTHERS} = no emotion named) [{note}]",
         paper_tables.confusion_table(pooled["single_word"]["confusion"])),
    ]  # fmt: skip
    leak = paper_tables.leakage_line(pooled.get("multimodal_cot"), SCOPE_LABELS["all"])
    if leak:
        tables.append((f"BQA: chain-of-thought rationale leakage [{note}]", leak))
    # The report's renderers, one group per scope of splits (a group of one model has no Average row).
    scoped = {
        f"{MARINE_MODEL} ({SCOPE_LABELS.get(scope, scope)})": (SCOPE_LABELS.get(scope, scope), scope)
        for scope in marine["accuracy"]
    }
    groups = arrange(scoped, [ModelRow(name, group) for name, (group, _) in scoped.items()])
    judged = {  # the judge metric's outputs, read back as typed results
        name: results_from_dict(marine["judge"][scope].items(), f"judge {scope}")
        for name, (_, scope) in scoped.items()
    }
    table3 = {
        name: (marine["accuracy"][scope], judged[name].get("oemu")) for name, (_, scope) in scoped.items()
    }
    n_mcq = "; ".join(f"{name}: {table3[name][0]['n']['overall']}" for name in scoped)
    tables += [
        (f"MarineLife-16K: accuracy per dimension (0-100) and OEMU, paper Table 3 layout [{note}]",
         paper_tables.table3(groups, table3) + f"\n\nMultiple-choice questions: {n_mcq}."),
        (f"MarineLife-16K: caption judge BEH / AH / ECF by camera, the paper's caption table layout [{note}]",
         paper_tables.caption_table(groups, {name: j.get("caption") for name, j in judged.items()})
         + "\n\nCaptions judged: " + paper_tables.judged_counts({n: j.get("caption") for n, j in judged.items()})
         + "."),
    ]  # fmt: skip
    return tables


def next_steps(out: Path, metrics: Metrics) -> list[tuple[str, str]]:
    """(what, command) pairs: where to go from the demo. Paths are shell-quoted (a folder with a
    space still pastes as one argument)."""
    q = shlex.quote
    hub_bqa, hub_marine = out / "hub" / "bqa", out / "hub" / "marinelife16k"
    model = "--llm-model MODEL --llm-base-url URL --llm-api-key-env KEY_VARIABLE"
    metric = "evaluate.load(builders.metric_path('bqa_accuracy'))" if metrics.folder else "bqa.accuracy"
    baseline = out / "predictions" / "bqa" / "test.single_word.jsonl"
    reports = out / "reports"
    compare = (
        f"vqabench report bqa --data {q(str(hub_bqa))} --split test --predictions {q(f'baseline={baseline}')} "
        "--predictions mine=mine-bqa.jsonl --out reports/bqa-mine"
    )
    return [
        (
            "Read the reports",
            f"{q(str(reports / 'bqa' / 'report.md'))} {q(str(reports / 'marinelife16k' / 'report.md'))}",
        ),
        (
            "Evaluate your VideoLLM",
            f"vqabench bqa evaluate --data {q(str(hub_bqa))} --split test --out mine-bqa.jsonl {model}",
        ),
        (
            "",
            f"vqabench marinelife evaluate --data {q(str(hub_marine))} --split test --out mine-ml.jsonl {model}",
        ),
        (
            "",
            f"vqabench marinelife judge mine-ml.jsonl --data {q(str(hub_marine))} --out mine-judge.json --items {model}",
        ),
        ("Compare with the baseline", compare),
        (
            "Score in Python",
            f"{metric}.compute(predictions=..., references=..., choices=..., difficulty=...)",
        ),
        (
            "Load the data",
            f"datasets.load_dataset({str(hub_bqa)!r}); datasets.load_dataset({str(hub_marine)!r}, 'qa')",
        ),
        ("Rebuild from raw data", f"vqabench bqa build --bold-root BOLD_ROOT --work work/bqa {model}"),
        # The demo's release is the bundled sample (refused without --allow-sample); a dry run checks the
        # folder offline too, and a repo that does not exist yet is what --create-repo is for.
        (
            "Publish (checks only)",
            f"vqabench push {q(str(hub_bqa))} YOU/BQA --create-repo --allow-sample --dry-run",
        ),
    ]


def _markdown_summary(
    out: Path, result: DemoResult, metrics: Metrics, table_list: list[tuple[str, str]]
) -> str:
    steps = markdown_table(["Step", "Seconds"], [[t, f"{s:.1f}"] for t, s in result.timings])
    lines = [
        "# vqabench demo",
        "",
        f"Model answers and judge scores here are replayed from a **{SCRIPTED_NOTE}** (rule-based responders, "
        "recorded replies): they exercise the tooling offline and say nothing about any model. Both datasets are "
        "the small bundled samples, rebuilt from recorded pipeline replies.",
        "",
        f"Metrics computed with {metrics.via}. Total time {result.seconds:.1f} s, from the package's import "
        f"({result.startup_seconds:.1f} s of it loading libraries).",
        "",
        steps,
    ]
    for title, body in table_list:  # plain-text tables (the stats command's) stay as printed
        lines += [
            "",
            f"## {title}",
            "",
            body if body.startswith(("|", "Rationale")) else f"```text\n{body}\n```",
        ]
    lines += ["", "## Next steps", "", "Paths are relative to this folder: run the commands from it.", ""]
    lines += [f"- {what + ': ' if what else ''}`{command}`" for what, command in next_steps(out, metrics)]
    # A summary that travels names no local path (builders.report.document.relative_paths).
    return relative_paths("\n".join(lines) + "\n", out, [out])


def _quiet_libraries() -> None:
    import datasets
    import evaluate

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    evaluate.logging.set_verbosity_error()
    for name in ("bqa", "marinelife16k", "builders"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _frames_text(options: Mapping[str, Any]) -> str:
    frames = options["frames"]
    return f"{frames['num_frames']} uniform frames" if frames.get("num_frames") else f"{frames['fps']:g} fps"


def predict_baseline(
    bqa: BuiltSample, marine: BuiltSample, out: Path, steps: Steps
) -> tuple[dict[str, dict[str, Path]], dict[str, Path]]:
    """Step 4: the evaluation runners on the exported folders, answered from the bundled replies."""
    bqa_rec, marine_rec = bqa_baseline(), marine_baseline()
    try:
        with bqa_rec.replay_client() as client:
            bqa_preds = predict_bqa(
                bqa_rec, bqa.hub, client, out / "eval" / "bqa", out / "predictions" / "bqa"
            )
        with marine_rec.replay_client() as client:
            marine_preds = predict_marinelife(
                marine_rec, marine.hub, client, out / "eval" / "marinelife16k", out / "predictions" / "marinelife16k"
            )  # fmt: skip
    except ReplayMissError as err:
        raise RuntimeError(
            f"{err}\nThe bundled baseline replies do not answer these requests: a prompt, the runner, the frames "
            "or the sample changed since they were recorded. Re-record them from a source checkout with 'python -m "
            "builders.testing.samples.record_bqa_baseline' and 'python -m builders.testing.samples.record_marinelife_baseline'."
        ) from None
    n_bqa = sum(len(read_jsonl(p)) for by_style in bqa_preds.values() for p in by_style.values())
    steps.note(
        f"BQA: {n_bqa} answers ({' and '.join(bqa_rec.options['styles'])} styles; {', '.join(bqa_preds)}), "
        f"{_frames_text(bqa_rec.options)} each -> {out / 'predictions' / 'bqa'}"
    )
    n_marine = sum(len(read_jsonl(p)) for p in marine_preds.values())
    steps.note(
        f"MarineLife-16K: {n_marine} answers ({', '.join(marine_preds)}), {_frames_text(marine_rec.options)} "
        f"each -> {out / 'predictions' / 'marinelife16k'}"
    )
    return bqa_preds, marine_preds


def score_baseline(
    metrics: Metrics,
    bqa: BuiltSample,
    bqa_preds: Mapping[str, Mapping[str, Path]],
    marine_preds: Mapping[str, Path],
) -> dict[str, Any]:
    """Step 5: :func:`score_everything`, with a replay miss or a failed judgement as a clear error."""
    try:
        scores = score_everything(metrics, bqa, bqa_preds, marine_preds)
    except ReplayMissError as err:
        raise RuntimeError(
            f"{err}\nThe bundled judge replies do not answer these requests; re-record them from a source checkout with "
            "'python -m builders.testing.samples.record_marinelife_baseline'."
        ) from None
    failed = {
        f"{scope} {task}": result.n_failed
        for scope, tasks in scores["marinelife16k"]["judge"].items()
        for task, result in results_from_dict(tasks.items(), f"judge {scope}").items()
        if result.n_failed
    }
    if failed:
        raise RuntimeError(f"bundled judge replies failed validation: {failed}")
    scores["metrics_via"] = metrics.via
    scores["note"] = f"Predictions and judge scores from a {SCRIPTED_NOTE}."
    return scores


def write_reports(
    out: Path,
    scores: Mapping[str, Any],
    bqa: BuiltSample,
    marine: BuiltSample,
    bqa_preds: Mapping[str, Mapping[str, Path]],
    marine_preds: Mapping[str, Path],
) -> dict[str, Any]:
    """Step 6: ``reports/scores.json`` and a report per dataset on the test split; name -> Report."""
    from builders.report import write_bqa_report, write_marinelife_report

    reports = out / "reports"
    write_json_atomic(reports / "scores.json", scores)
    judged = write_json_atomic(
        reports / "judge_results.test.json", {MARINE_MODEL: scores["marinelife16k"]["judge"]["test"]}
    )
    bqa_models = {BQA_MODELS[style]: path for style, path in bqa_preds["test"].items()}
    return {
        "bqa": write_bqa_report(bqa.hub, "test", bqa_models, reports / "bqa"),
        "marinelife16k": write_marinelife_report(
            marine.hub, "test", {MARINE_MODEL: marine_preds["test"]}, reports / "marinelife16k",
            judge_results=[judged],
        ),
    }  # fmt: skip


def seconds_since_start() -> float:
    """Wall seconds since the package was first imported (:data:`builders.STARTED`): the time the demo
    reports is the time a user waits for it, its libraries' imports included, and nothing that ran
    before it in the same process (a shell's ``pip install ... && vqabench demo``)."""
    return time.perf_counter() - builders.STARTED


def run_demo(out_dir: str | Path = "vqabench-demo", echo: Callable[[str], None] = print) -> DemoResult:
    """Run the whole demo into ``out_dir`` (see the module doc); prints as it goes through ``echo``.

    Its time (``DemoResult.seconds``, printed and in summary.md) counts from the package's import."""
    start = time.perf_counter()
    before = seconds_since_start()  # imports, before this function
    _quiet_libraries()
    out = prepare_output(out_dir)
    cache = out / "cache"
    steps = Steps(echo)
    echo(f"vqabench demo -> {out}")
    echo(
        f"Everything runs offline. Model answers and judge scores are replayed from a {SCRIPTED_NOTE.upper()}."
    )
    with steps.step(
        "BQA: rebuild the bundled sample from its recorded replies, export in Hub layout, load back"
    ):
        bqa = rebuild_bqa(out / "work" / "bqa", out / "hub" / "bqa", cache)
        steps.note(bqa.summary)
        steps.note(f"work folder {bqa.work}; Hub folder {bqa.hub} -> load_dataset: {_sizes(bqa)}")
    with steps.step("MarineLife-16K: the same (configs qa and videos)"):
        marine = rebuild_marinelife(out / "work" / "marinelife16k", out / "hub" / "marinelife16k", cache)
        steps.note(marine.summary)
        steps.note(f"work folder {marine.work}; Hub folder {marine.hub} -> load_dataset: {_sizes(marine)}")
    with steps.step("Frames: uniform samples from the loaded datasets (videos read as bytes, no torch)"):
        sample_some_frames(bqa, marine, out, steps)
    with steps.step(f"Baseline predictions ({SCRIPTED_NOTE}), replayed through the evaluation runners"):
        bqa_preds, marine_preds = predict_baseline(bqa, marine, out, steps)
    with steps.step("Scoring with every metric (test split, as in the papers, and all splits pooled)"):
        metrics = Metrics(marine_judge())
        steps.note(
            f"metrics: {metrics.via}; judge replies replayed from {metrics.judge_recording.replies_path}"
        )
        scores = score_baseline(metrics, bqa, bqa_preds, marine_preds)
    with steps.step("Reports (test split) and every score (reports/scores.json)"):
        reports = write_reports(out, scores, bqa, marine, bqa_preds, marine_preds)
        for report in reports.values():
            steps.note(f"{report.markdown} + {report.metrics_file.name} + {len(report.figures)} PNG(s)")
    predictions = {"bqa": bqa_preds, "marinelife16k": marine_preds}
    result = DemoResult(
        out, 0.0, steps.timings, scores, predictions, {k: r.folder for k, r in reports.items()}
    )
    table_list = all_tables(scores["bqa"], scores["marinelife16k"], SCRIPTED_NOTE, release_statistics(bqa))
    for title, body in table_list:
        echo(f"\n{title}\n{body}")
    result.seconds = before + time.perf_counter() - start
    result.startup_seconds = before
    write_text_atomic(out / "summary.md", _markdown_summary(out, result, metrics, table_list))
    echo("")
    echo(f"Built:       BQA {bqa.work} -> {bqa.hub}")
    echo(f"             MarineLife-16K {marine.work} -> {marine.hub}")
    echo(f"Predictions: {out / 'predictions'}")
    echo(f"Reports:     {out / 'reports'} (scores.json: every metric, test split and all splits)")
    echo(f"Frames:      {out / 'frames'}")
    echo(f"Summary:     {out / 'summary.md'}")
    echo("Next:")
    width = max(len(what) for what, _ in next_steps(out, metrics))
    for what, command in next_steps(out, metrics):
        echo(f"  {what:<{width}}  {command}")
    total = before + time.perf_counter() - start
    echo(f"vqabench demo finished in {total:.1f} s ({before:.1f} s of it loading libraries)")
    sys.stdout.flush()
    return result
