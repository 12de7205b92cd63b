"""Answer parsing is linear in the reply: degenerate 1 MB replies, timed against a plain regex scan.

A model that loops can return a megabyte of one word. Each reply below is parsed with every
registered parser version (BQA choices and label aliases) and, in the same run, scanned once by a plain regex over
the same text (every word): the linear baseline. The ratio is what the parser costs over that
scan. By default the parser cleans the whole reply (linear) and then reads at most its first and
last 8 KB, so the ratio falls as the reply grows; with ``--unbounded`` it reads everything, and
the ratio must stay flat (a quadratic parser's ratio grows with the size; v1 took 9 s for 64 KB
of one option name, about 40 minutes extrapolated for 1 MB).

    python benchmarks/answer_parsing.py [--sizes 10000 100000 1000000] [--repeats 3] [--unbounded]
        [--parser vqabench-choice@4]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from bqa.accuracy import BQA_PARSER
from builders.scoring import answer_parsing
from builders.scoring.answer_parsing import get_parser, parse_choice, parser_names

CHOICES = ["Surprise", "Confidence", "Anger", "Embarrassment"]
# Degenerate replies: an option's name, a letter, a negated option, a word that names nothing.
WORDS = {
    "option name": "Anger ",
    "letter": "A ",
    "negated option": "not Anger, ",
    "other word": "hmm ",
    "declaration": "I would say Anger. ",
    # version 3's new paths: colon cues, coordinated lists, answer tags, calculations
    "colon cue": "the answer is:\n",
    "coordinated list": "C, D and ",
    "answer tag": "<answer>",
    "calculation": "30 + ",
    # version 4's new paths: final formats, echoed instructions, the pronoun, name lists, claims
    "double bracket": "[[C]] ",
    "instruction": "If the correct option letters (A, B, C, D...) are more than one, give [[C]]. ",
    "pronoun": "I ",
    "name list": "bottle, towel, Anger, ",
    "claim": "He is angry. ",
    "bold last line": "**C**\n",
}
_BASELINE = re.compile(r"\w+", re.IGNORECASE)


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--unbounded", action="store_true", help="read the whole reply, not its first and last 8 KB"
    )
    parser.add_argument("--parser", action="append", help="NAME@VERSION (default: every registered one)")
    args = parser.parse_args()
    if args.unbounded:
        answer_parsing._HEAD_CHARS = answer_parsing._TAIL_CHARS = 1 << 40
    print(f"{'parser':>18} {'reply':>16} {'bytes':>10} {'parse s':>9} {'scan s':>9} {'ratio':>7}  result")
    for name in args.parser or parser_names():
        reader = get_parser(name, BQA_PARSER.aliases)
        for label, word in WORDS.items():
            for size in args.sizes:
                text = word * (size // len(word))
                parsed = reader.parse(text, CHOICES)
                t_parse = best_of(args.repeats, lambda t=text, r=reader: parse_choice(t, CHOICES, parser=r))
                t_scan = best_of(args.repeats, lambda t=text: sum(1 for _ in _BASELINE.finditer(t)))
                print(
                    f"{name:>18} {label:>16} {len(text):>10,} {t_parse:>9.4f} {t_scan:>9.4f} "
                    f"{t_parse / t_scan:>7.1f}  {parsed}"
                )


if __name__ == "__main__":
    main()
