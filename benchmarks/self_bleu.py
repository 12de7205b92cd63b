"""Self-BLEU: this project's linear leave-one-out vs nltk's sentence_bleu against all other sentences.

Both sides score the same tokenized corpus (NLTKWordTokenizer) with uniform 4-gram weights and
SmoothingFunction().method1. nltk is O(n^2): up to n = 250 it scores every sentence; above, a
random subsample of hypotheses (each still against all n-1 other sentences) is timed and the time
extrapolated linearly in the number of hypotheses. Its values are compared with ours. "speed-up"
compares the scoring of the same tokens; "e2e" adds tokenizing the corpus once to both sides. Corpus: synthetic BQA-style
questions (builders.testing.questions). Sizes: 200, 1,443 (BQA test) and 4,651 (BQA train).

    python benchmarks/self_bleu.py [--sample 40] [--sizes 200 1443 4651]
"""

from __future__ import annotations

import argparse
import random
import time
import warnings

from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from builders.scoring.self_bleu import leave_one_out_bleu, self_bleu
from builders.scoring.tokenizers import get_tokenizer
from builders.testing.questions import synthetic_questions


def best_of(repeats: int, fn) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1443, 4651])
    parser.add_argument(
        "--sample", type=int, default=40, help="nltk hypotheses timed per size (all when n is smaller)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    tokenize = get_tokenizer("nltk")
    smoothing = SmoothingFunction().method1
    rows = []
    for n in args.sizes:
        sentences = synthetic_questions(n, seed=args.seed, short_every=97, duplicate_every=53)
        tokenize_s, corpus = best_of(1, lambda sentences=sentences: [tokenize(s) for s in sentences])
        ours_s, ours = best_of(3, lambda corpus=corpus: leave_one_out_bleu(corpus))
        end_to_end_s, result = best_of(1, lambda sentences=sentences: self_bleu(sentences))
        k = n if n <= 250 else min(n, args.sample)
        sample = sorted(random.Random(args.seed).sample(range(n), k))
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nltk warns on every zero-overlap order
            theirs = [
                sentence_bleu(corpus[:i] + corpus[i + 1 :], corpus[i], smoothing_function=smoothing)
                for i in sample
            ]
        nltk_s = (time.perf_counter() - start) * n / len(sample)
        max_diff = max(abs(t - ours[i]) for t, i in zip(theirs, sample, strict=True))
        rows.append((n, len(sample), nltk_s, tokenize_s, ours_s, end_to_end_s, max_diff, result.score))

    print(f"{'n':>6} {'nltk hyps':>9} {'nltk s':>9} {'ours s':>8} {'speed-up':>9} {'e2e s':>7} "
          f"{'e2e speed-up':>12} {'max |diff|':>10} {'Self-BLEU':>9}")  # fmt: skip
    for n, k, nltk_s, tok_s, ours_s, e2e_s, diff, score in rows:
        extrapolated = "*" if k < n else " "
        print(
            f"{n:>6} {k:>9} {nltk_s:>8.2f}{extrapolated} {ours_s:>8.4f} {nltk_s / ours_s:>8.0f}x {e2e_s:>7.3f} "
            f"{(nltk_s + tok_s) / e2e_s:>11.0f}x {diff:>10.1e} {score:>9.4f}"
        )
    print("* extrapolated from the timed subsample (each hypothesis against all n-1 others)")
    print(
        "speed-up: same tokens on both sides; e2e: both sides also tokenize the corpus once (NLTKWordTokenizer)"
    )
    if len(rows) > 1:
        (n0, _, nltk0, _, ours0, *_), (n1, _, nltk1, _, ours1, *_) = rows[0], rows[-1]
        print(
            f"scaling {n0} -> {n1} (x{n1 / n0:.1f} sentences): nltk x{nltk1 / nltk0:.1f} (quadratic would be "
            f"x{(n1 / n0) ** 2:.0f}), ours x{ours1 / ours0:.1f} (linear would be x{n1 / n0:.1f})"
        )


if __name__ == "__main__":
    main()
