"""How often each answer extractor agrees with a careful reader, on the hand-labelled corpora.

Corpora: ``tests/data/real_replies/replies.jsonl`` (213 replies of real models to image and video
questions, labelled before parser v3), ``tests/data/video_replies/replies.jsonl`` (314 replies of
video models, labelled before any v4 rule change), their ``dev`` and ``heldout`` parts shown apart
(rules are written looking at ``dev`` only), and ``tests/data/answer_replies.jsonl`` (the
project's 238 replies). Extractors: the project's parser
at each registered version, and VLMEvalKit's ``can_infer`` (current and before its PR #1175) and
lmms-eval's ``extract_characters_regex`` as rewritten in ``reference_extractors.py``.

Columns: ``agree`` (same option as the reader, or both refuse), ``wrong`` (another option than the
reader's), ``guessed`` (an option where the reader refuses), ``refused`` (no option where the
reader has one).

    python benchmarks/answer_corpora.py [--show EXTRACTOR] [--corpus real|video|project] [--split dev|heldout]

Labels are compared as the item shows them (``(A)`` for Vript-Hard); a label set an extractor
cannot read counts as refused.
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
VIDEO = DATA / "video_replies" / "replies.jsonl"
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
        try:
            parser.check_labels(row["options"], row["letters"])
            index = parser.parse(row["reply"], row["options"], row["letters"]).index
        except ValueError:  # UnreadableLabels, or an item an old version cannot compile
            return None
        return None if index is None else row["letters"][index]

    return extract


def bare_letters(row: dict) -> dict[str, str]:
    """The letter each shown label holds (``(A)`` -> ``A``), which the harnesses match: label."""
    return {label.strip("()[]. "): label for label in row["letters"]}


def vlmevalkit(before_1175: bool) -> Extractor:
    def extract(row: dict) -> str | None:
        letters = bare_letters(row)
        texts = row["options"] or [None] * len(letters)
        letter = vlmevalkit_can_infer(
            row["reply"], dict(zip(letters, texts, strict=True)), before_1175=before_1175
        )
        return None if letter is None else letters[letter]

    return extract


def lmms_eval(row: dict) -> str | None:
    return bare_letters(row).get(lmms_eval_extract(row["reply"]) or "")


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
    parser.add_argument("--corpus", default="video", choices=["real", "video", "project"])
    parser.add_argument("--split", default="dev", choices=["dev", "heldout"])
    args = parser.parse_args()
    by_corpus = {"real": load(REAL), "video": load(VIDEO), "project": project_rows()}
    corpora = {
        f"{name}, {split}": [r for r in by_corpus[name] if r["split"] == split]
        for name in ("real", "video")
        for split in ("dev", "heldout")
    }
    corpora["project"] = by_corpus["project"]
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
        rows = by_corpus[args.corpus]
        if args.corpus != "project":
            rows = [r for r in rows if r["split"] == args.split]
        s = score(rows, table[args.show])
        for kind in ("wrong", "guessed", "refused"):
            for row in s[kind]:
                print(
                    f"\n--- {kind}: id {row['id']} ({row['split']}) label {row['label']} got {row['got']} options {row['options']}"
                )
                print(row["reply"])


if __name__ == "__main__":
    main()
