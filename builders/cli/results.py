"""``vqabench results``: turn a report's metrics.json into a model repo's ``.eval_results`` entries, show them,
and propose them on the Hub as a pull request on the model repo."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.files.arguments import existing_file, existing_folder, existing_path
from builders.hub.sample import add_allow_sample_argument

# The modules doing the work load inside the handlers: lazy for start-up speed.


def _push_options(parser: argparse.ArgumentParser, flag: bool) -> None:
    if flag:
        parser.add_argument(
            "--push",
            metavar="MODEL_REPO",
            help="then publish the entries to this model repo (<namespace>/<name>)",
        )
    parser.add_argument(
        "--create-pr",
        action="store_true",
        help="open a pull request on the model repo (what a benchmark user does on someone else's model; "
        "the Hub shows the scores as community results while it is open) instead of committing to main",
    )
    parser.add_argument("--message", help="commit message (default: 'Add evaluation results on <dataset>')")
    parser.add_argument(
        "--dry-run", action="store_true", help="print what the push would do; no network at all"
    )
    add_allow_sample_argument(parser, "scores of a run on data")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "results",
        help="write a report's scores as .eval_results/*.yaml for a model repo, show them, push them as a PR",
        description=(
            "The Hub's leaderboards read evaluation results from model repos: .eval_results/<file>.yaml, a "
            "list of entries {dataset: {id, task_id, revision}, value, date, source, notes}. 'write' makes "
            "them from a report's metrics.json (vqabench report), one entry per task of the benchmark's "
            "eval.yaml that the report scored; the notes record how the run was made (tool version, dataset "
            "and revision, frame spec, prompt, answer parser, judge rubric, as far as the report recorded "
            "them) and the 95% interval and n. 'show' prints entries; 'push' publishes them."
        ),
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    write = actions.add_parser(
        "write",
        help="metrics.json -> MODEL_FOLDER/.eval_results/<benchmark>.yaml",
        description="Write the .eval_results entries of one model of a report (and print them).",
        epilog="Example: vqabench results write reports/bqa-test/metrics.json --model mine --out mine/ "
        "--dataset-revision 0123...abcd --push me/my-videollm --create-pr --dry-run",
    )
    write.add_argument(
        "metrics", type=existing_file, help="a report's metrics.json (vqabench report bqa|marinelife)"
    )
    write.add_argument(
        "--out", type=Path, required=True, help="model folder: the entries go to OUT/.eval_results/"
    )
    write.add_argument("--model", help="which of the report's models (required if it has more than one)")
    write.add_argument(
        "--dataset-id",
        help="benchmark dataset repo (default: the repo the report read, else $VQABENCH_<BENCHMARK>_REPO_ID "
        "- VQABENCH_BQA_REPO_ID, VQABENCH_MARINELIFE16K_REPO_ID -, else the card's: naist-nlp/BQA for BQA)",
    )
    write.add_argument(
        "--dataset-revision",
        help="commit sha of the dataset revision scored (default: the one the report recorded, if any)",
    )
    write.add_argument("--date", help="when the run was made, ISO-8601 (default: metrics.json's date, UTC)")
    write.add_argument("--source-url", help="link to the run's logs or paper, shown with the score")
    write.add_argument("--source-name", help="display name for --source-url")
    _push_options(write, flag=True)
    write.set_defaults(func=_write)

    show = actions.add_parser(
        "show", help="print the entries of a model folder or a .yaml file", description="Print eval results."
    )
    show.add_argument(
        "path", type=existing_path, help="a model folder (with .eval_results/) or one .yaml file"
    )
    show.set_defaults(func=_show)

    push = actions.add_parser(
        "push",
        help="publish MODEL_FOLDER/.eval_results/*.yaml to a model repo (one commit, or a PR)",
        description=(
            "Validate the entries, then upload .eval_results/*.yaml in one commit to MODEL_REPO, as a pull "
            "request with --create-pr. The repo must exist. The token comes from HF_TOKEN or 'hf auth login' "
            "and is never printed; HF_ENDPOINT selects another Hub."
        ),
    )
    push.add_argument("folder", type=existing_folder, help="model folder holding .eval_results/")
    push.add_argument("repo_id", metavar="MODEL_REPO", help="model repo, <namespace>/<name>")
    _push_options(push, flag=False)
    push.set_defaults(func=_push)


def _describe(entries) -> str:
    from builders.hub.eval_results import notes_interval, parse_notes
    from builders.report.tables import markdown_table

    rows = []
    for filename, e in entries:
        interval = notes_interval(e.notes)
        notes = parse_notes(e.notes)
        rows.append(
            [
                filename,
                e.dataset_id,
                e.task_id,
                e.value,
                f"[{interval[0]:g}, {interval[1]:g}]" if interval else "-",
                notes.get("n", "-"),
                (e.dataset_revision or "-")[:12],
                e.date or "-",
            ]
        )
    return markdown_table(["file", "dataset", "task", "value", "95% interval", "n", "revision", "date"], rows)


def _publish(args: argparse.Namespace, folder: Path, repo_id: str) -> int:
    import logging

    from builders.hub.results_push import plan_results_push, push_results

    if not args.verbose:  # one INFO line per HTTP request drowns the summary; -v shows them
        for name in ("httpx2", "httpx"):
            logging.getLogger(name).setLevel(logging.WARNING)
    plan = plan_results_push(
        folder, repo_id, create_pr=args.create_pr, commit_message=args.message, allow_sample=args.allow_sample
    )
    print(plan.describe())
    if args.dry_run:
        print("dry run: nothing was sent")
        return 0
    print(push_results(plan).describe())
    return 0


def _write(args: argparse.Namespace) -> int:
    from builders.cli._benchmarks import by_name, dataset_id
    from builders.files.jsonio import read_json_object
    from builders.hub.eval_results import entries_from_metrics, file_date, read_entries, write_entries
    from builders.hub.sample import metrics_sample_note, refuse_sample

    if (args.create_pr or args.dry_run or args.message) and not args.push:
        raise ValueError("--create-pr, --dry-run and --message apply with --push MODEL_REPO")
    if args.source_name and not args.source_url:
        raise ValueError("--source-name needs --source-url (the format requires a url with a source)")
    metrics = read_json_object(args.metrics)
    published = by_name(metrics.get("benchmark"), str(args.metrics))
    refuse_sample(
        metrics_sample_note(metrics), what=str(args.metrics), target=f".eval_results in {args.out}",
        said_by="its data's provenance", allow=args.allow_sample,
    )  # fmt: skip
    data = (metrics.get("provenance") or {}).get("dataset") or {}
    chosen = dataset_id(
        published, args.dataset_id, recorded=data.get("repo_id") if isinstance(data, dict) else None
    )
    scores = entries_from_metrics(
        metrics,
        published.eval_yaml,
        model=args.model,
        dataset_id=chosen.repo_id,
        dataset_revision=args.dataset_revision,
        date=args.date or file_date(args.metrics),
        source_url=args.source_url,
        source_name=args.source_name,
        where=str(args.metrics),
    )
    path = write_entries(args.out, published.results_file_stem, scores.entries)
    print(
        f"wrote {len(scores.entries)} result(s) for {scores.model!r} on {chosen.repo_id} (from {chosen.source}) to {path}"
    )
    print(_describe(read_entries(path)))
    for task_id, reason in scores.skipped:
        print(f"  not written: {task_id} ({reason})")
    return _publish(args, args.out, args.push) if args.push else 0


def _show(args: argparse.Namespace) -> int:
    from builders.hub.eval_results import read_entries

    entries = read_entries(args.path)
    print(_describe(entries))
    for filename, e in entries:
        if e.notes:
            print(f"{filename} {e.task_id}: {e.notes}")
    return 0


def _push(args: argparse.Namespace) -> int:
    return _publish(args, args.folder, args.repo_id)
