"""``vqabench bqa``: rebuild BQA from BoLD with an LLM (``build``), run a VideoLLM on it (``evaluate``),
and work with its data (``check`` a BoLD source, release ``stats``, ``export`` in Hub layout)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from builders.cli._bqa_paper import BQA_PAPER  # noqa: F401  (registers --preset bqa-paper)
from builders.cli._options import (
    add_build_export_arguments,
    add_export_arguments,
    export_options,
    export_repo_id,
)
from builders.cli._presets import add_preset_argument, apply_preset
from builders.evaluation.options import add_prediction_arguments, derived_client, run_prediction_command
from builders.files.arguments import existing_file, existing_folder
from builders.files.text import plural
from builders.hub.source import add_data_arguments
from builders.llm.cli import add_derived_llm_arguments, add_llm_arguments, client_from_args, given_llm_options
from builders.llm.cost import add_cost_arguments, apply_cost_arguments, spent_line
from builders.options.numbers import POSITIVE_INT
from builders.runs.steps import DEFAULT_CACHE, add_step_arguments
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
    "paper's; formerly 'rationale')",
}
REPO_HELP = "Hub repo named in the card's examples (default: $VQABENCH_BQA_REPO_ID, else naist-nlp/BQA)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bqa",
        help="BQA: rebuild it from BoLD with an LLM, run a VideoLLM on it, check, describe and export its data",
        description="The BQA regeneration pipeline (the paper's four steps, resumable, cached), the model "
        "evaluation runner (both talk to any OpenAI-compatible endpoint: Gemini, GPT, vLLM, Ollama), and "
        "the data actions outside the LLM: check that a BoLD root reads cleanly, print a built release's "
        "statistics, export it to a folder in Hugging Face Hub layout (Parquet shards with the clips "
        "embedded and a dataset card), checked with load_dataset.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    b = actions.add_parser(
        "build",
        help="run STEP1-STEP4 and the 6:2:2 split over a BoLD root into a work folder",
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    )
    source = b.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--bold-root", type=existing_folder, help="BoLD root (annotations/train.csv, val.csv, videos/)"
    )
    source.add_argument("--sample", action="store_true", help="the bundled BoLD-format sample (38 rows)")
    b.add_argument("--work", type=Path, required=True, help="work folder (created; reruns resume it)")
    b.add_argument(
        "--steps", default=STEP_NAMES, help=f"comma-separated steps to run, in order (default: {STEP_NAMES})"
    )
    b.add_argument(
        "--limit", type=POSITIVE_INT, metavar="N", help="only the first N BoLD rows (train.csv, then val.csv)"
    )
    b.add_argument("--seed", type=int, help="seed of STEP1's draws and of the split (default 0)")
    add_step_arguments(b)
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
        "--replay",
        action="store_true",
        help="with --sample: rebuild from the sample's recorded replies (bqa/sample/pipeline_replies.jsonl) and settings, "
        "sending no request",
    )
    b.add_argument(
        "--step4-unanswered",
        choices=("hard", "drop"),
        default="hard",
        help="a STEP4 reply that names no choice, or two: 'hard' (the paper: Hard when the model could not "
        "answer; the reason is recorded and counted) or 'drop' (reject it, as releases before did)",
    )
    add_preset_argument(b, "bqa build")
    add_build_export_arguments(b, REPO_HELP)
    add_frame_arguments(b, "1 fps")
    add_llm_arguments(b)
    add_cost_arguments(b)
    b.set_defaults(func=_build)

    e = actions.add_parser(
        "evaluate",
        help="run an OpenAI-compatible VideoLLM on a BQA split and write predictions JSONL",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Ask a VideoLLM every question of one split (frames + question + 4 choices) in one of the\n"
        "evaluation styles below, and write one JSON line per row: id, raw_output, parsed_answer, rationale,\n"
        "answer_leaking, the reference and metadata (score it with metrics/bqa_accuracy). Resumable and\n"
        "cached like the build; prints Easy/Hard/Total accuracy.\n\nStyles:\n"
        + "\n".join(f"  {name:<25} {summary}" for name, summary in STYLE_SUMMARIES.items())
        + "\n\nThe paper's Table 1 runs single_word (Test) and multimodal_cot (Test (CoT)); multimodal_cot's\n"
        "stage 1 sees the correct answer, so its scores are marked answer-leaking everywhere.",
    )
    e.add_argument(
        "--style",
        choices=[*STYLE_SUMMARIES, "rationale"],
        default="single_word",
        help="evaluation style (see above; 'rationale' is the old name of reason_then_answer)",
    )
    add_preset_argument(e, "bqa evaluate")
    add_prediction_arguments(e, dataset="BQA", unit="rows", frames="16 frames", videos="clips (rows)")
    add_derived_llm_arguments(
        e, RATIONALE_PREFIX, RATIONALE_ENV_PREFIX, "rationale LLM (two-stage styles)",
        "who writes stage 1's rationales (default: the --llm-* model)",
    )  # fmt: skip
    e.set_defaults(func=_evaluate)

    ft = actions.add_parser(
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
    )
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
    ft.set_defaults(func=_finetune_data)

    check = actions.add_parser(
        "check",
        help="read a BoLD root and report rows, films, answers and missing clips",
        description="Read BoLD's headerless annotation CSVs, decode every row and look for every clip. A "
        "malformed row is an error naming file, line and column.",
    )
    check.add_argument(
        "root", nargs="?", type=existing_folder, help="BoLD root (default: the bundled sample)"
    )
    check.add_argument(
        "--skip-missing", action="store_true", help="list rows whose clip is missing instead of failing"
    )
    check.add_argument(
        "--codes", type=existing_file, help="JSON/YAML demographic code tables (default: bqa.vocabulary's)"
    )
    check.set_defaults(func=_check)

    stats = actions.add_parser(
        "stats",
        help="statistics of a work folder's release: sizes, Easy/Hard and STEP4 reasons, Figure 3 and 5, "
        "clips measured, question openings, Self-BLEU (text, JSON, PNGs)",
        description="Check a work folder's release and print its statistics as the paper reports its own: "
        "split sizes with Easy/Hard and STEP4's reasons (Table 3), Self-BLEU of the questions (Table 2), the "
        "clips' durations and frame rates measured from the clips, how the questions begin (A.4), the "
        "distributions of answer groups, gender, age and ethnicity (Figure 3) and what STEP3 removed and STEP4 "
        "labelled (Figure 5). --out writes them as PNGs (and stats.json).",
    )
    stats.add_argument("work_dir", type=existing_folder, help="work folder written by the BQA pipeline")
    stats.add_argument("--out", type=Path, help="folder for the PNGs and stats.json")
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON instead")
    stats.add_argument("--no-self-bleu", action="store_true", help="skip the Self-BLEU of the questions")
    stats.add_argument(
        "--no-clips", action="store_true", help="do not measure the clips (durations, frame rates)"
    )
    stats.set_defaults(func=_stats)

    export = actions.add_parser(
        "export",
        help="export a work folder's release to a Hub-layout folder (Parquet + card)",
        description="Build the release with the BQA builder, write data/default/<split>-*.parquet with the "
        "clips embedded and a README.md card (YAML configs, dataset_info, statistics, limitations), then "
        "load the folder back with load_dataset to check it. An existing folder is replaced atomically, and only if an earlier export wrote it (or it is empty); never the work folder, a folder holding it, or the current directory.",
    )
    add_export_arguments(export, REPO_HELP)
    export.add_argument("--no-self-bleu", action="store_true", help="skip the Self-BLEU of the questions")
    export.set_defaults(func=_export)


def _build(args: argparse.Namespace) -> int:
    from bqa.export import export_release
    from bqa.sample import sample_root
    from bqa.vocabulary import (
        DEFAULT_DEMOGRAPHIC_CODES,
        DEFAULT_GROUP_MAPPING,
        load_demographic_codes,
        load_group_mapping,
    )
    from builders.demo.bqa_sample import SAMPLE_NOTE, build_options, load_recording
    from builders.hub.layout import check_export_target
    from builders.pipelines.bqa.runner import LLM_STEPS, BuildOptions, build

    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    if args.export is not None:  # refused before the build, not after it
        check_export_target(args.export, args.work)
    common = {
        "skip_missing": args.skip_missing,
        "ahead": args.ahead,
        "reject_llm_failures": args.reject_llm_failures,
        "accept_changed_source": args.accept_changed_source,
        "step4_unanswered": args.step4_unanswered,
        "group_mapping": load_group_mapping(args.group_mapping)
        if args.group_mapping
        else DEFAULT_GROUP_MAPPING,
        "demographic_codes": load_demographic_codes(args.codes) if args.codes else DEFAULT_DEMOGRAPHIC_CODES,
    }
    if args.replay:
        if not args.sample:
            raise ValueError("--replay rebuilds the bundled sample (--sample); for your own build use "
                             "--llm-mode replay (cache) or --llm-replies FILE")  # fmt: skip
        recording = load_recording()
        given = {"--seed": args.seed, "--limit": args.limit, "--fps": args.fps, "--num-frames": args.num_frames,
                 "--max-side": args.max_side, "--llm-replies": args.llm_replies,
                 "--group-mapping": args.group_mapping, "--codes": args.codes, "--preset": args.preset}  # fmt: skip
        clashing = [flag for flag, value in given.items() if value is not None] + given_llm_options(args)
        if clashing:
            raise ValueError(
                f"--replay uses the settings the sample was recorded with; drop {', '.join(clashing)}"
            )
        options = build_options(
            recording, **{k: v for k, v in common.items() if k not in ("group_mapping", "demographic_codes")}
        )
        client = recording.replay_client()
    else:
        preset = apply_preset(args, "bqa build")
        options = BuildOptions(
            bold_root=sample_root() if args.sample else args.bold_root,
            limit=args.limit,
            seed=0 if args.seed is None else args.seed,
            frames=frame_spec_from_args(args, 1.0, None),
            source_note=SAMPLE_NOTE if args.sample else "BoLD",
            preset=preset,
            **common,
        )
        needs_llm = LLM_STEPS.intersection(steps)
        client = client_from_args(args, args.work / DEFAULT_CACHE, progress=False) if needs_llm else None
    price = apply_cost_arguments(args, client) if client is not None else None
    try:
        summary = build(args.work, options, client, steps, images_of=_probe() if args.estimate else None)
    finally:
        if client is not None:
            client.close()
    if client is not None and client.estimate is not None:
        print(_build_estimate(args.work, client.estimate, price))
        return 0
    print(summary.format())
    if summary.run is not None:
        print(spent_line(summary.run, price, client.budget if client is not None else None))
    if not summary.ok:
        return 1
    if args.export is not None:
        if summary.splits is None:
            raise ValueError(f"{args.work}: no release to export yet; run the split step first")
        from bqa.card import DEFAULT_REPO_ID

        result = export_release(
            args.work, args.export, repo_id=export_repo_id(args.repo_id, "BQA", DEFAULT_REPO_ID)
        )
        sizes = ", ".join(f"{split} {len(ds)}" for split, ds in result.dataset.items())
        print(f"exported {result.folder} ({sizes}); load_dataset check passed")
    return 0


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


def _evaluate(args: argparse.Namespace) -> int:
    from bqa.data import open_split
    from builders.evaluation.bqa import evaluate
    from builders.evaluation.bqa_answers import get_style

    preset = apply_preset(args, "bqa evaluate")
    style = get_style(args.style)

    def clients(client):
        other = derived_client(args, client, RATIONALE_PREFIX, RATIONALE_ENV_PREFIX)
        if other is not None and not style.two_stage:
            other.close()
            raise ValueError(f"--{RATIONALE_PREFIX}-* options apply to two-stage styles, not {style.name}")
        return {"rationale_client": other}

    return run_prediction_command(
        args, open_split, evaluate, 16, clients=clients, style=style.name,
        identity_extra={"preset": preset} if preset else None,
    )  # fmt: skip


def _finetune_data(args: argparse.Namespace) -> int:
    from bqa.data import open_split
    from builders.evaluation.bqa_finetune import FORMATS, export_finetune_data
    from builders.hub.source import required_data_from_args

    formats = (
        list(FORMATS)
        if args.format.strip() == "all"
        else [f.strip() for f in args.format.split(",") if f.strip()]
    )
    if args.media == "frames" and args.format.strip() == "all":
        formats = [f for f in formats if f != "llava"]  # documented for videos only
    data = open_split(required_data_from_args(args).folder, args.split)
    result = export_finetune_data(
        data, args.out, formats=formats, media=args.media, frames=frame_spec_from_args(args, None, 16),
        limit=args.limit, model=args.model, template=args.template,
    )  # fmt: skip
    print(result.format())
    return 0


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


def _stats(args: argparse.Namespace) -> int:
    from bqa.stats import format_stats, release_stats
    from bqa.workfolder import read_release

    release = read_release(args.work_dir)
    clips = None if args.no_clips else release.clip_path
    stats = release_stats(release.splits, release.meta, self_bleu=not args.no_self_bleu, clips=clips)
    print(json.dumps(stats.to_json(), indent=2) if args.json else format_stats(stats))
    if args.out is not None:
        from builders.files.jsonio import write_json_atomic
        from builders.report.bqa_stats_plots import write_stats_plots

        pngs = write_stats_plots(stats, args.out)
        write_json_atomic(args.out / "stats.json", stats.to_json())
        print(f"wrote stats.json and {len(pngs)} PNG(s) to {args.out}: {', '.join(p.name for p in pngs)}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from bqa.card import DEFAULT_REPO_ID
    from bqa.export import export_release

    result = export_release(
        args.work_dir,
        args.out_dir,
        repo_id=export_repo_id(args.repo_id, "BQA", DEFAULT_REPO_ID),
        self_bleu=not args.no_self_bleu,
        **export_options(args),
    )
    sizes = ", ".join(f"{split} {len(ds)}" for split, ds in result.dataset.items())
    print(f"wrote {result.folder} ({sizes}); load_dataset check passed")
    return 0
