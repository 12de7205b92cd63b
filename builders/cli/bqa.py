"""BQA's entry of the benchmark registry (``vqabench bqa ...``, ``vqabench report bqa``): what is BQA's
own in each shared verb (:mod:`builders.cli._verbs`) and its own actions, ``finetune-data`` and
``check``. Rebuild BQA from BoLD with an LLM (``build``), run a VideoLLM on it (``evaluate``), and work
with its data (``check`` a BoLD source, release ``stats``, ``export`` in Hub layout)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from builders.cli._bqa_paper import BQA_PAPER  # noqa: F401  (registers --preset bqa-paper)
from builders.cli._entry import Action, Benchmark, BuildJob, EvaluateJob, Exported, Published, Verb
from builders.cli._presets import apply_preset
from builders.files.arguments import existing_file, existing_folder
from builders.files.text import plural
from builders.hub.source import add_data_arguments
from builders.llm.cli import add_derived_llm_arguments, given_llm_options
from builders.options.numbers import POSITIVE_INT
from builders.video.frame_spec import add_frame_arguments, frame_spec_from_args

# Heavy modules (datasets, PyAV, openai) load inside the handlers: lazy for start-up speed.

STEP_NAMES = "candidates,clips,questions,filter,difficulty,split"
RATIONALE_PREFIX, RATIONALE_ENV_PREFIX = "rationale-llm", "VQABENCH_RATIONALE_LLM_"
#: The evaluation styles (builders.evaluation.bqa_answers.STYLES; repeated here, argparse-cheap, and
#: checked equal by tests/test_bqa_styles.py).
STYLE_SUMMARIES: dict[str, str] = {
    "single_word": "the paper's: frames, question, 4 choices; the answer in one word",
    "multimodal_cot": "the paper's CoT (Multimodal CoT, A.7): stage 1 gets the frames, question, choices AND "
    "the correct answer and writes a rationale; stage 2 answers in one word given it (ANSWER-LEAKING)",
    "multimodal_cot_no_answer": "the same two stages, stage 1 NOT given the correct answer",
    "reason_then_answer": "one request: a short rationale, then 'Answer: <emotion>' (zero-shot CoT, not the "
    "paper's)",
}
REPO_HELP = "Hub repo named in the card's examples (default: $VQABENCH_BQA_REPO_ID, else naist-nlp/BQA)"


# -- build --------------------------------------------------------------------------------------


def _build_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument(
        "--bold-root", type=existing_folder, help="BoLD root (annotations/train.csv, val.csv, videos/)"
    )
    b.add_argument(
        "--steps", default=STEP_NAMES, help=f"comma-separated steps to run, in order (default: {STEP_NAMES})"
    )
    b.add_argument(
        "--limit", type=POSITIVE_INT, metavar="N", help="only the first N BoLD rows (train.csv, then val.csv)"
    )
    b.add_argument("--seed", type=int, help="seed of STEP1's draws and of the split (default 0)")
    b.add_argument(
        "--skip-missing", action="store_true", help="leave out rows whose clip is missing (listed)"
    )
    b.add_argument(
        "--group-mapping", type=existing_file, help="JSON/YAML emotion-group mapping (default: the project's)"
    )
    b.add_argument(
        "--codes", type=existing_file, help="JSON/YAML demographic code tables (default: the project's)"
    )
    b.add_argument(
        "--accept-changed-source",
        action="store_true",
        help="resume although the BoLD CSVs changed since the work folder was built (records already made "
        "stay as they are); without it such a rerun is refused",
    )
    b.add_argument(
        "--step4-unanswered",
        choices=("hard", "drop"),
        default="hard",
        help="a STEP4 reply that names no choice, or two: 'hard' (the paper: Hard when the model could not "
        "answer; the reason is recorded and counted) or 'drop' (reject it, as releases before did)",
    )


def _build(args: argparse.Namespace, *, sample_replay: bool) -> BuildJob:
    from bqa.sample import sample_root
    from bqa.vocabulary import (
        DEFAULT_DEMOGRAPHIC_CODES,
        DEFAULT_GROUP_MAPPING,
        load_demographic_codes,
        load_group_mapping,
    )
    from builders.demo.bqa_sample import SAMPLE_NOTE, build_options, load_recording
    from builders.pipelines.bqa.runner import LLM_STEPS, BuildOptions, build

    if args.sample == (args.bold_root is not None):
        raise ValueError("give one of --bold-root ROOT or --sample (the bundled sample)")
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    common = {
        "skip_missing": args.skip_missing,
        "ahead": args.ahead,
        "reject_llm_failures": args.reject_llm_failures,
        "accept_changed_source": args.accept_changed_source,
        "step4_unanswered": args.step4_unanswered,
    }
    recorded = None
    if sample_replay:
        recording = load_recording()
        given = {"--seed": args.seed, "--limit": args.limit, "--fps": args.fps, "--num-frames": args.num_frames,
                 "--max-side": args.max_side, "--llm-replies": args.llm_replies,
                 "--group-mapping": args.group_mapping, "--codes": args.codes, "--preset": args.preset}  # fmt: skip
        clashing = [flag for flag, value in given.items() if value is not None] + given_llm_options(args)
        if clashing:
            raise ValueError(
                f"--replay uses the settings the sample was recorded with; drop {', '.join(clashing)}"
            )
        options = build_options(recording, **common)
        recorded = recording.replay_client()
    else:
        preset = apply_preset(args, "bqa build")
        options = BuildOptions(
            bold_root=sample_root() if args.sample else args.bold_root,
            limit=args.limit,
            seed=0 if args.seed is None else args.seed,
            frames=frame_spec_from_args(args, 1.0, None),
            source_note=SAMPLE_NOTE if args.sample else "BoLD",
            preset=preset,
            group_mapping=load_group_mapping(args.group_mapping)
            if args.group_mapping
            else DEFAULT_GROUP_MAPPING,
            demographic_codes=load_demographic_codes(args.codes) if args.codes else DEFAULT_DEMOGRAPHIC_CODES,
            **common,
        )

    def run(client: Any) -> Any:
        return build(args.work, options, client, steps, images_of=_probe() if args.estimate else None)

    def estimate(found: Any, price: Any) -> str:
        return _build_estimate(args.work, found, price)

    return BuildJob(run, recorded=recorded, needs_llm=bool(LLM_STEPS.intersection(steps)), estimate=estimate)


def _probe():  # lazy import: start-up speed
    from builders.runs.frames import ProbeImages

    return ProbeImages()


def _build_estimate(work: Path, estimate, price) -> str:
    """The estimate of the first LLM step with requests to send, and an upper bound for the steps
    after it (which need its replies): STEP4 shows the same frames (about the same input), STEP3
    sends text only, and every item is assumed to reach them."""
    from builders.llm.cost import Estimate

    unfinished = [
        s for s in ("questions", "filter", "difficulty") if not (work / "steps" / f"{s}.jsonl").is_file()
    ]
    if not unfinished:
        return f"estimate: {estimate.format(price)}"
    step = unfinished[0]
    lines = [f"estimate, step {step}: {estimate.format(price)}"]
    later = {"questions": ("filter", "difficulty"), "filter": ("difficulty",)}.get(step, ())
    bound = Estimate(**vars(estimate))
    for name in later:
        text_only = name == "filter"
        bound.add(Estimate(requests=estimate.requests, text_tokens=estimate.text_tokens,
                           image_tokens=0 if text_only else estimate.image_tokens,
                           images=0 if text_only else estimate.images,
                           output_tokens=estimate.requests * (60 if text_only else 4)))  # fmt: skip
    if later:
        lines.append(f"  with {', '.join(later)} (upper bound, every item kept): {bound.format(price)}")
    return "\n".join(lines)


# -- evaluate -----------------------------------------------------------------------------------


def _evaluate_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument(
        "--style",
        choices=list(STYLE_SUMMARIES),
        default="single_word",
        help="evaluation style (see above)",
    )
    add_derived_llm_arguments(
        e, RATIONALE_PREFIX, RATIONALE_ENV_PREFIX, "rationale LLM (two-stage styles)",
        "who writes stage 1's rationales (default: the --llm-* model)",
    )  # fmt: skip


def _evaluate(args: argparse.Namespace) -> EvaluateJob:
    from bqa.data import open_split
    from builders.evaluation.bqa import evaluate
    from builders.evaluation.bqa_answers import get_style
    from builders.evaluation.options import derived_client

    style = get_style(args.style)

    def clients(client):
        other = derived_client(args, client, RATIONALE_PREFIX, RATIONALE_ENV_PREFIX)
        if other is not None and not style.two_stage:
            other.close()
            raise ValueError(f"--{RATIONALE_PREFIX}-* options apply to two-stage styles, not {style.name}")
        return {"rationale_client": other}

    return EvaluateJob(open_split, evaluate, clients=clients, options={"style": style.name})


# -- export, stats ------------------------------------------------------------------------------


def _export_arguments(export: argparse.ArgumentParser) -> None:
    export.add_argument("--no-self-bleu", action="store_true", help="skip the Self-BLEU of the questions")


def _export(work: Path, out: Path, args: argparse.Namespace, **options: Any) -> Exported:
    from bqa.export import export_release

    result = export_release(work, out, self_bleu=not getattr(args, "no_self_bleu", False), **options)
    return Exported(result.folder, ", ".join(f"{split} {len(ds)}" for split, ds in result.dataset.items()))


def _stats_arguments(stats: argparse.ArgumentParser) -> None:
    add_data_arguments(
        stats,
        "the release: the pipeline's work folder, an exported Hub-layout folder or a Hub repo id (what STEP3 "
        "removed, Figure 5, only a work folder knows)",
    )
    stats.add_argument("--out", type=Path, help="folder for the PNGs and stats.json")
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON instead")
    stats.add_argument("--no-self-bleu", action="store_true", help="skip the Self-BLEU of the questions")
    stats.add_argument(
        "--no-clips", action="store_true", help="do not measure the clips (durations, frame rates)"
    )


def _stats(args: argparse.Namespace) -> int:
    from bqa.stats import format_stats, stats_of_data
    from builders.hub.source import required_data_from_args

    source = required_data_from_args(args)
    stats = stats_of_data(source.folder, self_bleu=not args.no_self_bleu, clips=not args.no_clips)
    print(json.dumps(stats.to_json(), indent=2) if args.json else format_stats(stats))
    if args.out is not None:
        from builders.files.jsonio import write_json_atomic
        from builders.report.bqa_stats_plots import write_stats_plots

        pngs = write_stats_plots(stats, args.out)
        write_json_atomic(args.out / "stats.json", stats.to_json())
        print(f"wrote stats.json and {len(pngs)} PNG(s) to {args.out}: {', '.join(p.name for p in pngs)}")
    return 0


# -- report -------------------------------------------------------------------------------------


def _report_arguments(report: argparse.ArgumentParser) -> None:
    report.add_argument(
        "--human",
        type=Path,
        metavar="METRICS_JSON",
        help="a BQA human study's result on the same split (the metrics.json 'vqabench human-study score' "
        "writes): the Human row of the paper's table",
    )
    report.add_argument(
        "--group-mapping",
        help="emotion-group mapping (JSON/YAML file) if the release used another than its own / the default",
    )


def _report(args: argparse.Namespace, data: Any, predictions: Any, **shared: Any) -> Any:
    from builders.report import write_bqa_report

    if not predictions:
        raise ValueError("give at least one --predictions NAME=FILE")
    report = write_bqa_report(
        data, args.split, predictions, args.out, group_mapping=args.group_mapping, human=args.human, **shared
    )
    for name, m in report.metrics["models"].items():
        r = m["metrics"]
        line = (
            f"{name}: accuracy {r['accuracy']:.3f} (Easy {r['accuracy_easy']:.3f}, Hard {r['accuracy_hard']:.3f}) "
            f"on {r['n']} items; {r['n_unparsed']} unparsed"
            if r["n_easy"] and r["n_hard"]
            else f"{name}: accuracy {r['accuracy']:.3f} on {r['n']} items; {r['n_unparsed']} unparsed"
        )
        if m["answer_leaking"]:
            line += f" [ANSWER-LEAKING: {m['style'] or 'the rationale saw the answer'}]"
        print(line)
    return report


# -- BQA's own actions --------------------------------------------------------------------------


def _finetune_arguments(ft: argparse.ArgumentParser) -> None:
    add_data_arguments(ft, "the BQA data")
    ft.add_argument("--split", default="train", help="split to export (default train, as the paper tuned)")
    ft.add_argument("--out", type=Path, required=True, help="folder to write (media, data files, configs)")
    ft.add_argument(
        "--format", default="all", help="comma-separated: llava, llama-factory, ms-swift, or all (default)"
    )
    ft.add_argument(
        "--media", choices=("video", "frames"), default="video", help="clips (default) or frames as JPEGs"
    )
    ft.add_argument("--limit", type=POSITIVE_INT, metavar="N", help="only the first N rows")
    ft.add_argument(
        "--model",
        default="Qwen/Qwen2-VL-7B-Instruct",
        help="what the LLaMA-Factory / ms-swift configs tune (default Qwen/Qwen2-VL-7B-Instruct; the paper's "
        "VideoLLaMA2 trains from the llava file with configs/videollama2_lora.sh)",
    )
    ft.add_argument(
        "--template", default="qwen2_vl", help="LLaMA-Factory chat template of --model (default qwen2_vl)"
    )
    add_frame_arguments(ft, "16 frames, with --media frames")


def _finetune_data(args: argparse.Namespace) -> int:
    from bqa.data import open_split
    from builders.evaluation.bqa_finetune import FINETUNE_MARKER, FORMATS, export_finetune_data
    from builders.files.folders import check_replaceable
    from builders.hub.source import required_data_from_args

    formats = (
        list(FORMATS)
        if args.format.strip() == "all"
        else [f.strip() for f in args.format.split(",") if f.strip()]
    )
    if args.media == "frames" and args.format.strip() == "all":
        formats = [f for f in formats if f != "llava"]  # documented for videos only
    folder = required_data_from_args(args).folder
    check_replaceable(args.out, marker=FINETUNE_MARKER, protect={"the dataset": folder})  # before reading
    data = open_split(folder, args.split)
    result = export_finetune_data(
        data, args.out, formats=formats, media=args.media, frames=frame_spec_from_args(args, None, 16),
        limit=args.limit, model=args.model, template=args.template, protect={"the dataset": folder},
    )  # fmt: skip
    print(result.format())
    return 0


def _check_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "root", nargs="?", type=existing_folder, help="BoLD root (default: the bundled sample)"
    )
    check.add_argument(
        "--skip-missing", action="store_true", help="list rows whose clip is missing instead of failing"
    )
    check.add_argument(
        "--codes", type=existing_file, help="JSON/YAML demographic code tables (default: bqa.vocabulary's)"
    )


def _check(args: argparse.Namespace) -> int:
    from bqa.bold import read_bold
    from bqa.sample import sample_root
    from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES, load_demographic_codes

    codes = load_demographic_codes(args.codes) if args.codes else DEFAULT_DEMOGRAPHIC_CODES
    source = read_bold(args.root or sample_root(), codes=codes, skip_missing=args.skip_missing)
    rows = source.annotations
    print(
        f"{source.root}: {plural(len(rows), 'usable row')}, {plural(len({a.film_id for a in rows}), 'film')}"
    )
    for split, n in sorted(Counter(a.bold_split for a in rows).items()):
        print(f"  {split}: {n} rows")
    if source.missing:
        print(f"{len(source.missing)} row(s) left out, clip missing:")
        print(source.missing_report(), end="")
    return 0


def _published() -> Published:
    from bqa.benchmark import BENCHMARK, RESULTS_FILE_STEM
    from bqa.card import DEFAULT_REPO_ID

    return Published(BENCHMARK, RESULTS_FILE_STEM, DEFAULT_REPO_ID)


ENTRY = Benchmark(
    key="bqa",
    name="BQA",
    help="BQA: rebuild it from BoLD with an LLM, run a VideoLLM on it, check, describe and export its data",
    description="The BQA regeneration pipeline (the paper's four steps, resumable, cached), the model "
    "evaluation runner (both talk to any OpenAI-compatible endpoint: Gemini, GPT, vLLM, Ollama), and "
    "the data actions outside the LLM: check that a BoLD root reads cleanly, print a built release's "
    "statistics, export it to a folder in Hugging Face Hub layout (Parquet shards with the clips "
    "embedded and a dataset card), checked with load_dataset.",
    published=_published,
    human_study="bqa",
    rows="rows",
    videos="clips (rows)",
    evaluate_frames=16,
    build_frames="1 fps",
    repo_help=REPO_HELP,
    sample="the bundled BoLD-format sample (38 rows) instead of --bold-root",
    build=Verb(
        help="run STEP1-STEP4 and the 6:2:2 split over a BoLD root into a work folder",
        raw_description=True,
        description=(
            "Build a BQA release in a work folder, step by step:\n"
            "  candidates  STEP1: answer + 3 distractors from BoLD's scores (no LLM)\n"
            "  clips       each row's clip without audio, <work>/clips/<id>.mp4\n"
            "  questions   STEP2: the LLM writes a question from the frames and the 4 candidates\n"
            "  filter      STEP3: rule filter, then the LLM judges objectivity, leaks, harm\n"
            "  difficulty  STEP4: the LLM answers; right = Easy; another choice, no choice or two = Hard\n"
            "              (its reason per item: wrong_choice, no_answer, ambiguous), as the paper labels it\n"
            "  split       train/validation/test 6:2:2 by film, stratified, seeded -> <work>/release/\n"
            "Every step resumes: kill it and rerun the same command; finished items are not redone and "
            "replies that validated come from the cache (<work>/llm-cache.sqlite). Rejected items are kept "
            "with their reason in <work>/steps/<step>.rejects.jsonl. Prints a summary (also "
            "<work>/summary.json).\n\n"
            "Offline demo: vqabench bqa build --sample --replay --work /tmp/bqa-sample"
        ),
        arguments=_build_arguments,
        run=_build,
    ),
    evaluate=Verb(
        help="run an OpenAI-compatible VideoLLM on a BQA split and write predictions JSONL",
        raw_description=True,
        description="Ask a VideoLLM every question of one split (frames + question + 4 choices) in one of the\n"
        "evaluation styles below, and write one JSON line per row: id, raw_output, parsed_answer, rationale,\n"
        "answer_leaking, the reference and metadata (score it with metrics/bqa_accuracy). Resumable and\n"
        "cached like the build; prints Easy/Hard/Total accuracy.\n\nStyles:\n"
        + "\n".join(f"  {name:<25} {summary}" for name, summary in STYLE_SUMMARIES.items())
        + "\n\nThe paper's Table 1 runs single_word (Test) and multimodal_cot (Test (CoT)); multimodal_cot's\n"
        "stage 1 sees the correct answer, so its scores are marked answer-leaking everywhere.",
        arguments=_evaluate_arguments,
        run=_evaluate,
    ),
    export=Verb(
        help="export a work folder's release to a Hub-layout folder (Parquet + card)",
        description="Build the release with the BQA builder, write data/default/<split>-*.parquet with the "
        "clips embedded and a README.md card (YAML configs, dataset_info, statistics, limitations), then "
        "load the folder back with load_dataset to check it. An existing folder is replaced atomically, and "
        "only if an earlier export wrote it (or it is empty); never the work folder, a folder holding it, or "
        "the current directory.",
        arguments=_export_arguments,
        run=_export,
    ),
    stats=Verb(
        help="statistics of a work folder's release: sizes, Easy/Hard and STEP4 reasons, Figure 3 and 5, "
        "clips measured, question openings, Self-BLEU (text, JSON, PNGs)",
        description="Check a work folder's release and print its statistics as the paper reports its own: "
        "split sizes with Easy/Hard and STEP4's reasons (Table 3), Self-BLEU of the questions (Table 2), the "
        "clips' durations and frame rates measured from the clips, how the questions begin (A.4), the "
        "distributions of answer groups, gender, age and ethnicity (Figure 3) and what STEP3 removed and STEP4 "
        "labelled (Figure 5). --out writes them as PNGs (and stats.json).",
        arguments=_stats_arguments,
        run=_stats,
    ),
    report=Verb(
        help="BQA: accuracy by difficulty, error rates by gender/age/ethnicity, emotion-group confusion",
        description=(
            'BQA report. Predictions: JSONL lines {"id", "raw_output" (or "prediction"), "rationale"?}; '
            "the reference answers, choices, difficulty and demographics come from the dataset split. "
            "Sections: the paper's table (Table 1 on the test split, Table 4 on validation: rows are models, "
            "#F, Easy/Hard/Total, a model's CoT run beside its plain run - paired by the model they asked for - "
            "and a Human row with --human), Easy/Hard/Total accuracy with 95% intervals, error rate by gender, "
            "age and ethnicity with a chi-square test (Figure 4), emotion groups of wrong answers with Others "
            "(Figure 6), and rationale leakage when rationales are given. Runs of the multimodal_cot style are "
            "marked answer-leaking (their rationale saw the correct answer)."
        ),
        epilog="Example: vqabench report bqa --data hub/BQA --split test --predictions gpt4o=gpt4o.jsonl "
        "--predictions gemini=gemini.jsonl --out reports/bqa-test",
        arguments=_report_arguments,
        run=_report,
    ),
    actions=(
        Action(
            "finetune-data",
            help="export a split as supervised fine-tuning data (VideoLLaMA2/LLaVA-NeXT, LLaMA-Factory, ms-swift) "
            "with ready LoRA configs carrying the paper's Table 5 hyperparameters",
            description="Write a split (the paper tuned on train) as SFT data: the evaluation's single-word prompt "
            "as the user turn, the correct choice in one word as the target. Formats: llava (the LLaVA-style "
            "conversation JSON VideoLLaMA2 and LLaVA-NeXT train from), llama-factory (sharegpt messages + videos or "
            "images, with its dataset_info.json), ms-swift (messages + videos or images JSONL). Media: the clips "
            "(--media video) or the frames the evaluation shows, as JPEGs (--media frames). OUT/configs/ holds "
            "table5.json and one ready run per trainer (LoRA r 128, alpha 256, dropout 0.05, bf16, seed 42, max "
            "length 2048, batch 4, 1 epoch, o_proj gate_proj up_proj v_proj q_proj down_proj k_proj).",
            epilog="Example: vqabench bqa finetune-data --data hub/BQA --split train --out ft/ && "
            "llamafactory-cli train ft/configs/llamafactory_lora_sft.yaml",
            arguments=_finetune_arguments,
            run=_finetune_data,
        ),
        Action(
            "check",
            help="read a BoLD root and report rows, films, answers and missing clips",
            description="Read BoLD's headerless annotation CSVs, decode every row and look for every clip. A "
            "malformed row is an error naming file, line and column.",
            arguments=_check_arguments,
            run=_check,
        ),
    ),
)
