"""``vqabench marinelife-eval``: run a VideoLLM on a MarineLife-16K split (``predict``); judge its
open-ended answers (``judge``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.evaluation.options import add_prediction_arguments, run_prediction_command
from builders.llm import add_llm_arguments
from builders.llm.cost import add_cost_arguments


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "marinelife-eval",
        help="run a VideoLLM on a MarineLife-16K split (predict); judge its open-ended answers (judge)",
        description="The MarineLife-16K model evaluation runner: ask any OpenAI-compatible VideoLLM every question "
        "of a split, then score the open-ended answers with the LLM judge. Score and compare with "
        "'vqabench report marinelife'.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    p = actions.add_parser(
        "predict",
        help="ask a VideoLLM every question of one split and write predictions JSONL",
        description="Send each QA record of the split as the dataset states it (the video's frames, then the "
        "record's own prompt: multiple-choice prompts list the options and ask for the letter) and write one "
        "JSON line per record: question_id, type, dimension, camera_kind, raw_output, parsed_answer (a letter or "
        "'unparsed'; null for open-ended), reference, correct, evidence, model. Resumable and cached like the "
        "BQA runner: kill it and rerun the same command. Prints the overall multiple-choice accuracy.",
        epilog="Example: vqabench marinelife-eval predict --data hub/marinelife16k --split test --out qwen.jsonl "
        "--llm-model Qwen2.5-VL-7B --llm-base-url http://localhost:8000/v1 --llm-api-key-env none",
    )
    add_prediction_arguments(p, dataset="MarineLife-16K", unit="questions", frames="8 frames")
    p.set_defaults(func=_predict)

    j = actions.add_parser(
        "judge",
        help="score the open-ended answers of a predictions file with the LLM judge",
        description="Judge the camera_object_open_ended answers (OEMU rubric: camera 35%, activity 30%, relation "
        "35%) and the captions (BEH, AH, ECF) of a 'predict' output, split by static/moving camera, through the "
        "cached LLM client, and write the judge results JSON that 'vqabench report marinelife --judge-results' "
        "reads. Unset --llm-* options fall back to VQABENCH_JUDGE_* variables, as for 'vqabench judge'. Exit "
        "status 1 when some judgements failed (listed; a rerun asks for them alone).",
    )
    j.add_argument("predictions", type=Path, help="predictions JSONL written by 'marinelife-eval predict'")
    j.add_argument("--out", type=Path, required=True, help="judge results JSON to write")
    j.add_argument("--name", help="the model's name in the results (default: the predictions file's stem)")
    add_llm_arguments(j)
    add_cost_arguments(j)
    j.set_defaults(func=_judge)


def _predict(args: argparse.Namespace) -> int:
    from builders.evaluation.marinelife import evaluate
    from marinelife16k.data import open_split

    return run_prediction_command(args, open_split, evaluate, 8)


def _judge(args: argparse.Namespace) -> int:
    from builders.evaluation.marinelife import judge
    from builders.files.jsonio import read_jsonl, write_json_atomic
    from builders.scoring.judge import judge_client_from_args

    if not args.predictions.is_file():
        raise FileNotFoundError(f"no predictions file at {args.predictions}")
    rows = read_jsonl(args.predictions)
    from builders.llm.cost import apply_cost_arguments, spent_line

    with judge_client_from_args(args) as client:
        price = apply_cost_arguments(args, client)
        results = judge(rows, client)
    if client.estimate is not None:
        print(f"estimate: {client.estimate.format(price)}")
        return 0
    print(spent_line(client.usage, price, client.budget))
    if not results:
        raise ValueError(
            f"{args.predictions}: no open-ended (camera_object_open_ended or caption) predictions"
        )
    write_json_atomic(args.out, {args.name or args.predictions.stem: results})
    failed = 0
    for task, result in results.items():
        failed += result["n_failed"]
        cameras = ", ".join(
            f"{kind} {cell['score']:.2f} (n={cell['n']})" if cell["score"] is not None else f"{kind} - (n=0)"
            for kind, cell in result["by_camera"].items()
        )
        score = "-" if result["score"] is None else f"{result['score']:.2f}"
        print(f"{task}: score {score} on {result['n']} judged, {result['n_failed']} failed; {cameras}")
    print(f"wrote {args.out}")
    return 0 if failed == 0 else 1
