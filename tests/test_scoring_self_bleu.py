"""Self-BLEU equals nltk's sentence_bleu against all other sentences, sentence by sentence."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from nltk.translate.bleu_score import SmoothingFunction, closest_ref_length, sentence_bleu

from builders.scoring.self_bleu import _closest_other_lengths, leave_one_out_bleu, self_bleu
from builders.scoring.tokenizers import TOKENIZERS, get_tokenizer
from builders.testing.questions import synthetic_questions

EDGE_SENTENCES = [
    "",
    "Why?",
    "Why?",
    "What?",
    "Sad",
    "the the the the the the",
    "the the",
    "Is he upset, or is he just tired of waiting?",
    "What emotion is the man in the dark suit most likely feeling?",
    "What emotion is the man in the dark suit most likely feeling?",
    "Completely unrelated words here: zebra quantum violin.",
]


def nltk_leave_one_out(corpus, max_order=4, smoothing="method1"):
    smooth = getattr(SmoothingFunction(), smoothing)
    weights = (1.0 / max_order,) * max_order
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns whenever an n-gram order has no match
        return [
            sentence_bleu(corpus[:i] + corpus[i + 1 :], hyp, weights, smoothing_function=smooth)
            for i, hyp in enumerate(corpus)
        ]


def assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    worst = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
    assert worst <= 1e-9, worst


def test_equals_nltk_on_a_few_hundred_questions():
    sentences = synthetic_questions(260, seed=1, short_every=23, duplicate_every=9) + EDGE_SENTENCES
    tokenize = get_tokenizer("nltk")
    corpus = [tokenize(s) for s in sentences]
    ours = leave_one_out_bleu(corpus)
    assert_same(ours, nltk_leave_one_out(corpus))
    # The corpus exercises the corner cases: zero scores, exact duplicates, sentences shorter than 4.
    assert any(s == 0.0 for s in ours) and any(s == 1.0 for s in ours) and any(len(c) < 4 for c in corpus)


@pytest.mark.parametrize("max_order", [1, 2, 3, 5])
@pytest.mark.parametrize("smoothing", ["method1", "method0"])
def test_equals_nltk_for_other_orders_and_smoothing(max_order, smoothing):
    sentences = synthetic_questions(50, seed=max_order, short_every=7, duplicate_every=5) + EDGE_SENTENCES
    corpus = [s.split() for s in sentences]
    assert_same(
        leave_one_out_bleu(corpus, max_order, smoothing), nltk_leave_one_out(corpus, max_order, smoothing)
    )


@pytest.mark.parametrize("tokenizer", sorted(TOKENIZERS))
@pytest.mark.parametrize("lowercase", [False, True])
def test_self_bleu_is_the_mean_over_tokenized_sentences(tokenizer, lowercase):
    sentences = synthetic_questions(40, seed=5, duplicate_every=6) + [
        "WHAT is he doing?",
        "what IS he doing?",
    ]
    tokenize = get_tokenizer(tokenizer)
    corpus = [tokenize(s.lower() if lowercase else s) for s in sentences]
    result = self_bleu(sentences, tokenizer=tokenizer, lowercase=lowercase)
    assert_same(result.scores, nltk_leave_one_out(corpus))
    assert result.score == pytest.approx(sum(result.scores) / len(result.scores), abs=1e-15)
    case = "lc" if lowercase else "mixed"
    assert result.signature == f"refs:others|order:4|tok:{tokenizer}|case:{case}|smooth:method1|n:42"


def test_tokenizers_need_no_download():
    text = "He isn't sure, is he?"
    assert get_tokenizer("nltk")(text) == ["He", "is", "n't", "sure", ",", "is", "he", "?"]
    assert get_tokenizer("13a")(text) == ["He", "isn't", "sure", ",", "is", "he", "?"]
    assert get_tokenizer("whitespace")(text) == ["He", "isn't", "sure,", "is", "he?"]


def test_hand_worked_example():
    # "what is he doing ?": unigrams 4/5, bigrams 2/4, trigrams 0/3 -> 0.1/3, 4-grams 0/2 -> 0.1/2;
    # closest other length 5 = own length, no brevity penalty. "why ?": unigrams 1/2, the rest
    # smoothed to 0.1/1; closest other length 5 -> penalty exp(1 - 5/2).
    result = self_bleu(["what is he doing ?", "what is she doing ?", "why ?"])
    long_score = (0.8 * 0.5 * (0.1 / 3) * (0.1 / 2)) ** 0.25
    short_score = math.exp(1 - 5 / 2) * (0.5 * 0.1 * 0.1 * 0.1) ** 0.25
    assert result.scores == pytest.approx([long_score, long_score, short_score], rel=1e-12)
    assert result.score == pytest.approx((2 * long_score + short_score) / 3, rel=1e-12)


def test_duplicates_and_no_overlap():
    # An exact duplicate (length >= 4) is a perfect match; a sentence sharing no word scores 0.
    result = self_bleu(["a b c d e", "a b c d e", "x y z"], tokenizer="whitespace")
    assert result.scores[:2] == [1.0, 1.0] and result.scores[2] == 0.0


def test_closest_other_length_matches_nltk_rule():
    rng = random.Random(11)
    for _ in range(300):
        lengths = [rng.randint(0, 12) for _ in range(rng.randint(2, 9))]
        ours = _closest_other_lengths(lengths)
        for i, hyp_len in enumerate(lengths):
            others = [[None] * n for j, n in enumerate(lengths) if j != i]
            assert ours[i] == closest_ref_length(others, hyp_len), (lengths, i)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sentences": ["only one"]}, "at least 2 sentences"),
        ({"sentences": []}, "at least 2 sentences"),
        ({"sentences": "one string"}, "not one string"),
        ({"sentences": ["a", None]}, r"sentences\[1\]: expected a string"),
        ({"sentences": ["a b", "a c"], "tokenizer": "spacy"}, "unknown tokenizer 'spacy'"),
        ({"sentences": ["a b", "a c"], "smoothing": "method7"}, "unknown smoothing 'method7'"),
        ({"sentences": ["a b", "a c"], "max_order": 0}, "max_order must be a positive integer"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        self_bleu(**kwargs)
