"""MarineLife-16K's entry of the benchmark registry (``vqabench marinelife ...``, ``vqabench report
marinelife``): what is MarineLife's own in each shared verb (:mod:`builders.cli._verbs`) and its own
actions. Regenerate captions and QA with an LLM (``build``), run a VideoLLM on a split (``evaluate``)
and judge its open-ended answers (``judge``), and work with its data (``check-attributes``,
``validate`` QA records, release ``stats``, write the ``sample`` work folder, ``export`` in Hub
layout)."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builders.cli._entry import Action, Benchmark, BuildJob, EvaluateJob, Exported, Published, Verb
from builders.files.arguments import existing_file, existing_folder
from builders.hub.source import add_data_arguments
from builders.llm.cli import given_llm_options
from builders.options.numbers import POSITIVE_INT, number_at_least

# Heavy modules (datasets, PyAV, openai) load inside the handlers: lazy for start-up speed.

if TYPE_CHECKING:
    from builders.pipelines.marinelife.runner import PipelineConfig

REPO_HELP = "Hub repo named in the card's loading example (default: $VQABENCH_MARINELIFE16K_REPO_ID, else a placeholder)"
#: The captioner's frames when no frame flag is given (builders.pipelines.marinelife.captioner; argparse-cheap).
BUILD_FRAMES = "8 frames spread evenly over the video, both ends, longer side 512 px"


# -- build --------------------------------------------------------------------------------------


def _build_arguments(build: argparse.ArgumentParser) -> None:
    source = build.add_argument_group("input")
    source.add_argument(
        "--attributes", type=existing_file, help="expert attribute file (CSV or JSONL, one row per video)"
    )
    source.add_argument("--video-root", type=existing_folder, help="folder holding <collection>/<video_file>")
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


def _frames(args: argparse.Namespace):
    """The captioner's frames from the shared frame flags (None: none given, the default applies)."""
    from builders.pipelines.marinelife.captioner import MAX_SIDE, NUM_FRAMES
    from builders.video.frame_spec import frame_spec_from_args

    given = args.fps is not None or args.num_frames is not None or args.max_side is not None
    given = (
        given or args.frame_rule != "uniform" or args.video_input != "images" or args.max_frames is not None
    )
    if not given:
        return None
    spec = frame_spec_from_args(args, None, NUM_FRAMES)
    return spec if args.max_side is not None else replace(spec, max_side=MAX_SIDE)


