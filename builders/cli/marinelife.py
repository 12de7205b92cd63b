"""``vqabench marinelife``: regenerate MarineLife-16K captions and QA with an LLM (``build``), run a
VideoLLM on a split (``evaluate``) and judge its open-ended answers (``judge``), and work with its data
(``check-attributes``, ``validate`` QA records, release ``stats``, write the ``sample`` work folder,
``export`` in Hub layout)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from builders.cli._options import (
    add_build_export_arguments,
    add_export_arguments,
    export_options,
    export_repo_id,
)
from builders.evaluation.options import add_prediction_arguments, run_prediction_command
from builders.files.arguments import existing_file, existing_folder
from builders.hub.source import add_data_arguments
from builders.hub.subset import add_subset_arguments
from builders.llm.cli import JUDGE_ENV_PREFIX, add_llm_arguments, given_llm_options
from builders.llm.cost import add_cost_arguments, apply_cost_arguments, spent_line
from builders.options.numbers import POSITIVE_INT, number_at_least
from builders.runs.steps import add_renamed_flag, add_step_arguments
from builders.video.frame_spec import add_frame_size_arguments

# Heavy modules (datasets, PyAV, openai) load inside the handlers: lazy for start-up speed.

if TYPE_CHECKING:
    from builders.pipelines.marinelife.runner import PipelineConfig

REPO_HELP = "Hub repo named in the card's loading example (default: $VQABENCH_MARINELIFE16K_REPO_ID, else a placeholder)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "marinelife",
        help="MarineLife-16K: rebuild captions and QA with an LLM, run and judge a VideoLLM, check and export data",
        description="Rebuild MarineLife-16K's captions and QA records from the experts' attributes and the videos, "
        "as the paper's data engine does; ask any OpenAI-compatible VideoLLM every question of a split and score "
        "its open-ended answers with the LLM judge (compare models with 'vqabench report marinelife'); and work "
        "with the data outside the LLM: check an expert attribute file (CSV or JSONL, one row per video), "
        "validate QA records against the paper's JSONL schema, write the bundled sample as a work folder, or "
        "export a work folder (<work>/release/) to a folder in Hugging Face Hub layout (configs qa and videos "
        "as Parquet with the videos embedded, and a dataset card), checked with load_dataset.",
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
            "camera-object reference sentence) and decide, in a checked field, whether movement_behavior "
            "describes the central object's movement or state: only then is central_object_motion asked, with "
            "that movement alone (cut out of movement_behavior) as its answer, and the release records why it "
            "was not; ids, correct options, option order, answer letters and prompts are computed from the "
            "attributes, and every record is validated. Each step records every finished "
            "video at once, so a killed run resumes where it stopped, and the reply cache "
            "(<work>/llm-cache.sqlite) means no successful call is paid twice. Writes <work>/release/ "
            "(see 'vqabench marinelife export') and <work>/summary.json."
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
        "--attributes", type=existing_file, help="expert attribute file (CSV or JSONL, one row per video)"
    )
    source.add_argument("--video-root", type=existing_folder, help="folder holding <collection>/<video_file>")
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
    options.add_argument(
        "--tau", type=number_at_least(0), help="refine captions whose S_c is below this (default 3.5)"
    )
    options.add_argument("--seed", type=int, help="seed of the option order and of the split (default 0)")
    options.add_argument(
        "--template-reference",
        action="store_true",
        help="use the template sentence as the camera_object_open_ended reference instead of the LLM's",
    )
    add_step_arguments(options)
    frames = build.add_argument_group(
        "frames", "what the captioner sees of each video, uniform with both ends (default: 8 frames, 512 px)"
    )
    add_frame_size_arguments(frames)
    add_renamed_flag(frames, "--frames", "--num-frames N (spelled as for every command that shows frames)")
    output = build.add_argument_group("export")
    add_build_export_arguments(output, REPO_HELP)
    add_llm_arguments(build)
    add_cost_arguments(build)
    build.set_defaults(func=_build)

    p = actions.add_parser(
        "evaluate",
        help="ask a VideoLLM every question of one split and write predictions JSONL",
        description="Send each QA record of the split as the dataset states it (the video's frames, then the "
        "record's own prompt: multiple-choice prompts list the options and ask for the letter) and write one "
        "JSON line per record: question_id, type, dimension, camera_kind, raw_output, parsed_answer (a letter or "
        "'unparsed'; null for open-ended), reference, correct, evidence, model. Resumable and cached like the "
        "BQA runner: kill it and rerun the same command. Prints the overall multiple-choice accuracy.",
        epilog="Example: vqabench marinelife evaluate --data hub/marinelife16k --split test --out qwen.jsonl "
        "--llm-model Qwen2.5-VL-7B --llm-base-url http://localhost:8000/v1 --llm-api-key-env none",
    )
    add_prediction_arguments(p, dataset="MarineLife-16K", unit="questions", frames="8 frames")
    p.set_defaults(func=_evaluate)

    j = actions.add_parser(
        "judge",
        help="score the open-ended answers of a predictions file with the LLM judge",
        description="Judge the camera_object_open_ended answers (OEMU rubric: camera 35%, activity 30%, relation "
        "35%) and the captions (BEH, AH, ECF) of a predictions file, split by static/moving camera, through the "
        "cached LLM client, and write the judge results JSON that 'vqabench report marinelife --judge-results' "
        "reads (with how they were made: tool version, dataset revision, rubric signature). The file is either "
        'an \'evaluate\' output, or any predictions file ({"question_id", "raw_output"} per line, the README\'s '
        "predictions format) with --data to join each answer to its question, reference and camera kind. Unset "
        "--llm-* options fall back to VQABENCH_JUDGE_* variables, as for 'vqabench judge'. Exit status 1 when "
        "some judgements failed (listed; a rerun asks for them alone).",
        epilog="Example: vqabench marinelife judge mine.jsonl --data <namespace>/MarineLife-16K --revision v1.0 "
        "--out judge.json --llm-model gpt-4o --llm-api-key-env OPENAI_API_KEY",
    )
    j.add_argument(
        "predictions",
        type=existing_file,
        help="predictions JSONL: written by 'marinelife evaluate' (or an lmms-eval sample log / VLMEvalKit "
        "result file of the integrations' tasks), or question_id + raw_output lines with --data",
    )
    add_data_arguments(
        j,
        "the dataset to join the answers to (needed unless the file is an 'evaluate' output)",
        required=False,
    )
    j.add_argument(
        "--split", default="test", help="with --data: the split the answers are for (default test)"
    )
    add_subset_arguments(j, "videos")
    j.add_argument(
        "--allow-missing",
        action="store_true",
        help="with --data: judge the open-ended questions that have an answer and list the others, instead of failing",
    )
    j.add_argument("--out", type=Path, required=True, help="judge results JSON to write")
    j.add_argument("--name", help="the model's name in the results (default: the predictions file's stem)")
    j.add_argument(
        "--items",
        action="store_true",
        help="also write each item's scores with its question_id (what 'vqabench human-study score "
        "--judge-results' compares with the experts)",
    )
    add_llm_arguments(j, env_prefix=JUDGE_ENV_PREFIX)
    add_cost_arguments(j)
    j.set_defaults(func=_judge)

    check = actions.add_parser(
        "check-attributes",
        help="read an attribute file and report videos, collections, camera kinds and question types",
        description="Read an attribute file (video_id, collection, video_file, the 13 attributes, optional "
        "caption). A missing column, unknown collection, empty required attribute or (with --video-root) "
        "missing video file is an error naming the file and row.",
    )
    check.add_argument(
        "attributes", nargs="?", type=existing_file, help="CSV or JSONL file (default: the bundled sample)"
    )
    check.add_argument("--video-root", type=existing_folder, help="folder holding <collection>/<video_file>")
    check.set_defaults(func=_check_attributes)

    validate = actions.add_parser(
        "validate",
        help="validate QA JSONL records; with --attributes also their answers and conditional types",
        description="Check every record against the appendix's schema: ids and sequential indices, question "
        "texts, four options A-D with the answer letter on the right text, prompts, open-ended records "
        "without options, mandatory types per video, conditional types only where their attribute exists. "
        "Prints one line per violation (question id, field, problem); exit code 1 if there are any.",
    )
    validate.add_argument("qa", type=existing_file, help="QA JSONL file")
    validate.add_argument(
        "--attributes", type=existing_file, help="attribute file of the videos (CSV or JSONL)"
    )
    validate.set_defaults(func=_validate)

    stats = actions.add_parser(
        "stats",
        help="a release's statistics beside the paper's (Table 1 row, questions, Figure 5), with PNG plots",
        description="Count, per split and in total: hours of video (measured from the clips), videos, video-text "
        "pairs, sentences per caption and caption length in words (mean and distribution), questions per type "
        "and dimension, multiple-choice and open-ended questions, type 7 asked or not (and why), object "
        "instance frequencies (objects 1-4) and fine-grained attribute value frequencies; print them beside the "
        "paper's figures, with the places where the paper's figures disagree with its own rules. With --out, "
        "also write report.md, metrics.json (every number) and PNG plots in the spirit of the paper's Figure 5.",
        epilog="Example: vqabench marinelife stats --data hub/MarineLife-16K --out stats/",
    )
    add_data_arguments(stats, "the release: a work folder, an exported Hub-layout folder or a Hub repo id")
    stats.add_argument("--out", type=Path, help="folder for report.md, metrics.json and the PNG plots")
    stats.add_argument(
        "--top",
        type=POSITIVE_INT,
        default=10,
        help="most frequent values shown per object slot and attribute (default 10)",
    )
    stats.add_argument(
        "--no-durations", action="store_true", help="do not read the clips: hours of video are not measured"
    )
    stats.set_defaults(func=_stats)

    sample = actions.add_parser(
        "sample",
        help="write the bundled sample's ground-truth release as a work folder",
        description="Write <work>/release/ (videos.jsonl, qa.jsonl, meta.json) from the bundled sample, split "
        "by video with the paper's proportions; the videos stay in the installed package.",
    )
    sample.add_argument("work_dir", type=Path, help="work folder to write")
    sample.set_defaults(func=_sample)

    export = actions.add_parser(
        "export",
        help="export a work folder's release to a Hub-layout folder (Parquet + card)",
        description="Build the qa and videos configs from <work>/release/, write data/<config>/<split>-*.parquet "
        "(videos embedded once, in 'videos') and a README.md card (YAML configs with qa as default, "
        "dataset_info, terms, attribute and dimension tables, statistics), then load every config back "
        "with load_dataset to check it. An existing folder is replaced atomically, and only if an earlier export wrote it (or it is empty); never the work folder, a folder holding it, or the current directory.",
    )
    add_export_arguments(export, REPO_HELP)
    export.set_defaults(func=_export)


def _config(args: argparse.Namespace, recorded: PipelineConfig | None = None) -> PipelineConfig:
    from builders.pipelines.marinelife.runner import PipelineConfig

    given = {
        "tau": args.tau,
        "num_frames": args.num_frames,
        "max_side": args.max_side,
        "seed": args.seed,
        "llm_reference": False if args.template_reference else None,
    }
    given = {k: v for k, v in given.items() if v is not None}
    run = {"ahead": args.ahead, "reject_failures": args.reject_llm_failures}
    if recorded is None:
        return PipelineConfig(**given, **run)
    differ = [
        f"--{k} {v} (recorded: {getattr(recorded, k)})" for k, v in given.items() if getattr(recorded, k) != v
    ]
    if differ:
        raise ValueError(f"the sample's replies were recorded with other settings: {', '.join(differ)}")
    return PipelineConfig(**{**recorded.outputs(), **run})


def _build(args: argparse.Namespace) -> int:
    from builders.llm.cli import client_from_args
    from builders.pipelines.marinelife.runner import build, replay_client
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
    if args.export:  # refused before the build, not after it
        from builders.hub.layout import check_export_target

        check_export_target(args.export, args.work_dir)
    note = None
    if args.sample and args.replay:
        if given_llm_options(args):
            raise ValueError(
                f"--replay uses the settings the sample was recorded with; drop {', '.join(given_llm_options(args))}"
            )
        client, recorded_config, recorded_note = replay_client(sample_root())
        config, note = _config(args, recorded_config), recorded_note
    else:
        if args.replay:
            args.llm_mode = "replay"
        client = client_from_args(args, default_cache=args.work_dir / DEFAULT_CACHE)
        config = _config(args)

    price = apply_cost_arguments(args, client)
    with client:
        summary = build(
            args.work_dir, client, attributes=attributes, video_root=video_root, config=config, note=note
        )
    if client.estimate is not None:
        # The caption drafts (frames decoded, nothing sent); the steps after them need their replies.
        print(f"estimate, first step with requests to send: {client.estimate.format(price)}")
        return 0
    print(summary.format())
    print(spent_line(client.usage, price, client.budget))
    if not summary.ok:
        return 1  # the summary says what is left and how to resume
    if args.export:
        from marinelife16k.card import DEFAULT_REPO_ID
        from marinelife16k.export import export_release

        exported = export_release(
            args.work_dir,
            args.export,
            repo_id=export_repo_id(args.repo_id, "MarineLife-16K", DEFAULT_REPO_ID),
        )
        print(f"exported {exported.folder}; load_dataset check passed")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from builders.evaluation.marinelife import evaluate
    from marinelife16k.data import open_split

    return run_prediction_command(args, open_split, evaluate, 8)


def _judge(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from builders import tool_version
    from builders.evaluation.marinelife import judge
    from builders.files.jsonio import write_json_atomic
    from builders.hub.source import data_from_args
    from builders.hub.subset import ALL, FIELD, selection_from_args
    from builders.report.judge_join import DIGEST_KEY, predictions_digest
    from builders.report.marinelife_report import judgeable_rows
    from builders.report.provenance import run_provenance
    from builders.scoring.judge import judge_client_from_args
    from builders.scoring.judge_results import results_to_dict
    from marinelife16k.rubrics import CAMERA_GROUP

    source = data_from_args(args)
    rows, missing, subset = judgeable_rows(
        args.predictions,
        source,
        args.split,
        allow_missing=args.allow_missing,
        videos=selection_from_args(args),
    )
    if subset is not None:
        print(f"judging the answers on {subset.label}")
    if missing:
        print(
            f"{len(missing)} open-ended question(s) without an answer, not judged: {', '.join(missing[:10])}"
        )
    with judge_client_from_args(args) as client:
        price = apply_cost_arguments(args, client)
        results = judge(rows, client, return_items=args.items)
    if client.estimate is not None:
        print(f"estimate: {client.estimate.format(price)}")
        return 0
    print(spent_line(client.usage, price, client.budget))
    if not results:
        raise ValueError(
            f"{args.predictions}: no open-ended (camera_object_open_ended or caption) predictions"
        )
    run = run_provenance(args.predictions)
    provenance = {
        "tool": tool_version(),
        "predictions": args.predictions.name,
        DIGEST_KEY: predictions_digest(args.predictions),  # what the report joins the result by
        "dataset": source.provenance() if source else run.get("data"),
        "split": args.split if source else run.get("split"),
        # the videos judged: the subset asked for, else those of the run (all, or its own subset)
        FIELD: subset.provenance() if subset is not None else ALL if source else run.get(FIELD),
        "run": run,
    }
    results = {
        task: replace(
            r, provenance={**provenance, "rubric_signature": r.judge.signature if r.judge else None}
        )
        for task, r in results.items()
    }
    write_json_atomic(args.out, {args.name or args.predictions.stem: results_to_dict(results)})
    failed = 0
    for task, result in results.items():
        failed += result.n_failed
        cameras = ", ".join(
            f"{kind} {cell.score:.2f} (n={cell.n})" if cell.score is not None else f"{kind} - (n=0)"
            for kind, cell in result.by(CAMERA_GROUP).items()
        )
        score = "-" if result.score is None else f"{result.score:.2f}"
        print(f"{task}: score {score} on {result.n} judged, {result.n_failed} failed; {cameras}")
    print(f"wrote {args.out}")
    from builders.runs.unfinished import Unfinished  # lazy, like the imports above (start-up speed)

    # A failed judgement is named by its question (judge() records it).
    failures = {task: {str(f.question_id): f.error for f in r.failed} for task, r in results.items()}
    unfinished = Unfinished({task: f for task, f in failures.items() if f})
    if unfinished:
        print(unfinished.format(alternative="--out lists them"))
    return 0 if failed == 0 else 1


def _check_attributes(args: argparse.Namespace) -> int:
    from marinelife16k.annotations import read_annotations
    from marinelife16k.questions import candidate_types
    from marinelife16k.sample import sample_attributes_path, sample_video_root

    path = args.attributes or sample_attributes_path()
    video_root = args.video_root or (None if args.attributes else sample_video_root())
    rows = read_annotations(path, video_root=video_root)
    types = Counter(t for row in rows for t in candidate_types(row))
    print(f"{path}: {len(rows)} videos" + (f", all found under {video_root}" if video_root else ""))
    print(f"  collections: {dict(Counter(r['collection'] for r in rows))}")
    print(f"  camera kinds: {dict(Counter(r['camera_kind'] for r in rows))}")
    print(f"  with a caption: {sum(bool(r['caption']) for r in rows)}")
    print(
        f"  questions per type, at most: {dict(types)} (total {sum(types.values())}; central_object_motion is "
        "asked only where QA generation finds that movement_behavior describes the central object)"
    )
    return 0


def _validate(args: argparse.Namespace) -> int:
    from builders.files.jsonio import read_jsonl
    from marinelife16k.annotations import read_annotations
    from marinelife16k.schema import validate_records

    records = read_jsonl(args.qa)
    videos = read_annotations(args.attributes) if args.attributes else None
    problems = validate_records(records, videos)
    for problem in problems:
        print(problem)
    print(f"{args.qa}: {len(records)} records, {len(problems)} violation(s)")
    return 1 if problems else 0


def _stats(args: argparse.Namespace) -> int:
    import tempfile

    from builders.hub.source import required_data_from_args
    from builders.report.marinelife_stats import write_marinelife_stats

    if args.top < 1:
        raise ValueError(f"--top must be at least 1, got {args.top}")
    with tempfile.TemporaryDirectory(prefix="marinelife-stats-") as tmp:
        out = args.out or Path(tmp)
        report, blocks = write_marinelife_stats(
            required_data_from_args(args), out, measure=not args.no_durations, top=args.top
        )
        print("\n\n".join(blocks))
    if args.out:
        print(
            f"\nwrote {report.markdown}, {report.metrics_file.name} and {len(report.figures)} PNG plot(s) in {args.out}"
        )
    return 0


def _sample(args: argparse.Namespace) -> int:
    from marinelife16k.sample import write_sample_work_folder

    work = write_sample_work_folder(args.work_dir)
    print(f"wrote {work / 'release'}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from marinelife16k.card import DEFAULT_REPO_ID
    from marinelife16k.export import export_release

    result = export_release(
        args.work_dir,
        args.out_dir,
        repo_id=export_repo_id(args.repo_id, "MarineLife-16K", DEFAULT_REPO_ID),
        **export_options(args),
    )
    sizes = "; ".join(
        f"{name}: " + ", ".join(f"{split} {len(ds)}" for split, ds in dd.items())
        for name, dd in result.configs.items()
    )
    print(f"wrote {result.folder} ({sizes}); load_dataset check passed")
    return 0
