"""``vqabench judge``: score a predictions file with an LLM judge and a rubric; list the rubrics."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from builders.files.arguments import existing_file
from builders.files.jsonio import write_json_atomic
from builders.llm.cli import JUDGE_ENV_PREFIX, add_llm_arguments
from builders.llm.cost import add_cost_arguments, apply_cost_arguments, spent_line

# The judge and rubric modules (openai, pydantic, yaml) load inside the handlers: lazy for start-up
# speed, so --rubric is checked there (an unknown name is an error listing the known ones).
from builders.runs.unfinished import Unfinished

if TYPE_CHECKING:
    from builders.scoring.judge_results import JudgeResult

CAMERA = "camera"  # the breakdown of the --camera-key column, as a registered rubric declares it


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge",
        help="score predictions with an LLM judge and a rubric (OEMU, captions, custom)",
        description=(
            "Score open-ended answers or captions 0-5 against references with an LLM judge, by rubric, "
            "through the cached LLM client (a rerun pays for nothing that already succeeded). The same "
            "scoring as evaluate.load(builders.metric_path('judge'))."
        ),
    )
    commands = parser.add_subparsers(title="judge commands", metavar="ACTION", required=True)

    score = commands.add_parser(
        "score",
        help="judge every row of a predictions JSONL file",
        description=(
            "Judge every row of a JSONL file (one object per line with the prediction, the reference and "
            "optionally the question, camera kind and evidence attributes) and print the mean score, the "
            "per-criterion means, the static/moving split and any failed items. Unset --llm-* options "
            "fall back to VQABENCH_JUDGE_* variables (VQABENCH_JUDGE_MODEL, _BASE_URL, _API_KEY_ENV, "
            "_MAX_CONCURRENCY, _CACHE, _MODE, _REPLIES), not VQABENCH_LLM_*. Exit status 1 when some "
            "judgements failed (they are listed, and a rerun asks for them alone)."
        ),
    )
    score.add_argument(
        "predictions",
        type=existing_file,
        help="JSONL file, one item per line; a benchmark's 'evaluate' output (or a harness output of the "
        "project's tasks) is read as such: the rubric's question type is judged, the rest skipped",
    )
    score.add_argument(
        "--rubric",
        help="rubric name (default: the first one 'vqabench judge rubrics' lists, OEMU)",
    )
    score.add_argument("--rubric-file", help="YAML or JSON rubric file (with --rubric custom)")
    score.add_argument(
        "--prediction-key",
        help="field of the prediction (default: raw_output, else prediction: the predictions format's reply)",
    )
    score.add_argument(
        "--reference-key",
        default="reference",
        help="field of the reference text, or of a structured reference's mapping (default %(default)s)",
    )
    score.add_argument("--question-key", default="question", help="field of the question, if present")
    score.add_argument(
        "--camera-key", help="field of 'static'/'moving', if present (default: camera, else camera_kind)"
    )
    score.add_argument(
        "--evidence-key", default="evidence", help="field of the evidence attributes, if present"
    )
    score.add_argument("--out", dest="output", help="write the full result (JSON) here")
    score.add_argument("--items", action="store_true", help="include per-item scores in --out")
    add_llm_arguments(score, env_prefix=JUDGE_ENV_PREFIX)
    add_cost_arguments(score)
    score.set_defaults(func=_score)

    rubrics = commands.add_parser(
        "rubrics",
        help="list the rubrics with their criteria, weights and signatures",
        description="Show every built-in rubric (or a custom rubric file) with criteria, scales, weights and signature.",
    )
    rubrics.add_argument("--rubric-file", help="also show this custom rubric file")
    rubrics.set_defaults(func=_rubrics)


def _column(rows: list[dict[str, Any]], key: str, path: str, required: bool) -> list[Any] | None:
    present = [isinstance(row, dict) and key in row for row in rows]
    if not any(present):
        if required:
            first = ", ".join(repr(k) for k in (rows[0] if isinstance(rows[0], dict) else {}))
            raise ValueError(
                f"{path}: no row has the field {key!r}; the first row has {first or 'no fields'} (choose the "
                "fields with --prediction-key, --reference-key etc.)"
            )
        return None
    if not all(present):
        missing = present.index(False)
        raise ValueError(f"{path}, row {missing + 1}: field {key!r} is missing (other rows have it)")
    return [row[key] for row in rows]


def _score(args: argparse.Namespace) -> int:
    from builders.cli._benchmarks import registry
    from builders.evaluation.rubrics import RUBRICS, get_rubric
    from builders.report.harness_outputs import read_prediction_lines
    from builders.report.inputs import TEXT_FIELDS
    from builders.scoring.judge import judge_client_from_args, judge_predictions

    rubric = get_rubric(args.rubric or RUBRICS.default, args.rubric_file)
    path = Path(args.predictions)
    rows = read_prediction_lines(path)  # the one predictions reader (harness outputs too)
    if not rows:
        raise ValueError(f"{path}: no rows")
    runner: Mapping[str, Any] | None = None  # a registered benchmark's 'evaluate' output, read by its entry
    if not args.prediction_key and args.reference_key == "reference":
        read = (entry.judge_rows(rows, rubric, path) for entry in registry().values() if entry.judge_rows)
        runner = next((inputs for inputs in read if inputs is not None), None)
    if runner is not None:
        columns = {"predictions": runner["predictions"], "references": runner["references"],
                   "questions": runner["questions"], "camera": runner["camera"], "evidence": runner.get("evidence")}  # fmt: skip
    else:
        first = rows[0] if isinstance(rows[0], dict) else {}
        prediction_key = args.prediction_key or next((f for f in TEXT_FIELDS if f in first), TEXT_FIELDS[0])
        camera_key = args.camera_key or next((f for f in ("camera", "camera_kind") if f in first), "camera")
        columns = {
            name: _column(rows, key, str(path), required=name in ("predictions", "references"))
            for name, key in (
                ("predictions", prediction_key),
                ("references", args.reference_key),
                ("questions", args.question_key),
                ("camera", camera_key),
                ("evidence", args.evidence_key),
            )
        }
    predictions, references = columns["predictions"], columns["references"]
    if predictions is None or references is None:  # _column raises first for a required column
        raise ValueError(f"{path}: no predictions or no references to judge")
    with judge_client_from_args(args) as client:
        price = apply_cost_arguments(args, client)
        result = judge_predictions(
            predictions,
            references,
            rubric,
            client,
            questions=columns["questions"],
            groups=RUBRICS.groups(CAMERA, columns["camera"]),
            evidence=columns["evidence"],
            return_items=args.items,
        )
        if client.estimate is not None:
            print(f"estimate: {client.estimate.format(price)}")
            return 0
        print(client.last_usage)
        print(spent_line(client.last_usage, price, client.budget))
    if args.output:
        write_json_atomic(args.output, result.to_dict())
    print(_summary(result))
    return 0 if result.n_failed == 0 else 1


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _summary(result: JudgeResult) -> str:
    lines = [
        f"{result.judge.signature if result.judge else ''}",
        f"score {_fmt(result.score)}  n={result.n}  failed={result.n_failed}  "
        + "  ".join(f"{name} {_fmt(v)}" for name, v in result.criteria.items()),
    ]
    for kind, part in result.by(CAMERA).items():
        lines.append(
            f"  {kind:<7} score {_fmt(part.score)}  n={part.n}  "
            + "  ".join(f"{name} {_fmt(v)}" for name, v in part.criteria.items())
        )
    failed = {f"on row {f.index + 1}": f.error for f in result.failed}  # "e.g. item on row 3"
    lines += Unfinished({"judge": failed}).lines(alternative="--out lists every failed item")
    return "\n".join(lines)


def _rubrics(args: argparse.Namespace) -> int:
    from builders.evaluation.rubrics import RUBRICS, get_rubric
    from builders.scoring.rubric_files import CustomRubric

    rubrics = [get_rubric(name) for name in RUBRICS if name != CustomRubric.name]
    if args.rubric_file:
        rubrics.append(get_rubric(CustomRubric.name, args.rubric_file))
    for rubric in rubrics:
        print(f"{rubric.name} (v{rubric.version}): {rubric.description}")
        print(f"  {rubric.signature}")
        for c in rubric.criteria:
            print(f"  - {c.name} [{c.min}-{c.max}, weight {c.weight:g}] {c.label}: {c.description}")
    print(f"custom: criteria from a YAML/JSON file (--rubric custom --rubric-file PATH); format:\n"
          f"{json.dumps({'name': 'my_rubric', 'version': 1, 'criteria': [{'name': 'correct', 'description': '...', 'weight': 1}]})}")  # fmt: skip
    return 0
