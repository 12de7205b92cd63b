"""The verbs under ``vqabench <benchmark>``, each defined once for every benchmark of the registry
(:mod:`builders.cli._benchmarks`): ``build``, ``evaluate``, ``judge`` (where the entry has it), ``export``
and ``stats``. Each verb's parser setup, shared flags and shared flow live here; the entry
(:class:`builders.cli._entry.Benchmark`) adds its own flags and does its own work. ``report`` is the
same over ``vqabench report <benchmark>`` (:mod:`builders.cli.report`).

Argparse level only: the work loads the heavy modules inside the handlers (start-up speed).
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

from builders.cli._entry import Benchmark, Verb
from builders.cli._options import (
    add_build_export_arguments,
    add_export_arguments,
    export_repo_id,
)
from builders.cli._presets import add_preset_argument, apply_preset
from builders.evaluation.options import add_prediction_arguments, run_prediction_command
from builders.files.arguments import existing_file
from builders.hub.source import add_data_arguments
from builders.hub.subset import add_subset_arguments
from builders.llm.cli import JUDGE_ENV_PREFIX, add_llm_arguments
from builders.llm.cost import add_cost_arguments, apply_cost_arguments, spent_line
from builders.runs.steps import add_step_arguments
from builders.video.frame_spec import add_frame_arguments

REPLAY_HELP = (
    "answer only from recorded replies, send nothing: with --sample the sample's own recording and settings, "
    "otherwise the reply cache (the same as --llm-mode replay)"
)


def register_benchmark(subparsers: argparse._SubParsersAction, entry: Benchmark) -> None:
    """``vqabench <key>`` with the shared verbs the entry has, then its own actions."""
    parser = subparsers.add_parser(entry.key, help=entry.help, description=entry.description)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    for name, verb in entry.verbs().items():
        sub = actions.add_parser(
            name,
            help=verb.help,
            description=verb.description,
            epilog=verb.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter
            if verb.raw_description
            else argparse.HelpFormatter,
        )
        VERB_ARGUMENTS[name](sub, entry, verb)
        sub.set_defaults(func=partial(VERB_FLOWS[name], entry))
    for action in entry.actions:
        sub = actions.add_parser(
            action.name, help=action.help, description=action.description, epilog=action.epilog
        )
        action.arguments(sub)
        sub.set_defaults(func=action.run)


def _own(parser: argparse.ArgumentParser, entry: Benchmark, verb: Verb[object]) -> None:
    if verb.arguments is not None:
        verb.arguments(parser)


# -- build --------------------------------------------------------------------------------------


def _build_arguments(parser: argparse.ArgumentParser, entry: Benchmark, verb: Verb[object]) -> None:
    parser.add_argument(
        "--work", type=Path, required=True, help="work folder (created; an existing one is resumed)"
    )
    parser.add_argument("--sample", action="store_true", help=entry.sample)
    parser.add_argument("--replay", action="store_true", help=REPLAY_HELP)
    _own(parser, entry, verb)
    add_step_arguments(parser)
    add_preset_argument(parser, f"{entry.key} build")
    add_build_export_arguments(parser.add_argument_group("export"), entry.repo_help)
    add_frame_arguments(parser, entry.build_frames)
    add_llm_arguments(parser)
    add_cost_arguments(parser)


def run_build(entry: Benchmark, args: argparse.Namespace) -> int:
    """Check the export target, settle ``--replay``, make the client, run the entry's pipeline, print
    the estimate or the summary and the spent line; exit status 1 while work is left; export once
    the release is complete."""
    from builders.hub.layout import check_export_target
    from builders.llm.cli import client_from_args
    from builders.runs.lock import claim_work_folder
    from builders.runs.steps import DEFAULT_CACHE

    claim_work_folder(args.work)  # before the reply cache is opened in it
    if args.export is not None:  # refused before the build, not after it
        check_export_target(args.export, args.work)
    if args.replay and not args.sample:  # one meaning: the reply cache only, nothing sent
        if args.llm_mode not in ("normal", "replay"):
            raise ValueError(f"--replay sends nothing; it cannot go with --llm-mode {args.llm_mode}")
        args.llm_mode = "replay"
    job = entry.build.run(args, sample_replay=args.replay and args.sample)
    if args.replay and args.sample:
        client = job.recorded
    elif job.needs_llm:
        client = client_from_args(args, args.work / DEFAULT_CACHE, progress=False)
    else:
        client = None
    price = apply_cost_arguments(args, client) if client is not None else None
    try:
        summary = job.run(client)
    finally:
        if client is not None:
            client.close()
    if client is not None and client.estimate is not None:
        if job.estimate is not None:
            print(job.estimate(client.estimate, price))
        else:  # the steps after the first need its replies
            print(f"estimate, first step with requests to send: {client.estimate.format(price)}")
        return 0
    print(summary.format())
    if summary.run is not None:
        print(spent_line(summary.run, price, client.budget if client is not None else None))
    if not summary.ok:
        return 1  # the summary says what is left and how to resume
    if args.export is not None and summary.release is None:
        raise ValueError(f"{args.work}: no release to export yet; run the steps up to the release first")
    if args.export is not None:
        exported = entry.export.run(
            args.work,
            args.export,
            args,
            repo_id=export_repo_id(args.repo_id, entry.name, entry.published().default_repo_id),
        )
        print(f"exported {exported.folder} ({exported.sizes}); load_dataset check passed")
    return 0


# -- evaluate -----------------------------------------------------------------------------------


def _evaluate_arguments(parser: argparse.ArgumentParser, entry: Benchmark, verb: Verb[object]) -> None:
    _own(parser, entry, verb)
    add_preset_argument(parser, f"{entry.key} evaluate")
    add_prediction_arguments(
        parser,
        dataset=entry.name,
        unit=entry.rows,
        frames=f"{entry.evaluate_frames} frames",
        videos=entry.videos,
    )


def run_evaluate(entry: Benchmark, args: argparse.Namespace) -> int:
    """Apply the preset (recorded in every line), then predict through the one prediction runner."""
    preset = apply_preset(args, f"{entry.key} evaluate")  # None: no --preset (or none registered)
    job = entry.evaluate.run(args)
    return run_prediction_command(
        args, job.open_data, job.evaluate, entry.evaluate_frames, clients=job.clients,
        identity_extra={"preset": preset} if preset else None, **job.options,
    )  # fmt: skip


# -- judge --------------------------------------------------------------------------------------


def _judge_arguments(parser: argparse.ArgumentParser, entry: Benchmark, verb: Verb[object]) -> None:
    parser.add_argument(
        "predictions",
        type=existing_file,
        help=f"predictions JSONL: written by '{entry.key} evaluate' (or an lmms-eval sample log / VLMEvalKit "
        "result file of the integrations' tasks), or question_id + raw_output lines with --data",
    )
    add_data_arguments(
        parser,
        "the dataset to join the answers to (needed unless the file is an 'evaluate' output)",
        required=False,
    )
    parser.add_argument(
        "--split", default="test", help="with --data: the split the answers are for (default test)"
    )
    add_subset_arguments(parser, entry.videos)
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="with --data: judge the open-ended questions that have an answer and list the others, instead of failing",
    )
    parser.add_argument("--out", type=Path, required=True, help="judge results JSON to write")
    parser.add_argument(
        "--name", help="the model's name in the results (default: the predictions file's stem)"
    )
    parser.add_argument(
        "--items",
        action="store_true",
        help="also write each item's scores with its question_id (what 'vqabench human-study score "
        "--judge-results' compares with the experts)",
    )
    _own(parser, entry, verb)
    add_llm_arguments(parser, env_prefix=JUDGE_ENV_PREFIX)
    add_cost_arguments(parser)


def run_judge(entry: Benchmark, args: argparse.Namespace) -> int:
    """The entry reads the predictions (``run(args)`` -> ``judge(client)`` -> ``finish()``); the judge's
    client, cost options, estimate and spent line are the verb's; ``finish`` writes and prints the
    results and returns the exit status (1 when some judgements failed)."""
    from builders.llm.cli import JUDGE_ENV_PREFIX, require_api_key
    from builders.scoring.judge import judge_client_from_args

    assert entry.judge is not None
    require_api_key(args, JUDGE_ENV_PREFIX)  # before the predictions' data is downloaded
    judge = entry.judge.run(args)
    with judge_client_from_args(args) as client:
        price = apply_cost_arguments(args, client)
        finish = judge(client)
    if client.estimate is not None:
        print(f"estimate: {client.estimate.format(price)}")
        return 0
    print(spent_line(client.usage, price, client.budget))
    return int(finish())


# -- export -------------------------------------------------------------------------------------


def _export_arguments(parser: argparse.ArgumentParser, entry: Benchmark, verb: Verb[object]) -> None:
    add_export_arguments(parser, entry.repo_help)
    _own(parser, entry, verb)


def run_export(entry: Benchmark, args: argparse.Namespace) -> int:
    exported = entry.export.run(
        args.work_dir, args.out_dir, args,
        repo_id=export_repo_id(args.repo_id, entry.name, entry.published().default_repo_id),
        cache_dir=args.cache_dir, max_shard_bytes=args.max_shard_mb * 1024 * 1024,
    )  # fmt: skip
    print(f"wrote {exported.folder} ({exported.sizes}); load_dataset check passed")
    return 0


# -- stats --------------------------------------------------------------------------------------


def run_stats(entry: Benchmark, args: argparse.Namespace) -> int:
    return entry.stats.run(args)


VERB_ARGUMENTS = {
    "build": _build_arguments,
    "evaluate": _evaluate_arguments,
    "judge": _judge_arguments,
    "export": _export_arguments,
    "stats": _own,
}
#: The one flow of each verb, the same function for every benchmark (tests/test_cli_shared_flags.py checks).
VERB_FLOWS = {
    "build": run_build,
    "evaluate": run_evaluate,
    "judge": run_judge,
    "export": run_export,
    "stats": run_stats,
}
