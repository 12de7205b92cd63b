"""``vqabench judge``: score a predictions file with an LLM judge and a rubric; list the rubrics."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from builders.files.jsonio import read_jsonl, write_json_atomic
from builders.llm.cli import JUDGE_ENV_PREFIX, add_llm_arguments
from builders.llm.cost import add_cost_arguments, apply_cost_arguments, spent_line

# The judge and rubric modules (openai, pydantic, yaml) load inside the handlers: lazy for start-up
# speed, so --rubric is checked there (an unknown name is an error listing the known ones).
from builders.runs.unfinished import Unfinished


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
    score.add_argument("predictions", help="JSONL file, one item per line")
    score.add_argument(
        "--rubric",
        help="rubric name (default: the MarineLife open-ended rubric, OEMU); 'vqabench judge rubrics' lists them",
    )
    score.add_argument("--rubric-file", help="YAML or JSON rubric file (with --rubric custom)")
    score.add_argument(
        "--prediction-key", default="prediction", help="field of the prediction (default %(default)s)"
    )
    score.add_argument(
        "--reference-key",
        default="reference",
        help="field of the reference text, or of the attribute mapping for marinelife_caption_review "
        "(default %(default)s)",
    )
    score.add_argument("--question-key", default="question", help="field of the question, if present")
    score.add_argument("--camera-key", default="camera", help="field of 'static'/'moving', if present")
    score.add_argument(
        "--evidence-key", default="evidence", help="field of the evidence attributes, if present"
    )
    score.add_argument("--output", help="write the full result (JSON) here")
    score.add_argument("--items", action="store_true", help="include per-item scores in --output")
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
    present = [key in row for row in rows]
    if not any(present):
        if required:
            raise ValueError(
                f"{path}: no row has the field {key!r} (choose fields with --prediction-key etc.)"
            )
        return None
    if not all(present):
        missing = present.index(False)
        raise ValueError(f"{path}, row {missing + 1}: field {key!r} is missing (other rows have it)")
    return [row[key] for row in rows]


def _score(args: argparse.Namespace) -> int:
    from builders.scoring import rubric_files as _registers_custom  # noqa: F401
    from builders.scoring.judge import judge_client_from_args, judge_predictions
    from builders.scoring.rubrics import get_rubric
    from marinelife16k.rubrics import DEFAULT_RUBRIC, camera_groups

    rubric = get_rubric(args.rubric or DEFAULT_RUBRIC, args.rubric_file)
    path = Path(args.predictions)
    if not path.is_file():
        raise FileNotFoundError(f"no predictions file at {path}")
    rows = read_jsonl(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    columns = {
        name: _column(rows, key, str(path), required=name in ("predictions", "references"))
        for name, key in (
            ("predictions", args.prediction_key),
            ("references", args.reference_key),
            ("questions", args.question_key),
            ("camera", args.camera_key),
            ("evidence", args.evidence_key),
        )
    }
    with judge_client_from_args(args) as client:
        price = apply_cost_arguments(args, client)
        result = judge_predictions(
            columns["predictions"],
            columns["references"],
            rubric,
            client,
            questions=columns["questions"],
            groups=camera_groups(columns["camera"]),
            evidence=columns["evidence"],
            return_items=args.items,
        )
        if client.estimate is not None:
            print(f"estimate: {client.estimate.format(price)}")
            return 0
        print(client.last_usage)
        print(spent_line(client.last_usage, price, client.budget))
    if args.output:
        write_json_atomic(args.output, result)
    print(_summary(result))
    return 0 if result["n_failed"] == 0 else 1


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _summary(result: dict[str, Any]) -> str:
    judge = result["judge"]
    lines = [
        f"{judge['signature']}",
        f"score {_fmt(result['score'])}  n={result['n']}  failed={result['n_failed']}  "
        + "  ".join(f"{name} {_fmt(v)}" for name, v in result["criteria"].items()),
    ]
    for kind, part in result.get("by_camera", {}).items():
        lines.append(
            f"  {kind:<7} score {_fmt(part['score'])}  n={part['n']}  "
            + "  ".join(f"{name} {_fmt(v)}" for name, v in part["criteria"].items())
        )
    failed = {f"row {f['index'] + 1}": f["error"] for f in result["failed"]}
    lines += Unfinished({"judge": failed}).lines(alternative="--output lists every failed item")
    return "\n".join(lines)


def _rubrics(args: argparse.Namespace) -> int:
    from builders.scoring.rubric_files import CustomRubric
    from builders.scoring.rubrics import RUBRICS, get_rubric
    from marinelife16k import rubrics as _registers_marinelife_rubrics  # noqa: F401

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