def _config(args: argparse.Namespace, recorded: PipelineConfig | None = None) -> PipelineConfig:
    from builders.pipelines.marinelife.runner import PipelineConfig

    given = {
        "tau": args.tau,
        "frames": _frames(args),
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
    return replace(recorded, **run)


def _build(args: argparse.Namespace, *, sample_replay: bool) -> BuildJob:
    from builders.pipelines.marinelife.runner import build, replay_client
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
    note, recorded = None, None
    if sample_replay:
        if given_llm_options(args):
            raise ValueError(
                f"--replay uses the settings the sample was recorded with; drop {', '.join(given_llm_options(args))}"
            )
        recorded, recorded_config, note = replay_client(sample_root())
        config = _config(args, recorded_config)
    else:
        config = _config(args)

    def run(client: Any) -> Any:
        return build(
            args.work, client, attributes=attributes, video_root=video_root, config=config, note=note
        )

    return BuildJob(run, recorded=recorded)


# -- evaluate -----------------------------------------------------------------------------------


def _evaluate(args: argparse.Namespace) -> EvaluateJob:
    from builders.evaluation.marinelife import evaluate
    from marinelife16k.data import open_split

    return EvaluateJob(open_split, evaluate)


# -- judge --------------------------------------------------------------------------------------


def _judge(args: argparse.Namespace):
    """Read the predictions (joined to --data when given); the judging and the results' writing come
    back as the two steps the judge verb runs (:func:`builders.cli._verbs.run_judge`)."""
    from builders.hub.source import data_from_args
    from builders.hub.subset import selection_from_args
    from builders.report.marinelife_report import judgeable_rows

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

    def judge_with(client: Any):
        from builders.evaluation.marinelife import judge

        results = judge(rows, client, return_items=args.items)
        return lambda: _write_judged(args, source, subset, results)

    return judge_with


def _judge_rows(rows: list[Any], rubric: Any, path: Path) -> dict[str, list[Any]] | None:
    """The judge's inputs from a ``marinelife evaluate`` output (every row a question with its type and
    format): the rows of the rubric's question type, as ``marinelife judge`` reads them; None otherwise."""
    from builders.evaluation.marinelife import judge_inputs
    from marinelife16k.rubrics import JUDGE_TASKS

    if not rows or not all(isinstance(r, dict) and "question_format" in r and "type" in r for r in rows):
        return None
    task = next((t for t, judged in JUDGE_TASKS.items() if judged.rubric == rubric.name), None)
    if task is None:
        judged = [t.rubric for t in JUDGE_TASKS.values()]
        raise ValueError(
            f"{path}: a 'marinelife evaluate' output is judged with the rubric of one of its open-ended types "
            f"({', '.join(judged)}), not {rubric.name!r}; 'vqabench marinelife judge' judges both"
        )
    inputs, qtype = judge_inputs(rows, task), JUDGE_TASKS[task].question_type
    if inputs is None:
        raise ValueError(f"{path}: no {qtype} question to judge with {rubric.name!r}")
    print(f"{path}: a 'marinelife evaluate' output; judging its {len(inputs['predictions'])} {qtype} row(s) "
          f"of {len(rows)}")  # fmt: skip
    return inputs


def _write_judged(args: argparse.Namespace, source: Any, subset: Any, results: Any) -> int:
    from builders import tool_version
    from builders.files.jsonio import write_json_atomic
    from builders.hub.subset import ALL, FIELD
    from builders.report.judge_join import DIGEST_KEY, predictions_digest
    from builders.report.provenance import run_provenance
    from builders.runs.unfinished import Unfinished
    from builders.scoring.judge_results import results_to_dict
    from marinelife16k.rubrics import CAMERA_GROUP

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
    # A failed judgement is named by its question (judge() records it).
    failures = {task: {str(f.question_id): f.error for f in r.failed} for task, r in results.items()}
    unfinished = Unfinished({task: f for task, f in failures.items() if f})
    if unfinished:
        print(unfinished.format(alternative="--out lists them"))
    return 0 if failed == 0 else 1


# -- export, stats, report ----------------------------------------------------------------------


def _export(work: Path, out: Path, args: argparse.Namespace, **options: Any) -> Exported:
    from marinelife16k.export import export_release

    result = export_release(work, out, **options)
    sizes = "; ".join(
        f"{name}: " + ", ".join(f"{split} {len(ds)}" for split, ds in dd.items())
        for name, dd in result.configs.items()
    )
    return Exported(result.folder, sizes)


def _stats_arguments(stats: argparse.ArgumentParser) -> None:
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


def _report_arguments(report: argparse.ArgumentParser) -> None:
    report.add_argument(
        "--judge-results",
        action="append",
        default=[],
        type=existing_file,
        metavar="FILE",
        help="judge results JSON (repeatable)",
    )
    report.add_argument(
        "--models",
        type=existing_file,
        metavar="FILE",
        help="CSV with a header row and columns name,group,backbone: each model's group and backbone, for "
        "Table 3 and the caption table in the paper's layout (group rows, a Backbone column, an Average row "
        "per group, the moving-minus-static difference of the caption averages); names as in --predictions "
        "and the judge results",
    )


def _report(args: argparse.Namespace, data: Any, predictions: Any, **shared: Any) -> Any:
    from builders.report import write_marinelife_report

    report = write_marinelife_report(
        data,
        args.split,
        predictions,
        args.out,
        judge_results=args.judge_results,
        models=args.models,
        **shared,
    )
    for name, m in report.metrics["models"].items():
        if "accuracy" in m:
            print(
                f"{name}: overall multiple-choice accuracy {m['accuracy']['overall']:.1f} on {m['accuracy']['n']['overall']} questions"
            )
    return report


# -- MarineLife's own actions -------------------------------------------------------------------


def _check_attributes_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "attributes", nargs="?", type=existing_file, help="CSV or JSONL file (default: the bundled sample)"
    )
    check.add_argument("--video-root", type=existing_folder, help="folder holding <collection>/<video_file>")


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


