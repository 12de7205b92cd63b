"""The rubric core for LLM judges: what to score, on which scale, with which weights, asked how.

API (the judge core :mod:`builders.scoring.judge`, the judge metric and the MarineLife caption engine
code against this)::

    from builders.evaluation.rubrics import RUBRICS, get_rubric   # every rubric, listed explicitly
    from builders.scoring.rubrics import Criterion, Rubric, RubricRegistry

    rubric = get_rubric("marinelife_open_ended")        # or "custom" with path="my_rubric.yaml"
    rubric.name, rubric.version                          # "marinelife_open_ended", "2"
    rubric.criteria                                      # (Criterion(name, description, weight, min=0, max=5), ...)
    rubric.signature                                     # "rubric:marinelife_open_ended|v:2|prompt:...|scale:0-5|w:..."
    rubric.reply_model                                   # pydantic model: one int field per criterion in [min, max]
    request = rubric.request(prediction, reference, question=None, item_id="i1", **context)  # a builders.llm.LLMRequest
    result = LLMClient(settings, cache_path=...).run([request])[0]
    rubric.score(result.value)                           # {"criteria": {name: int}, "score": weighted float}
    rubric.explanations(result.value)                    # {field: text} for rubrics that ask for them

A :class:`RubricRegistry` maps a name to its :class:`Rubric` class (a sacrebleu-style registry); the
core knows no dataset. The tools' registry, :data:`builders.evaluation.rubrics.RUBRICS`, lists
MarineLife-16K's rubrics (:data:`marinelife16k.rubrics.RUBRICS`: ``marinelife_open_ended``,
``marinelife_caption``, ``marinelife_caption_review``) and ``custom``, criteria from a user's YAML/JSON
file (:mod:`builders.scoring.rubric_files`, ``get_rubric("custom", path=...)``).

Every request carries ``prompt=(rubric.name, rubric.version)``, so both are part of the LLM cache
key and recorded with each reply. The reply model itself enforces completeness and ranges (strict
integers within each criterion's scale, non-empty explanations); a reply that breaks them fails
validation and is re-asked by :class:`builders.llm.LLMClient`, then reported, never scored.
Prompts are versioned files ``builders/llm/prompts/judge_<rubric>.md``; a rubric's criteria are rendered
into them from :attr:`Rubric.criteria`, the one place they are written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from builders.llm import LLMRequest, user_message
from builders.llm.prompts import Prompt, load_prompt
from builders.llm.schema import ITEM_ID_FIELD

Explain = Literal["none", "each", "overall"]
IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")  # a rubric or criterion name
_NOT_GIVEN = "(not given)"


@dataclass(frozen=True)
class Criterion:
    """One scored criterion: an integer in ``[min, max]``; ``weight`` counts in the weighted score."""

    name: str
    description: str
    weight: float = 1.0
    min: int = 0
    max: int = 5
    title: str = ""  # a human label for cards and prompts; defaults to the name

    def __post_init__(self) -> None:
        if not IDENTIFIER.fullmatch(self.name):
            raise ValueError(f"criterion name {self.name!r} must be a letter then letters, digits or '_'")
        if not (isinstance(self.min, int) and isinstance(self.max, int)) or self.min >= self.max:
            raise ValueError(
                f"criterion {self.name!r}: scale must be integers min < max, got {self.min}-{self.max}"
            )
        if not (math.isfinite(self.weight) and self.weight >= 0):
            raise ValueError(
                f"criterion {self.name!r}: weight must be a finite number >= 0, got {self.weight}"
            )

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass(frozen=True)
class Groups:
    """A breakdown of the judge's means: ``by_<name>`` in the result holds the means of the items of
    each label, for every label of ``labels`` in that order (a label no item has gets empty means).
    ``of_item`` is the label of each prediction, in order."""

    name: str
    labels: tuple[str, ...]
    of_item: Sequence[str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(self.labels))


class Rubric:
    """A named, versioned set of criteria and the prompt that asks a judge to score them.

    Subclasses set the class attributes and may override :meth:`variables` (how prediction,
    reference, question and context fill their prompt file).
    """

    name: str = ""  # the registry key; a custom rubric's instance name is "custom:<its name>"
    version: str = "1"  # bump on any change of criteria, weights or prompt: it is in the cache key
    description: str = ""
    criteria: tuple[Criterion, ...] = ()
    prompt_name: str = ""
    explain: Explain = "none"  # "each": <criterion>_explanation per criterion; "overall": justification
    reference_fields: tuple[str, ...] = ()  # the fields of a structured reference (none: a text)
    breakdown: tuple[str, tuple[str, ...]] | None = None  # its benchmark's split of the means: name, labels

    def __init__(self) -> None:
        self._check()

    @classmethod
    def from_options(cls, path: str | Path | None = None) -> Rubric:
        """The rubric :meth:`RubricRegistry.rubric` returns for this registered class; only rubrics
        read from a file take ``path``."""
        if path is not None:
            raise ValueError(f"rubric {cls.name!r} is built in; a rubric file is only read for 'custom'")
        return cls()

    def _check(self) -> None:
        if not self.criteria:
            raise ValueError(f"rubric {self.name!r} has no criteria")
        names = [c.name for c in self.criteria]
        if len(set(names)) != len(names):
            raise ValueError(f"rubric {self.name!r}: criterion names repeat: {names}")
        if math.fsum(c.weight for c in self.criteria) <= 0:
            raise ValueError(f"rubric {self.name!r}: the weights sum to 0")
        if self.explain not in ("none", "each", "overall"):
            raise ValueError(
                f"rubric {self.name!r}: explain must be none, each or overall, got {self.explain!r}"
            )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.signature}>"

    # -- what identifies a score ------------------------------------------------------------

    @cached_property
    def prompt(self) -> Prompt:
        return load_prompt(self.prompt_name)

    @property
    def scale(self) -> str:
        """``"0-5"`` when every criterion shares one scale, else ``"name=0-5,..."``."""
        scales = {(c.min, c.max) for c in self.criteria}
        if len(scales) == 1:
            lo, hi = scales.pop()
            return f"{lo}-{hi}"
        return ",".join(f"{c.name}={c.min}-{c.max}" for c in self.criteria)

    @property
    def signature(self) -> str:
        """Every rubric setting that changes a score, sacrebleu-style (the judge model is added by
        :mod:`builders.scoring.judge`)."""
        weights = ",".join(f"{c.name}={c.weight:g}" for c in self.criteria)
        return (
            f"rubric:{self.name}|v:{self.version}|prompt:{self.prompt.name}@{self.prompt.version}"
            f"|scale:{self.scale}|w:{weights}|explain:{self.explain}"
        )

    @property
    def criterion_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.criteria)

    # -- asking -----------------------------------------------------------------------------

    @cached_property
    def reply_model(self) -> type[BaseModel]:
        """The reply schema: per criterion a strict int in its range (an explanation first where the
        rubric asks for one, so the judge reasons before it scores)."""
        fields: dict[str, Any] = {}
        if self.explain == "overall":
            fields["justification"] = (str, Field(min_length=1, description="one or two sentences"))
        for c in self.criteria:
            if self.explain == "each":
                fields[f"{c.name}_explanation"] = (
                    str,
                    Field(min_length=1, description=f"a brief reason for the {c.label} score"),
                )
            fields[c.name] = (
                int,
                Field(ge=c.min, le=c.max, strict=True, description=f"{c.label}: integer {c.min}-{c.max}"),
            )
        model_name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", self.name)) + "Scores"
        return create_model(model_name, __config__=ConfigDict(extra="ignore"), **fields)

    def render_criteria(self) -> str:
        """The numbered criteria as the prompt shows them (weights only when they differ)."""
        equal = len({c.weight for c in self.criteria}) == 1
        total = math.fsum(c.weight for c in self.criteria)
        lines = []
        for i, c in enumerate(self.criteria, start=1):
            weight = "" if equal else f", weight {100 * c.weight / total:g}%"
            lines.append(
                f'{i}. {c.label} (field "{c.name}", integer {c.min}-{c.max}{weight}): {c.description}'
            )
        return "\n".join(lines)

    def render_reply_format(self, item_id: str) -> str:
        """The JSON keys the reply must have, in order (the item's id first), for servers that ignore
        the schema."""
        fields = [f'"{ITEM_ID_FIELD}": {json.dumps(item_id)}']
        for name, field in self.reply_model.model_fields.items():
            kind = "string" if field.annotation is str else "integer"
            fields.append(f'"{name}": <{kind}>')
        return "{" + ", ".join(fields) + "}"

    def variables(
        self, prediction: str, reference: str | Mapping[str, Any], question: str | None, **context: Any
    ) -> dict[str, Any]:
        """Prompt variables for one item; subclasses add their own."""
        if context:
            raise TypeError(f"rubric {self.name!r} takes no context {sorted(context)}")
        return {
            "question": _text(question) if question is not None else _NOT_GIVEN,
            "reference": self.format_reference(reference),
            "prediction": _prediction(prediction),
        }

    def format_reference(self, reference: str | Mapping[str, Any]) -> str:
        """The reference as the prompt shows it: text as given; a rubric that takes structured
        references (a mapping) says how it renders them by overriding this."""
        if isinstance(reference, Mapping):
            raise TypeError(f"rubric {self.name!r} takes a text reference, got a mapping")
        text = _text(reference)
        if not text:
            raise ValueError("the reference is empty")
        return text

    def request(
        self,
        prediction: str,
        reference: str | Mapping[str, Any],
        question: str | None = None,
        *,
        item_id: str,
        metadata: Mapping[str, Any] | None = None,
        **context: Any,
    ) -> LLMRequest:
        """The LLM request judging one prediction (text only; the judge sees no frames), bound to
        ``item_id``: the prompt shows it, the reply must copy it, and a reply naming another item is
        refused and re-asked, never scored for this one (:class:`builders.llm.LLMRequest`)."""
        variables = {
            "criteria": self.render_criteria(),
            "reply_format": self.render_reply_format(item_id),
            ITEM_ID_FIELD: item_id,
            **self.variables(prediction, reference, question, **context),
        }
        used = self.prompt.variables
        text = self.prompt.render(**{k: v for k, v in variables.items() if k in used})
        return LLMRequest(
            [user_message(text)],
            schema=self.reply_model,
            prompt=(self.name, str(self.version)),
            metadata=dict(metadata or {}),
            schema_name=f"{self.name}_scores",
            item_id=item_id,
        )

    # -- reading the reply ------------------------------------------------------------------

    def _as_dict(self, value: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(value, BaseModel):
            return value.model_dump()
        return dict(self.reply_model.model_validate(value).model_dump())

    def score(self, value: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
        """``{"criteria": {name: int}, "score": weighted mean}`` of a validated reply (model or dict)."""
        data = self._as_dict(value)
        scores = {c.name: int(data[c.name]) for c in self.criteria}
        total = math.fsum(c.weight for c in self.criteria)
        weighted = math.fsum(c.weight * scores[c.name] for c in self.criteria) / total
        return {"criteria": scores, "score": weighted}

    def explanations(self, value: BaseModel | Mapping[str, Any]) -> dict[str, str]:
        """The reply's explanation fields (empty for rubrics that ask for none)."""
        data = self._as_dict(value)
        return {k: v for k, v in data.items() if k not in self.criterion_names and k != ITEM_ID_FIELD}


# -- inputs ----------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}: {str(value)[:60]!r}")
    return value.strip()


def _prediction(value: Any) -> str:
    # An empty prediction is judged (it scores low by the anchors), not skipped.
    text = _text(value)
    return text if text else "(empty answer)"


# -- the registry ----------------------------------------------------------------------------


class RubricRegistry(Mapping[str, type[Rubric]]):
    """Rubric classes by name, listed explicitly where the registry is built (sacrebleu's way):
    :data:`builders.evaluation.rubrics.RUBRICS` holds every rubric the tools know. Nothing registers
    itself by being imported; a name is registered once (a second class under it is an error)."""

    def __init__(self, *rubrics: type[Rubric]) -> None:
        self._classes: dict[str, type[Rubric]] = {}
        for rubric in rubrics:
            self.register(rubric)

    @property
    def default(self) -> str:
        """The first rubric registered: the judge metric's and ``vqabench judge``'s default."""
        return next(iter(self._classes))

    def groups(self, name: str, of_item: Sequence[str] | None) -> Groups | None:
        """Each item's label of the breakdown ``name`` a registered rubric declares (None: no labels)."""
        declared = {r.breakdown[0]: r.breakdown[1] for r in self._classes.values() if r.breakdown}
        if of_item is None:
            return None
        if name not in declared:
            raise ValueError(f"no registered rubric splits its means by {name!r}; known: {list(declared)}")
        return Groups(name, declared[name], of_item)

    def register(self, rubric: type[Rubric]) -> type[Rubric]:
        if not rubric.name:
            raise ValueError(f"{rubric.__qualname__} has no name to register under")
        known = self._classes.get(rubric.name)
        if known is not None and known is not rubric:
            raise ValueError(
                f"rubric {rubric.name!r} is already registered by {known.__module__}.{known.__qualname__}"
            )
        self._classes[rubric.name] = rubric
        return rubric

    def rubric(self, name: str, path: str | Path | None = None) -> Rubric:
        """The rubric registered as ``name``; ``"custom"`` reads ``path`` (YAML or JSON)."""
        if name not in self._classes:
            raise ValueError(f"unknown rubric {name!r}; registered: {', '.join(self._classes) or 'none'}")
        return self._classes[name].from_options(path)

    def __getitem__(self, name: str) -> type[Rubric]:
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)
