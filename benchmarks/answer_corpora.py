"""How often each answer extractor agrees with a careful reader, on the two hand-labelled corpora.

Corpora: ``tests/data/real_replies/replies.jsonl`` (213 replies of real models, labelled before
parser v3; its ``dev`` and ``heldout`` parts are shown apart: v3 was designed on ``dev`` only) and
``tests/data/answer_replies.jsonl`` (the project's 238 replies). Extractors: the project's parser
at each registered version, and VLMEvalKit's ``can_infer`` (current and before its PR #1175) and
lmms-eval's ``extract_characters_regex`` as rewritten in ``reference_extractors.py``.

Columns: ``agree`` (same option as the reader, or both refuse), ``wrong`` (another option than the
reader's), ``guessed`` (an option where the reader refuses), ``refused`` (no option where the
reader has one).

    python benchmarks/answer_corpora.py [--show EXTRACTOR] [--split dev|heldout|all]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from reference_extractors import lmms_eval_extract, vlmevalkit_can_infer

from bqa.accuracy import BQA_PARSER
from builders.scoring.answer_parsing import get_parser, parser_names

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
REAL = DATA / "real_replies" / "replies.jsonl"
PROJECT = DATA / "answer_replies.jsonl"
LETTERS = "ABCDEFGHIJ"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def project_rows() -> list[dict]:
    """The project corpus in the real corpus's shape: a letter label, letters A-D."""
    rows = []
    for row in load(PROJECT):
        options = row["options"]
        label = "refuse" if row["expected"] is None else LETTERS[options.index(row["expected"])]
        rows.append({**row, "label": label, "letters": list(LETTERS[: len(options)]), "split": "project"})
    return rows


Extractor = Callable[[dict], "str | None"]


def parser_extractor(name: str) -> Extractor:
    plain = get_parser(name)
    with_aliases = get_parser(name, BQA_PARSER.aliases)

    def extract(row: dict) -> str | None:
        parser = with_aliases if row.get("dataset") == "bqa" else plain
        index = parser.parse(row["reply"], row["options"], row["letters"]).index
        return None if index is None else row["letters"][index]

    return extract


def vlmevalkit(before_1175: bool) -> Extractor:
    def extract(row: dict) -> str | None:
        texts = row["options"] or [None] * len(row["letters"])
        return vlmevalkit_can_infer(
            row["reply"], dict(zip(row["letters"], texts, strict=True)), before_1175=before_1175
        )

    return extract


def lmms_eval(row: dict) -> str | None:
    letter = lmms_eval_extract(row["reply"])
    return letter if letter in row["letters"] else None


def extractors() -> dict[str, Extractor]:
    out: dict[str, Extractor] = {}
    for name in parser_names():
        out[name] = parser_extractor(name)
    out["VLMEvalKit can_infer"] = vlmevalkit(before_1175=False)
    out["VLMEvalKit can_infer <#1175"] = vlmevalkit(before_1175=True)
    out["lmms-eval extract_characters_regex"] = lmms_eval
    return out


def score(rows: list[dict], extract: Extractor) -> dict[str, list[dict]]:
    outcome: dict[str, list[dict]] = {"agree": [], "wrong": [], "guessed": [], "refused": []}
    for row in rows:
        got = extract(row) or "refuse"
        if got == row["label"]:
            outcome["agree"].append(row)
        elif row["label"] == "refuse":
            outcome["guessed"].append({**row, "got": got})
        elif got == "refuse":
            outcome["refused"].append({**row, "got": got})
        else:
            outcome["wrong"].append({**row, "got": got})
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--show", help="print the disagreements of this extractor (a name of the table)")
    parser.add_argument("--split", default="dev", choices=["dev", "heldout", "project", "all"])
    args = parser.parse_args()
    real, project = load(REAL), project_rows()
    corpora = {
        "real, dev": [r for r in real if r["split"] == "dev"],
        "real, heldout": [r for r in real if r["split"] == "heldout"],
        "real, all": real,
        "project": project,
    }
    table = extractors()
    for corpus, rows in corpora.items():
        print(f"\n{corpus} ({len(rows)} replies)")
        print(f"{'extractor':>36} {'agree':>14} {'wrong':>6} {'guessed':>8} {'refused':>8}")
        for name, extract in table.items():
            s = score(rows, extract)
            n = len(s["agree"])
            print(
                f"{name:>36} {n:>5}/{len(rows):<4}{n / len(rows):>5.1%} {len(s['wrong']):>6} "
                f"{len(s['guessed']):>8} {len(s['refused']):>8}"
            )
    if args.show:
        rows = (
            real + project if args.split == "all" else [r for r in real + project if r["split"] == args.split]
        )
        s = score(rows, table[args.show])
        for kind in ("wrong", "guessed", "refused"):
            for row in s[kind]:
                print(
                    f"\n--- {kind}: id {row['id']} ({row['split']}) label {row['label']} got {row['got']} options {row['options']}"
                )
                print(row["reply"])


if __name__ == "__main__":
    main()
