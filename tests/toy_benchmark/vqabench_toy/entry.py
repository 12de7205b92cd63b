"""The toy's entry of the benchmark registry: what is its own in each shared verb."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builders.cli._entry import Benchmark, BuildJob, EvaluateJob, Exported, Published, Verb
from builders.hub.benchmark import Benchmark as EvalTasks
from builders.hub.benchmark import Task
from builders.hub.source import add_data_arguments
from vqabench_toy.vocabulary import NAME, SPLITS

TASKS = EvalTasks(
    name=NAME,
    description="Toy: which colour a sentence names; accuracy on the test split, 0-1.",
    tasks=(
        Task(id="toy_accuracy", name="Accuracy", config="default", split="test", metric="accuracy",
             scale=(0.0, 1.0), higher_is_better=True, description="Share of right colours.",
             value=("accuracy",), n=("n",)),
    ),
)  # fmt: skip


def _published() -> Published:
    return Published(TASKS, "toy", "toy-org/Toy")


def _build(args: argparse.Namespace, *, sample_replay: bool) -> BuildJob:
    from vqabench_toy.data import SAMPLE
    from vqabench_toy.pipeline import build

    return BuildJob(lambda client: build(args.work, SAMPLE), needs_llm=False)


def _evaluate(args: argparse.Namespace) -> EvaluateJob:
    from vqabench_toy.data import open_split
    from vqabench_toy.runner import evaluate

    return EvaluateJob(open_split, evaluate)


def _export(
    work: Path,
    out: Path,
    args: argparse.Namespace,
    *,
    repo_id: str | None,
    cache_dir: Path | None = None,
    max_shard_bytes: int | None = None,
) -> Exported:
    """Through the shared Hub-layout writer (atomic, guarded, checksums in the card) and its check."""
    import datasets

    from builders.hub.layout import check_hub_folder, write_hub_folder
    from vqabench_toy.data import FEATURES, open_split

    features = datasets.Features.from_arrow_schema(FEATURES)
    splits = datasets.DatasetDict(
        {s: datasets.Dataset.from_list(open_split(work, s).rows, features=features) for s in SPLITS}
    )
    shards = {"max_shard_bytes": max_shard_bytes} if max_shard_bytes else {}
    folder = write_hub_folder(
        out, {"default": splits}, default_config="default", card_body=f"# {NAME} ({repo_id})\n", **shards
    )
    check_hub_folder(folder, cache_dir)  # the load_dataset check the verb reports
    return Exported(folder, ", ".join(f"{s} {len(d)}" for s, d in splits.items()))


def _stats_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_arguments(parser, "the toy release: a work folder or an exported folder")


def _stats(args: argparse.Namespace) -> int:
    from vqabench_toy.data import open_split

    for split in SPLITS:
        rows = open_split(Path(args.data), split).rows
        print(
            f"{split}: {len(rows)} questions; answers {dict(sorted(Counter(r['answer'] for r in rows).items()))}"
        )
    return 0


def _report(args: argparse.Namespace, data: Any, predictions: Mapping[str, Any], **shared: Any) -> Any:
    from builders.report.document import Report
    from vqabench_toy.data import open_split
    from vqabench_toy.metric import accuracy

    if shared.get("paper"):
        raise ValueError("the toy has no paper to compare with: drop --paper/--as")
    rows = open_split(data.folder, args.split).rows
    models = {}
    for name, path in predictions.items():
        replies = {p["id"]: p["raw_output"] for p in map(json.loads, Path(path).read_text().splitlines())}
        models[name] = {
            "accuracy": accuracy([replies.get(r["id"]) for r in rows], [r["answer"] for r in rows]),
            "n": len(rows),
        }
    metrics = {"benchmark": NAME, "split": args.split, "models": models}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1), encoding="utf-8")
    table = "".join(f"| {n} | {m['accuracy']:.2f} |\n" for n, m in models.items())
    (out / "report.md").write_text(
        f"# {NAME} report\n\n| model | accuracy |\n|---|---|\n{table}", encoding="utf-8"
    )
    return Report(out, out / "report.md", out / "metrics.json", [], metrics)


ENTRY = Benchmark(
    key="toy",
    name=NAME,
    help="Toy: a third benchmark, registered by its entry point only",
    description="Which colour does a sentence name? Build, evaluate, export, stats and report it.",
    published=_published,
    rows="questions",
    videos="sentences",
    evaluate_frames=1,
    build_frames="none: the toy has no videos",
    repo_help="Hub repo named in the card (default: $VQABENCH_TOY_REPO_ID, else toy-org/Toy)",
    sample="the bundled sample (the only input the toy has)",
    build=Verb("sample -> questions -> release in a work folder", "The toy's two-step pipeline.", _build),
    evaluate=Verb("ask an LLM every question of one split", "One request per question.", _evaluate),
    export=Verb("export a work folder's release as Parquet and a card", "Toy export.", _export),
    stats=Verb("a release's counts", "Questions and answers per split.", _stats, _stats_arguments),
    report=Verb("accuracy per model", "Toy report.", _report),
)
