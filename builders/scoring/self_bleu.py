"""Self-BLEU (Zhu et al. 2018, Texygen): how alike the sentences of a corpus are; higher = less diverse.

Each sentence is scored with nltk's ``sentence_bleu`` against all *other* sentences as references
(uniform weights, ``SmoothingFunction().method1``), and the scores are averaged. Done literally
that costs O(n^2) reference scans. Here every quantity "over all other sentences" comes from
corpus-wide summaries built once, so the cost is linear in the corpus and the values are nltk's:

* clipped counts need, per n-gram, the largest count in any other sentence. An n-gram seen once
  in the sentence matches iff another sentence has it (document frequency >= 2). For n-grams
  repeated within a sentence, keep the largest count, how many sentences hold it, and the
  second-largest: a sentence that alone holds the largest sees the second-largest, every other
  sentence sees the largest;
* the brevity penalty needs the other sentence length closest to the hypothesis length (ties to
  the shorter, as nltk's ``closest_ref_length``): a sorted array of distinct lengths with counts,
  where the sentence's own length is skipped unless another sentence shares it.

nltk's corner cases are kept: no unigram match scores 0; a precision with no match becomes
``epsilon / count`` (method1) or the smallest float (method0); an n-gram order longer than the
sentence has count 0 over a denominator of 1.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

from builders.scoring.tokenizers import get_tokenizer

# nltk SmoothingFunction(epsilon=0.1).
METHOD1_EPSILON = 0.1

# Value of an n-gram precision with no match, given its denominator (nltk's SmoothingFunction methods).
SMOOTHINGS: dict[str, Callable[[int], float]] = {
    "method0": lambda denominator: sys.float_info.min,  # nltk's "no smoothing"
    "method1": lambda denominator: METHOD1_EPSILON / denominator,
}


def _ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    # The shifted copies differ in length on purpose: zip stops at the last complete n-gram.
    return Counter(zip(*(tokens[k:] for k in range(n)), strict=False)) if len(tokens) >= n else Counter()


def _clipped_matches(corpus: Sequence[Sequence[str]], n: int) -> list[tuple[int, int]]:
    """(clipped matches, denominator) of order ``n`` for each sentence against all the others.

    An n-gram seen once in a sentence matches iff another sentence has it (document frequency
    >= 2): a set intersection, done in C. Only n-grams repeated within a sentence need the largest
    count over the others, from the (largest, holders, second-largest) summary of repeated counts.
    """
    per_sentence = [_ngram_counts(tokens, n) for tokens in corpus]
    sizes = [max(0, len(tokens) - n + 1) for tokens in corpus]
    document_frequency = Counter(chain.from_iterable(per_sentence))  # iterating a Counter yields its keys
    shared = {gram for gram, df in document_frequency.items() if df > 1}
    # Over counts >= 2 only: a count of 1 elsewhere is already told by the document frequency.
    best: dict[tuple, int] = {}
    holders: dict[tuple, int] = {}
    second: dict[tuple, int] = {}  # largest count strictly below ``best``
    repeated = [
        [(g, c) for g, c in counts.items() if c > 1] if len(counts) < size else []
        for counts, size in zip(per_sentence, sizes, strict=True)
    ]
    for grams in repeated:
        for gram, c in grams:
            top = best.get(gram, 0)
            if c > top:
                if top:
                    second[gram] = top
                best[gram] = c
                holders[gram] = 1
            elif c == top:
                holders[gram] += 1
            elif c > second.get(gram, 0):
                second[gram] = c
    out = []
    for counts, size, grams in zip(per_sentence, sizes, repeated, strict=True):
        matched = len(counts.keys() & shared)  # each shared n-gram, counted once
        for gram, c in grams:
            top = best[gram]
            others = second.get(gram, 0) if c == top and holders[gram] == 1 else top
            if others == 0 and gram in shared:
                others = 1
            matched += min(c, others) - (gram in shared)
        out.append((matched, max(1, size)))
    return out


def _closest_other_lengths(lengths: Sequence[int]) -> list[int]:
    """For each sentence, the closest length among the *other* sentences (ties: the shorter)."""
    multiplicity = Counter(lengths)
    distinct = sorted(multiplicity)
    closest = {}
    for k, length in enumerate(distinct):
        if multiplicity[length] > 1:
            closest[length] = length
            continue
        neighbours = distinct[k - 1 : k] + distinct[k + 1 : k + 2]
        closest[length] = min(neighbours, key=lambda r: (abs(r - length), r))
    return [closest[length] for length in lengths]


def leave_one_out_bleu(
    corpus: Sequence[Sequence[str]], max_order: int = 4, smoothing: str = "method1"
) -> list[float]:
    """nltk ``sentence_bleu(others, sentence)`` for every tokenized sentence, in linear time."""
    if len(corpus) < 2:
        raise ValueError(f"Self-BLEU needs at least 2 sentences, got {len(corpus)}")
    if not isinstance(max_order, int) or max_order < 1:
        raise ValueError(f"max_order must be a positive integer, got {max_order!r}")
    if smoothing not in SMOOTHINGS:
        raise ValueError(f"unknown smoothing {smoothing!r}; choose one of {sorted(SMOOTHINGS)}")
    smooth = SMOOTHINGS[smoothing]
    weight = 1.0 / max_order
    by_order = [_clipped_matches(corpus, n) for n in range(1, max_order + 1)]
    lengths = [len(tokens) for tokens in corpus]
    scores = []
    for i, (hyp_len, ref_len) in enumerate(zip(lengths, _closest_other_lengths(lengths), strict=True)):
        if by_order[0][i][0] == 0:  # nltk returns 0 when not even a unigram matches
            scores.append(0.0)
            continue
        precisions = [m / d if m else smooth(d) for m, d in (order[i] for order in by_order)]
        penalty = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
        scores.append(penalty * math.exp(math.fsum(weight * math.log(p) for p in precisions if p > 0)))
    return scores


@dataclass(frozen=True)
class SelfBleuResult:
    score: float
    scores: list[float]
    signature: str


def self_bleu(
    sentences: Sequence[str],
    max_order: int = 4,
    tokenizer: str = "nltk",
    smoothing: str = "method1",
    lowercase: bool = False,
) -> SelfBleuResult:
    """Mean leave-one-out BLEU of ``sentences``, the per-sentence scores, and a settings signature."""
    if isinstance(sentences, str):
        raise ValueError("Self-BLEU takes a list of sentences, not one string")
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise ValueError(f"sentences[{i}]: expected a string, got {type(s).__name__}")
    tok = get_tokenizer(tokenizer)
    corpus = [tok(s.lower() if lowercase else s) for s in sentences]
    scores = leave_one_out_bleu(corpus, max_order, smoothing)
    signature = (
        f"refs:others|order:{max_order}|tok:{tok.name}|case:{'lc' if lowercase else 'mixed'}"
        f"|smooth:{smoothing}|n:{len(corpus)}"
    )
    return SelfBleuResult(math.fsum(scores) / len(scores), scores, signature)
