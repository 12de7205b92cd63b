"""Everything BQA's labels *are*: the 26 BoLD emotions, their 4 groups, difficulty and demographics.

The grouping figure of the paper is not available as text. What the text states (Confidence and
Affection are Happiness, Surprise is Pleasure, Anger is Anger, Embarrassment is Sadness) is kept;
the rest is our reconstruction by valence/arousal quadrant. It is one table that a maintainer can
replace from a JSON or YAML file (:func:`load_group_mapping`); a release's card names the mapping used.

BoLD's CSVs store Gender/Age/Ethnicity as integer codes whose meaning is not published as text.
The tables below are our documented reading; they can be overridden the same way
(:func:`load_demographic_codes`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# BoLD column order and spelling (columns 5-30 of train.csv / val.csv).
EMOTIONS: tuple[str, ...] = (
    "Peace", "Affection", "Esteem", "Anticipation", "Engagement", "Confidence", "Happiness",
    "Pleasure", "Excitement", "Surprise", "Sympathy", "Doubt/Confusion", "Disconnection",
    "Fatigue", "Embarrassment", "Yearning", "Disapproval", "Aversion", "Annoyance", "Anger",
    "Sensitivity", "Sadness", "Disquietment", "Fear", "Pain", "Suffering",
)  # fmt: skip

# Other names a reply may use for a label, read by the answer parser (builders.scoring.answer_parsing).
# Parts and spellings: a compound label is named by either part or by both joined with "or"/"and";
# the parser itself accepts any spacing around a "/" ("Doubt / Confusion").
LABEL_PARTS: dict[str, tuple[str, ...]] = {
    "Doubt/Confusion": ("Doubt", "Confusion", "doubt or confusion", "doubt and confusion", "Confusion/Doubt"),
}
# Inflected forms: the adjective or participle derived from exactly one label, whose common sense is
# that emotion ("surprised" -> Surprise, "happy" -> Happiness). Synonyms are not forms ("tired",
# "scared", "calm" stay unmatched), and forms with a common other sense are left out: "engaged"
# (busy, betrothed), "esteemed" (respected by others), "averse" (reluctant), "yearning" and
# "suffering" are the labels themselves. A form counts like the label: negation, declarations and
# ambiguity apply to it the same way ("not angry", "happy and excited" is ambiguous), except that a
# form after a declaration never contradicts it: it describes ("Excitement: he jumps, looks happy").
LABEL_FORMS: dict[str, tuple[str, ...]] = {
    "Peace": ("peaceful",), "Affection": ("affectionate",), "Anticipation": ("anticipating",),
    "Confidence": ("confident",), "Happiness": ("happy",), "Pleasure": ("pleased",),
    "Excitement": ("excited",), "Surprise": ("surprised",), "Sympathy": ("sympathetic",),
    "Doubt/Confusion": ("doubtful", "confused"), "Disconnection": ("disconnected",),
    "Fatigue": ("fatigued",), "Embarrassment": ("embarrassed",), "Disapproval": ("disapproving",),
    "Annoyance": ("annoyed",), "Anger": ("angry",), "Sensitivity": ("sensitive",), "Sadness": ("sad",),
    "Disquietment": ("disquieted",), "Fear": ("fearful",), "Pain": ("pained",),
}  # fmt: skip
LABEL_ALIASES_NAME = "bqa-labels-v1"  # enters the answer parser's signature; bump on any change above

# Other words of a label's family, beyond the label and its LABEL_FORMS: verbs, adverbs, plurals,
# comparatives, and forms the parser leaves out for their other senses ("engaged", "averse"). A
# question naming a candidate by any of them gives the answer away (BQA STEP3's rule filter,
# :func:`label_words`); the parser does not read them as answers.
LABEL_RELATED_WORDS: dict[str, tuple[str, ...]] = {
    "Peace": ("peacefully", "peacefulness"), "Affection": ("affections", "affectionately"),
    "Esteem": ("esteemed",), "Anticipation": ("anticipate", "anticipates", "anticipated", "anticipatory"),
    "Engagement": ("engage", "engages", "engaged", "engaging"), "Confidence": ("confidently",),
    "Happiness": ("happier", "happiest", "happily"),
    "Pleasure": ("pleasures", "pleasing", "pleasant", "pleasurable"),
    "Excitement": ("excite", "exciting", "excitedly"), "Surprise": ("surprises", "surprising", "surprisingly"),
    "Sympathy": ("sympathize", "sympathise", "sympathizing", "sympathising"),
    "Doubt/Confusion": ("doubt", "doubts", "doubted", "doubting", "confusion", "confuse", "confusing"),
    "Disconnection": ("disconnect",), "Fatigue": (), "Embarrassment": ("embarrass", "embarrassing"),
    "Yearning": ("yearn", "yearns", "yearned", "yearningly"),
    "Disapproval": ("disapprove", "disapproves", "disapproved", "disapprovingly"), "Aversion": ("averse",),
    "Annoyance": ("annoy", "annoys", "annoying"), "Anger": ("angered", "angrier", "angrily"),
    "Sensitivity": ("sensitively",), "Sadness": ("sadder", "saddest", "sadly"),
    "Disquietment": ("disquiet", "disquieting"), "Fear": ("fears", "feared", "fearing", "fearfully"),
    "Pain": ("pains", "painful", "painfully"), "Suffering": ("suffer", "suffers", "suffered"),
}  # fmt: skip


def label_words(label: str) -> tuple[str, ...]:
    """Every word that names ``label`` (lower case): the label, its :data:`LABEL_FORMS` and its
    :data:`LABEL_RELATED_WORDS`."""
    return (label.lower(), *LABEL_FORMS.get(label, ()), *LABEL_RELATED_WORDS[label])


GROUP_NAMES: tuple[str, ...] = ("Happiness", "Pleasure", "Anger", "Sadness")

# Default 4-group mapping (see module docstring for what is stated vs reconstructed).
EMOTION_GROUPS: dict[str, tuple[str, ...]] = {
    "Happiness": ("Happiness", "Affection", "Confidence", "Esteem", "Peace", "Sympathy"),
    "Pleasure": ("Pleasure", "Excitement", "Surprise", "Anticipation", "Engagement"),
    "Anger": ("Anger", "Annoyance", "Aversion", "Disapproval", "Disquietment", "Fear"),
    "Sadness": (
        "Sadness", "Embarrassment", "Fatigue", "Pain", "Suffering", "Sensitivity",
        "Disconnection", "Doubt/Confusion", "Yearning",
    ),
}  # fmt: skip
DEFAULT_MAPPING_NAME = "bqa-quadrant-v1"

DIFFICULTIES: tuple[str, ...] = ("Easy", "Hard")
#: Why STEP4 labelled a question (the paper: Easy "when it could answer", Hard "if it could not"):
#: Easy = the model chose the right answer; Hard = it chose another choice, named none, named two
#: or more (an ambiguous reply), or its reply was stopped by the provider's safety filter (blocked).
RIGHT_CHOICE, WRONG_CHOICE, NO_ANSWER, AMBIGUOUS_ANSWER, BLOCKED_ANSWER = (
    "right_choice",
    "wrong_choice",
    "no_answer",
    "ambiguous",
    "blocked",
)
DIFFICULTY_REASONS: dict[str, str] = {
    RIGHT_CHOICE: "Easy",
    WRONG_CHOICE: "Hard",
    NO_ANSWER: "Hard",
    AMBIGUOUS_ANSWER: "Hard",
    BLOCKED_ANSWER: "Hard",
}


# Bucket for wrong answers that are not an emotion of the choices (the paper's error analysis).
OTHERS = "Others"

GENDERS: tuple[str, ...] = ("Male", "Female")
AGES: tuple[str, ...] = ("Kid", "Teenager", "Adult")
ETHNICITIES: tuple[str, ...] = (
    "White", "Black or African American", "American Indian or Alaska Native", "Asian",
    "Native Hawaiian or Other Pacific Islander", "Hispanic or Latino", "Other",
)  # fmt: skip

# BoLD integer codes -> labels. Our documented reading (1-based, in the order of the vocabularies).
DEFAULT_DEMOGRAPHIC_CODES: dict[str, dict[int, str]] = {
    "gender": {i + 1: v for i, v in enumerate(GENDERS)},
    "age": {i + 1: v for i, v in enumerate(AGES)},
    "ethnicity": {i + 1: v for i, v in enumerate(ETHNICITIES)},
}


@dataclass(frozen=True)
class GroupMapping:
    """Emotion -> group table with a name, validated to cover the 26 emotions exactly once."""

    name: str
    groups: Mapping[str, tuple[str, ...]]
    group_of: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        group_of: dict[str, str] = {}
        for group, labels in self.groups.items():
            for label in labels:
                if label not in EMOTIONS:
                    raise ValueError(f"mapping {self.name!r}: unknown emotion {label!r} in group {group!r}")
                if label in group_of:
                    raise ValueError(
                        f"mapping {self.name!r}: emotion {label!r} is in both {group_of[label]!r} and {group!r}"
                    )
                group_of[label] = group
        missing = [e for e in EMOTIONS if e not in group_of]
        if missing:
            raise ValueError(f"mapping {self.name!r}: emotions without a group: {missing}")
        if len(self.groups) < 4:
            raise ValueError(f"mapping {self.name!r}: needs at least 4 groups (1 answer + 3 distractors)")
        object.__setattr__(self, "group_of", group_of)

    @property
    def group_names(self) -> tuple[str, ...]:
        return tuple(self.groups)

    def to_dict(self) -> dict:
        return {"name": self.name, "groups": {g: list(v) for g, v in self.groups.items()}}


DEFAULT_GROUP_MAPPING = GroupMapping(DEFAULT_MAPPING_NAME, EMOTION_GROUPS)


def _read_table(path: str | Path) -> dict:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        raise ValueError(f"{path}: not valid {kind} ({' '.join(str(err).split())})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return data


def load_group_mapping(path: str | Path) -> GroupMapping:
    """Read ``{"name": ..., "groups": {group: [emotion, ...]}}`` from JSON or YAML."""
    data = _read_table(path)
    if "groups" not in data:
        raise ValueError(f"{path}: missing key 'groups'")
    groups = {str(g): tuple(v) for g, v in data["groups"].items()}
    return GroupMapping(str(data.get("name", Path(path).stem)), groups)


def load_demographic_codes(path: str | Path) -> dict[str, dict[int, str]]:
    """Read ``{"gender": {code: label}, "age": {...}, "ethnicity": {...}}``; missing keys keep defaults."""
    data = _read_table(path)
    unknown = set(data) - set(DEFAULT_DEMOGRAPHIC_CODES)
    if unknown:
        raise ValueError(f"{path}: unknown demographic fields {sorted(unknown)}")
    codes = {k: dict(v) for k, v in DEFAULT_DEMOGRAPHIC_CODES.items()}
    for key, table in data.items():
        codes[key] = {int(c): str(label) for c, label in table.items()}
    return codes
