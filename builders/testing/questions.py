"""Synthetic BQA-style questions for Self-BLEU tests and benchmarks (no data download needed).

They mimic the generated questions' shape: a wh-word, a person described by clothing or
position, an observed body movement, a context clause; many share long n-grams, as real
generated questions do, so Self-BLEU lands in the paper's 0.8-0.9 range for large sets.
"""

from __future__ import annotations

import random

_WH = ("What", "Why", "How", "Which emotion", "What feeling", "What emotion")
_VERB = (
    "is the {who} most likely feeling",
    "does the {who} seem to express",
    "might the {who} be experiencing",
    "best describes the state of the {who}",
    "is conveyed by the {who}",
)
_WHO = (
    "man", "woman", "person", "young man", "older woman", "man in the dark suit", "woman in the red dress",
    "person on the left", "boy", "girl", "man wearing a hat", "woman with long hair", "soldier", "bride",
)  # fmt: skip
_CONJ = ("when", "as", "while", "after", "just before", "right after", "the moment")
_PRONOUN = ("he", "she", "they", "the figure", "this person")
_ACTION = (
    "lowers", "raises", "shakes", "turns", "tilts", "drops", "lifts", "waves", "hides", "rubs", "clenches",
    "folds", "crosses", "points", "throws back", "pulls in", "stretches", "taps", "holds", "swings",
)  # fmt: skip
_PART = (
    "the head", "both arms", "the shoulders", "one hand", "the chin", "the fists", "the legs", "the torso",
    "the hands", "the elbows", "the neck", "a finger", "the hips", "the knees",
)  # fmt: skip
_MANNER = (
    "slowly", "abruptly", "repeatedly", "without a word", "with a sigh", "toward the camera", "away from the group",
    "near the window", "behind the chair", "in front of the crowd", "quite tensely", "almost playfully", "",
)  # fmt: skip
_CONTEXT = ("", " in this scene", " during the conversation", " at this moment", " based on the posture")
_SHORT = ("Why?", "What now?", "How so?", "Is he upset?", "Sad?", "")


def synthetic_questions(n: int, seed: int = 0, short_every: int = 0, duplicate_every: int = 0) -> list[str]:
    """``n`` questions; every ``short_every``-th is a very short one (or empty), every
    ``duplicate_every``-th repeats an earlier question verbatim."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(1, n + 1):
        if short_every and i % short_every == 0:
            out.append(_SHORT[(i // short_every) % len(_SHORT)])
        elif duplicate_every and i % duplicate_every == 0 and out:
            out.append(rng.choice(out))
        else:
            verb = rng.choice(_VERB).format(who=rng.choice(_WHO))
            when = f"{rng.choice(_CONJ)} {rng.choice(_PRONOUN)} {rng.choice(_ACTION)} {rng.choice(_PART)}"
            manner = rng.choice(_MANNER)
            out.append(
                f"{rng.choice(_WH)} {verb} {when}{' ' + manner if manner else ''}{rng.choice(_CONTEXT)}?"
            )
    return out
