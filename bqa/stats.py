"""The statistics a BQA release reports about itself, as the paper does for its own release.

Per split: size, Easy/Hard counts (Table 3), answer-group, answer-label and demographic
distributions (Figure 3), number of source films, and the Self-BLEU of the questions (Table 2,
:func:`builders.scoring.self_bleu.self_bleu`; an export may switch it off, and the card then says
it was not computed).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bqa.records import BQARecord
from bqa.vocabulary import DIFFICULTIES, EMOTIONS
from bqa.workfolder import ReleaseMeta
from builders.scoring.self_bleu import self_bleu as project_self_bleu

log = logging.getLogger(__name__)

DEMOGRAPHICS: tuple[str, ...] = ("gender", "age", "ethnicity")
TOTAL = "total"


@dataclass(frozen=True)
class SplitStats:
    size: int
    films: int
    difficulty: dict[str, int]
    answer_group: dict[str, int]
    answer: dict[str, int]
    gender: dict[str, int]
    age: dict[str, int]
    ethnicity: dict[str, int]
    self_bleu: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReleaseStats:
    """Statistics of each split and of the whole release (key ``"total"``, no Self-BLEU)."""

    splits: dict[str, SplitStats]
    self_bleu_note: str  # how Self-BLEU was computed, or why it was not
    shared_films: list[str]  # films with rows in more than one split (a split by film has none)

    def to_json(self) -> dict[str, Any]:
        return {
            "splits": {k: v.to_json() for k, v in self.splits.items()},
            "self_bleu_note": self.self_bleu_note,
            "shared_films": self.shared_films,
        }


def _counts(values: Iterable[str], vocabulary: Sequence[str]) -> dict[str, int]:
    """Counts in vocabulary order, zeros included; values outside the vocabulary come last."""
    counter = Counter(values)
    out = {label: counter.pop(label, 0) for label in vocabulary}
    out.update(sorted(counter.items()))
    return out


def split_stats(
    records: Sequence[BQARecord], meta: ReleaseMeta, self_bleu: float | None = None
) -> SplitStats:
    def labels(key: str) -> list[str]:
        return list(
            dict.fromkeys(meta.demographic_codes[key][c] for c in sorted(meta.demographic_codes[key]))
        )

    return SplitStats(
        size=len(records),
        films=len({r.source.film_id for r in records}),
        difficulty=_counts((r.difficulty for r in records), DIFFICULTIES),
        answer_group=_counts((r.answer_group for r in records), meta.group_mapping.group_names),
        answer=_counts((r.answer for r in records), EMOTIONS),
        **{key: _counts((getattr(r, key) for r in records), labels(key)) for key in DEMOGRAPHICS},
        self_bleu=self_bleu,
    )


def release_stats(
    splits: Mapping[str, Sequence[BQARecord]],
    meta: ReleaseMeta,
    *,
    self_bleu: bool | Callable[[list[str]], Any] = True,
) -> ReleaseStats:
    """Statistics of every split and of the total.

    ``self_bleu``: False, True (the project's scorer) or a function of the questions returning a
    float or an object with ``score`` (and ``signature``, recorded in the note).
    """
    scorer: Callable[[list[str]], Any] | None
    if callable(self_bleu):
        scorer, note = self_bleu, "Self-BLEU-4 (custom scorer)"
    elif self_bleu:
        scorer = project_self_bleu
        note = "Texygen Self-BLEU-4, each question against all other questions of its split"
    else:
        scorer, note = None, "not computed (disabled for this export)"
    out = {}
    signatures = set()
    for name, records in splits.items():
        score = None
        if scorer is not None and len(records) > 1:
            log.info("Self-BLEU of %d %s questions", len(records), name)
            result = scorer([r.question for r in records])
            score = float(getattr(result, "score", result))
            signature = getattr(result, "signature", None)
            if signature:  # the sentence count differs per split; the settings do not
                signatures.add("|".join(p for p in signature.split("|") if not p.startswith("n:")))
        out[name] = split_stats(records, meta, score)
    if signatures:
        note += f" (signature {', '.join(sorted(signatures))})"
    out[TOTAL] = split_stats([r for records in splits.values() for r in records], meta)
    splits_of_film: dict[str, set[str]] = {}
    for name, records in splits.items():
        for r in records:
            splits_of_film.setdefault(r.source.film_id, set()).add(name)
    shared = sorted(film for film, names in splits_of_film.items() if len(names) > 1)
    return ReleaseStats(splits=out, self_bleu_note=note, shared_films=shared)
