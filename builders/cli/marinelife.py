"""``vqabench marinelife build``: regenerate MarineLife-16K captions and QA with an LLM, into a work folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from builders.llm import add_llm_arguments
from builders.llm.cost import add_cost_arguments

if TYPE_CHECKING:
    from builders.pipelines.marinelife.runner import PipelineConfig


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "marinelife",
        help="MarineLife-16K regeneration pipeline (caption engine + QA generation with an LLM)",
        description="Rebuild MarineLife-16K's captions and QA records from the experts' attributes and the videos, "
        "as the paper's data engine does.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="attributes + videos -> captions -> QA -> release in a work folder (resumable)",
        description=(
            "Caption engine: a captioner drafts one caption per video from 8 frames sampled in order; a reviewer "
            "(the judge rubric marinelife_caption_review) scores it against the 13 attributes (S_c, 0-5); below "
            "--tau a refiner rewrites it with the attributes, otherwise the draft is kept. QA generation: one "
            "request per video has the LLM write three distractors per multiple-choice type (and the "
            "camera-object reference sentence); ids, correct options, option order, answer letters and prompts "
            "are computed from the attributes, and every record is validated. Each step records every finished "
            "video at once, so a killed run resumes where it stopped, and the reply cache "
            "(<work>/llm-cache.sqlite) means no successful call is paid twice. Writes <work>/release/ "
            "(see 'vqabench marinelife-data export') and <work>/summary.json."
        ),
        epilog="Offline check: 'vqabench marinelife build --sample --replay --work WORK' rebuilds the bundled sample from "
        "its recorded replies (written by a scripted responder, not a model) without sending any request.",
    )
    build.add_argument(
        "--work",
        dest="work_dir",
        type=Path,
        required=True,
        help="work folder (created; an existing one is resumed)",
    )
    source = build.add_argument_group("input")
    source.add_argument(
        "--attributes", type=Path, help="expert attribute file (CSV or JSONL, one row per video)"
    )
    source.add_argument("--video-root", type=Path, help="folder holding <collection>/<video_file>")
    source.add_argument(
        "--sample", action="store_true", help="use the bundled sample's attributes and videos instead"
    )
    source.add_argument(
        "--replay",
        action="store_true",
        help="answer only from recorded replies, send nothing: with --sample the sample's own recording and "
        "settings, otherwise the same as --llm-mode replay",
    )
    options = build.add_argument_group("pipeline")
    options.add_argument("--tau", type=float, help="refine captions whose S_c is below this (default 3.5)")
    options.add_argument("--frames", type=int, help="frames per video for the captioner (default 8)")
    options.add_argument(
        "--max-side", type=int, help="longest side of the frames sent, in pixels (default 512)"
    )
    options.add_argument("--seed", type=int, help="seed of the option order and of the split (default 0)")
    options.add_argument(
        "--template-reference",
        action="store_true",
        help="use the template sentence as the camera_object_open_ended reference instead of the LLM's",
    )
    options.add_argument(
        "--batch-size", type=int, default=32, help="videos per batch of requests (default 32)"
    )
    options.add_argument(
        "--reject-failures",
        action="store_true",
        help="drop videos whose LLM call still fails after its re-asks (reason llm_failure) instead of "
        "leaving them pending for the next run",
    )
    output = build.add_argument_group("export")
    output.add_argument(
        "--export", type=Path, metavar="OUT_DIR", help="also export the release to a Hub-layout folder"
    )
    output.add_argument("--repo-id", help="Hub repo named in the card's loading example")
    add_llm_arguments(build)
    add_cost_arguments(build)
    build.set_defaults(func=_build)


def _config(args: argparse.Namespace, recorded: PipelineConfig | None = None) -> PipelineConfig:
    from builders.pipelines.marinelife.runner import PipelineConfig

    given = {
        "tau": args.tau,
        "num_frames": args.frames,
        "max_side": args.max_side,
        "seed": args.seed,
        "llm_reference": False if args.template_reference else None,
    }
    given = {k: v for k, v in given.items() if v is not None}
    run = {"batch_size": args.batch_size, "reject_failures": args.reject_failures}
    if recorded is None:
        return PipelineConfig(**given, **run)
    differ = [
        f"--{k} {v} (recorded: {getattr(recorded, k)})" for k, v in given.items() if getattr(recorded, k) != v
    ]
    if differ:
        raise ValueError(f"the sample's replies were recorded with other settings: {', '.join(differ)}")
    return PipelineConfig(**{**recorded.outputs(), **run})


def _build(args: argparse.Namespace) -> int:
    from builders.llm import client_from_args
    from builders.pipelines.marinelife.runner import build, format_summary, replay_client
    from builders.runs.steps import DEFAULT_CACHE
    from marinelife16k.sample import sample_attributes_path, sample_root, sample_video_root

    if args.sample:
        if args.attributes or args.video_root:
            raise ValueError(
                "--sample uses the bundled attributes and videos; drop --attributes/--video-root"
            )
        attributes, video_root = sample_attributes_path(), sample_video_root()
    else:
        if not (args.attributes and args.video_root):
            raise ValueError("give --attributes and --video-root (or --sample for the bundled sample)")
        attributes, video_root = args.attributes, args.video_root
    note = None
    if args.sample and args.replay:
        client, recorded_config, recorded_note = replay_client(sample_root())
        config, note = _config(args, recorded_config), recorded_note
    else:
        if args.replay:
            args.llm_mode = "replay"
        client = client_from_args(args, default_cache=args.work_dir / DEFAULT_CACHE)
        config = _config(args)
    from builders.llm.cost import apply_cost_arguments, spent_line

    price = apply_cost_arguments(args, client)
    with client:
        result = build(
            args.work_dir, client, attributes=attributes, video_root=video_root, config=config, note=note
        )
    if client.estimate is not None:
        # The caption drafts (frames decoded, nothing sent); the steps after them need their replies.
        print(f"estimate, first step with requests to send: {client.estimate.format(price)}")
        return 0
    print(format_summary(result.summary))
    print(spent_line(client.usage, price, client.budget))
    if not result.complete:
        print(
            f"{len(result.failures)} video(s) failed; run the same command again to retry them "
            "(successful replies are cached), or add --reject-failures to drop them"
        )
        return 1
    if args.export:
        from marinelife16k.card import DEFAULT_REPO_ID
        from marinelife16k.export import export_release

        exported = export_release(args.work_dir, args.export, repo_id=args.repo_id or DEFAULT_REPO_ID)
        print(f"exported {exported.folder}; load_dataset check passed")
    return 0
