"""Command-line options and handler shared by the evaluation runners (``vqabench bqa evaluate``,
``vqabench marinelife evaluate``): the same data, output, resume, LLM and cost options, run the same
way.

Argparse-level imports only, so the commands' ``--help`` loads no heavy library."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builders.hub.source import add_data_arguments, resolve_data
from builders.hub.subset import add_subset_arguments, selection_from_args
from builders.llm.cli import add_llm_arguments, client_from_args, derived_settings_from_args, require_api_key
from builders.llm.cost import add_cost_arguments, apply_cost_arguments, share_cost_arguments, spent_line
from builders.options.numbers import POSITIVE_INT
from builders.runs.lock import claim_work_folder
from builders.runs.steps import DEFAULT_CACHE, add_step_arguments
from builders.video.frame_spec import add_frame_arguments, frame_spec_from_args

if TYPE_CHECKING:
    from builders.evaluation.run import PredictionRun
    from builders.llm.client import LLMClient


def add_prediction_arguments(
    parser: argparse.ArgumentParser, *, dataset: str, unit: str, frames: str, videos: str = "videos"
) -> None:
    """``--data --split --out --limit --work --ahead --reject-llm-failures``, a named subset of the
    split's ``videos`` (``--videos FILE`` | ``--video-sample N --seed S``, :mod:`builders.hub.subset`),
    frames, LLM and cost options (``--estimate``, ``--max-cost``, prices:
    :func:`builders.llm.cost.add_cost_arguments`)."""
    add_data_arguments(parser, f"the {dataset} data")
    parser.add_argument("--split", default="test", help="train, validation or test (default test)")
    add_subset_arguments(parser, videos)
    parser.add_argument("--out", type=Path, required=True, help="predictions JSONL to write")
    parser.add_argument(
        "--limit", type=POSITIVE_INT, metavar="N", help=f"only the first N {unit} of the split"
    )
    parser.add_argument(
        "--work", type=Path, help="resume state and LLM cache (default: <out without suffix>.work/)"
    )
    add_step_arguments(parser)
    add_frame_arguments(parser, frames)
    add_llm_arguments(parser)
    add_cost_arguments(parser)


def derived_client(
    args: argparse.Namespace, client: LLMClient, prefix: str, env_prefix: str
) -> LLMClient | None:
    """A second model's client from :func:`builders.llm.cli.add_derived_llm_arguments` options (None:
    none given, ``client`` serves): ``client``'s own cache (or recorded replies) and mode
    (:meth:`LLMClient.derive`), counted into its estimate and budget."""
    settings = derived_settings_from_args(args, client.settings, prefix, env_prefix)
    if settings is None:
        return None
    other = client.derive(settings)
    share_cost_arguments(args, client, other)
    return other


def run_prediction_command(
    args: argparse.Namespace,
    open_data: Callable[..., Any],
    evaluate: Callable[..., PredictionRun],
    default_num_frames: int,
    *,
    clients: Callable[[LLMClient], Mapping[str, LLMClient | None]] | None = None,
    identity_extra: Mapping[str, Any] | None = None,
    **options: Any,
) -> int:
    """Open ``--data`` (a folder or a Hub repo id at ``--revision``), predict into ``--out``
    (resumable in ``--work``), print the summary. The data's provenance (folder and fingerprint, or
    repo id, revision and resolved commit) is bound to the work folder and recorded in every line.
    ``clients(client)``: more clients the runner takes by keyword (e.g. ``rationale_client``), closed
    with the command's. ``identity_extra``: more of what names the run (e.g. a preset's record), bound
    to the work folder and recorded in every line.

    Exit status 1 when some LLM calls failed: they stay pending and a rerun asks for them alone.
    """
    require_api_key(args)  # before a Hub download (and a work folder) that a missing key would waste
    work = claim_work_folder(args.work or args.out.with_suffix(".work"))  # before the cache opens in it
    source = resolve_data(args.data, args.revision)
    data = open_data(source.folder, args.split)
    identity = {"data": source.provenance(), "split": args.split, **(identity_extra or {})}
    frames = frame_spec_from_args(args, None, default_num_frames)
    with (
        client_from_args(args, default_cache=work / DEFAULT_CACHE, progress=False) as client,
        ExitStack() as more,
    ):
        price = apply_cost_arguments(args, client)
        for name, other in (clients(client) if clients else {}).items():
            options[name] = more.enter_context(other) if other is not None else None
        if args.estimate:  # frames probed, not decoded; nothing sent
            from builders.runs.frames import ProbeImages  # lazy: numpy, PIL, PyAV (start-up speed)

            options["images_of"] = ProbeImages()
        summary = evaluate(
            data, client, work, args.out, frames=frames, limit=args.limit, ahead=args.ahead,
            reject_failures=args.reject_llm_failures, identity=identity, videos=selection_from_args(args),
            **options,
        )  # fmt: skip
    if client.estimate is not None:
        print(f"estimate for {args.out}: {client.estimate.format(price)}")
        return 0
    print(summary.format())
    print(spent_line(summary.run, price, client.budget))
    return 0 if summary.ok else 1