def _validate_arguments(validate: argparse.ArgumentParser) -> None:
    validate.add_argument("qa", type=existing_file, help="QA JSONL file")
    validate.add_argument(
        "--attributes", type=existing_file, help="attribute file of the videos (CSV or JSONL)"
    )


def _sample_arguments(sample: argparse.ArgumentParser) -> None:
    sample.add_argument("work_dir", type=Path, help="work folder to write")


def _sample(args: argparse.Namespace) -> int:
    from builders.runs.lock import work_folder_lock
    from marinelife16k.sample import write_sample_work_folder

    with work_folder_lock(args.work_dir):  # a work folder, or a new one: never a folder of other files
        work = write_sample_work_folder(args.work_dir)
    print(f"wrote {work / 'release'}")
    return 0


def _published() -> Published:
    from marinelife16k.benchmark import BENCHMARK, RESULTS_FILE_STEM
    from marinelife16k.card import DEFAULT_REPO_ID

    return Published(BENCHMARK, RESULTS_FILE_STEM, DEFAULT_REPO_ID)


ENTRY = Benchmark(
    key="marinelife",
    name="MarineLife-16K",
    help="MarineLife-16K: rebuild captions and QA with an LLM, run and judge a VideoLLM, check and export data",
    description="Rebuild MarineLife-16K's captions and QA records from the experts' attributes and the videos, "
    "as the paper's data engine does; ask any OpenAI-compatible VideoLLM every question of a split and score "
    "its open-ended answers with the LLM judge (compare models with 'vqabench report marinelife'); and work "
    "with the data outside the LLM: check an expert attribute file (CSV or JSONL, one row per video), "
    "validate QA records against the paper's JSONL schema, write the bundled sample as a work folder, or "
    "export a work folder (<work>/release/) to a folder in Hugging Face Hub layout (configs qa and videos "
    "as Parquet with the videos embedded, and a dataset card), checked with load_dataset.",
    published=_published,
    human_study="marinelife16k",
    rows="questions",
    videos="videos",
    evaluate_frames=8,
    build_frames=BUILD_FRAMES,
    repo_help=REPO_HELP,
    sample="the bundled sample's attributes and videos instead of --attributes/--video-root",
    build=Verb(
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
        arguments=_build_arguments,
        run=_build,
    ),
    evaluate=Verb(
        help="ask a VideoLLM every question of one split and write predictions JSONL",
        description="Send each QA record of the split as the dataset states it (the video's frames, then the "
        "record's own prompt: multiple-choice prompts list the options and ask for the letter) and write one "
        "JSON line per record: question_id, type, dimension, camera_kind, raw_output, parsed_answer (a letter or "
        "'unparsed'; null for open-ended), reference, correct, evidence, model. Resumable and cached like the "
        "BQA runner: kill it and rerun the same command. Prints the overall multiple-choice accuracy.",
        epilog="Example: vqabench marinelife evaluate --data hub/marinelife16k --split test --out qwen.jsonl "
        "--llm-model Qwen2.5-VL-7B --llm-base-url http://localhost:8000/v1 --llm-api-key-env none",
        run=_evaluate,
    ),
    judge=Verb(
        help="score the open-ended answers of a predictions file with the LLM judge",
        description="Judge the camera_object_open_ended answers (OEMU rubric: camera 35%, activity 30%, relation "
        "35%) and the captions (BEH, AH, ECF) of a predictions file, split by static/moving camera, through the "
        "cached LLM client, and write the judge results JSON that 'vqabench report marinelife --judge-results' "
        "reads (with how they were made: tool version, dataset revision, rubric signature). The file is either "
        'an \'evaluate\' output, or any predictions file ({"question_id", "raw_output"} per line, the README\'s '
        "predictions format) with --data to join each answer to its question, reference and camera kind. Unset "
        "--llm-* options fall back to VQABENCH_JUDGE_* variables, as for 'vqabench judge'. Exit status 1 when "
        "some judgements failed (listed; a rerun asks for them alone).",
        epilog='Example: vqabench marinelife judge mine.jsonl --data "$VQABENCH_MARINELIFE16K_REPO_ID" --revision v1.0 '
        "--out judge.json --llm-model gpt-4o --llm-api-key-env OPENAI_API_KEY",
        run=_judge,
    ),
    judge_rows=_judge_rows,
    export=Verb(
        help="export a work folder's release to a Hub-layout folder (Parquet + card)",
        description="Build the qa and videos configs from <work>/release/, write data/<config>/<split>-*.parquet "
        "(videos embedded once, in 'videos') and a README.md card (YAML configs with qa as default, "
        "dataset_info, terms, attribute and dimension tables, statistics), then load every config back "
        "with load_dataset to check it. An existing folder is replaced atomically, and only if an earlier "
        "export wrote it (or it is empty); never the work folder, a folder holding it, or the current directory.",
        run=_export,
    ),
    stats=Verb(
        help="a release's statistics beside the paper's (Table 1 row, questions, Figure 5), with PNG plots",
        description="Count, per split and in total: hours of video (measured from the clips), videos, video-text "
        "pairs, sentences per caption and caption length in words (mean and distribution), questions per type "
        "and dimension, multiple-choice and open-ended questions, type 7 asked or not (and why), object "
        "instance frequencies (objects 1-4) and fine-grained attribute value frequencies; print them beside the "
        "paper's figures, with the places where the paper's figures disagree with its own rules. With --out, "
        "also write report.md, metrics.json (every number) and PNG plots in the spirit of the paper's Figure 5.",
        epilog="Example: vqabench marinelife stats --data hub/MarineLife-16K --out stats/",
        arguments=_stats_arguments,
        run=_stats,
    ),
    report=Verb(
        help="MarineLife-16K: per-dimension accuracy (0-100) and judge scores by static/moving camera",
        description=(
            'MarineLife-16K report. Predictions: JSONL lines {"question_id", "raw_output"} joined to the qa '
            "config's rows; replies to open-ended questions may be present and are left to the judge. "
            "Judge results (already computed by the judge metric; this command calls no LLM): a JSON file "
            '{"<model>": {"oemu": <result>, "caption": <result>}} where a result has score, criteria, n, '
            "n_failed and by_camera {static|moving: {score, criteria, n}}. Sections: accuracy per dimension with "
            "intervals, Table 3 and the caption table (BEH/AH/ECF for static and moving camera) in the paper's "
            "layout (model groups, Backbone, Average rows from --models), judge scores by camera."
        ),
        epilog="Example: vqabench report marinelife --data hub/MarineLife-16K --predictions qwen=qwen.jsonl "
        "--judge-results judge.json --out reports/marine-test",
        arguments=_report_arguments,
        run=_report,
    ),
    actions=(
        Action(
            "check-attributes",
            help="read an attribute file and report videos, collections, camera kinds and question types",
            description="Read an attribute file (video_id, collection, video_file, the 13 attributes, optional "
            "caption). A missing column, unknown collection, empty required attribute or (with --video-root) "
            "missing video file is an error naming the file and row.",
            arguments=_check_attributes_arguments,
            run=_check_attributes,
        ),
        Action(
            "validate",
            help="validate QA JSONL records; with --attributes also their answers and conditional types",
            description="Check every record against the appendix's schema: ids and sequential indices, question "
            "texts, four options A-D with the answer letter on the right text, prompts, open-ended records "
            "without options, mandatory types per video, conditional types only where their attribute exists. "
            "Prints one line per violation (question id, field, problem); exit code 1 if there are any.",
            arguments=_validate_arguments,
            run=_validate,
        ),
        Action(
            "sample",
            help="write the bundled sample's ground-truth release as a work folder",
            description="Write <work>/release/ (videos.jsonl, qa.jsonl, meta.json) from the bundled sample, split "
            "by video with the paper's proportions; the videos stay in the installed package.",
            arguments=_sample_arguments,
            run=_sample,
        ),
    ),
)
