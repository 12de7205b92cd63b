"""Rubrics for LLM judges: what to score, on which scale, with which weights, asked how.

API (the judge metric and the MarineLife caption engine both code against this)::

    from builders.scoring.rubrics import RUBRICS, Criterion, Rubric, get_rubric

    rubric = get_rubric("marinelife_open_ended")        # or "custom" with path="my_rubric.yaml"
    rubric.name, rubric.version                          # "marinelife_open_ended", "1"
    rubric.criteria                                      # (Criterion(name, description, weight, min=0, max=5), ...)
    rubric.signature                                     # "rubric:marinelife_open_ended|v:1|prompt:...|scale:0-5|w:..."
    rubric.reply_model                                   # pydantic model: one int field per criterion in [min, max]
    request = rubric.request(prediction, reference, question=None, **context)   # a builders.llm.LLMRequest
    result = LLMClient(settings, cache_path=...).run([request])[0]
    rubric.score(result.value)                           # {"criteria": {name: int}, "score": weighted float}
    rubric.explanations(result.value)                    # {field: text} for rubrics that ask for them

``RUBRICS`` maps a name to its :class:`Rubric` class (sacrebleu-style registry):

- ``marinelife_open_ended`` (the default of the judge metric; the paper's OEMU): criteria
  ``camera`` (35%), ``activity`` (30%), ``relation`` (35%); ``reference`` is the reference answer
  text, or a mapping ``{"answer": text, "evidence": {attribute: value}}``; ``evidence=`` may also be
  given as a keyword.
- ``marinelife_caption``: criteria ``BEH``, ``AH``, ``ECF`` (ECF 5 = no fabrication), equal
  weights, a short explanation each; ``reference`` is the reference caption.
- ``marinelife_caption_review``: the caption engine's reviewer (S_c). ``prediction`` is the draft
  caption, ``reference`` the mapping of the 13 expert attributes (other keys, e.g. ``video_id``, are
  ignored); one criterion ``alignment`` 0-5 over the 8 dimensions plus a ``justification``;
  ``score(value) == {"criteria": {"alignment": S_c}, "score": float(S_c)}``.
- ``custom``: criteria from a user's YAML/JSON file, ``get_rubric("custom", path=...)`` (format:
  :meth:`CustomRubric.from_file`).

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
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, create_model

from builders.llm import LLMRequest, user_message
from builders.llm.prompts import Prompt, load_prompt
from marinelife16k.vocabulary import ATTRIBUTES, CAPTION_CRITERIA

Explain = Literal["none", "each", "overall"]
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
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
        if not _IDENTIFIER.fullmatch(self.name):
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

    def __init__(self) -> None:
        self._check()

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

    def render_reply_format(self) -> str:
        """The JSON keys the reply must have, in order, for servers that ignore the schema."""
        fields = []
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
            "reference": format_reference(reference),
            "prediction": _prediction(prediction),
        }

    def request(
        self,
        prediction: str,
        reference: str | Mapping[str, Any],
        question: str | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
        **context: Any,
    ) -> LLMRequest:
        """The LLM request judging one prediction (text only; the judge sees no frames)."""
        variables = {
            "criteria": self.render_criteria(),
            "reply_format": self.render_reply_format(),
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
        return {k: v for k, v in data.items() if k not in self.criterion_names}


# -- inputs ----------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}: {str(value)[:60]!r}")
    return value.strip()


def _prediction(value: Any) -> str:
    # An empty prediction is judged (it scores low by the anchors), not skipped.
    text = _text(value)
    return text if text else "(empty answer)"


def format_attributes(attributes: Mapping[str, Any]) -> str:
    """The expert attributes as ``name: value`` lines in the dataset's order; keys that are not
    attributes are ignored, and an empty attribute says so (a caption naming it then invents it)."""
    present = [a for a in ATTRIBUTES if a in attributes]
    if not present:
        raise ValueError(
            f"no MarineLife attributes in the reference (keys {sorted(map(str, attributes))[:8]}); "
            f"expected some of {', '.join(ATTRIBUTES)}"
        )
    lines = []
    for name in ATTRIBUTES:
        value = attributes.get(name)
        text = "" if value is None else str(value).strip()
        lines.append(f"- {name}: {text or '(none annotated)'}")
    return "\n".join(lines)


def format_reference(reference: str | Mapping[str, Any]) -> str:
    """Reference text as given, or a mapping of attributes as lines."""
    if isinstance(reference, Mapping):
        return format_attributes(reference)
    text = _text(reference)
    if not text:
        raise ValueError("the reference is empty")
    return text


# -- the MarineLife rubrics ------------------------------------------------------------------


class MarineLifeOpenEnded(Rubric):
    """Open-ended QA with motion understanding (the paper's OEMU judge)."""

    name = "marinelife_open_ended"
    version = "1"
    description = "Open-ended answers on camera motion and object activity, weighted 0-5 (OEMU)."
    prompt_name = "judge_marinelife_open_ended"
    criteria = (
        Criterion(
            "camera",
            "Does the answer get the camera position, framing, angle and movement of the ground truth right?",
            0.35,
            title="Camera motion and viewpoint",
        ),
        Criterion(
            "activity",
            "Does the answer get the annotated movement, behaviour or stillness of the central and "
            "supporting objects right?",
            0.30,
            title="Object activity",
        ),
        Criterion(
            "relation",
            "Does the answer say how the camera's movement or viewpoint records, follows, reveals or "
            "frames that activity?",
            0.35,
            title="Camera-object relationship",
        ),
    )

    def variables(
        self,
        prediction: str,
        reference: str | Mapping[str, Any],
        question: str | None,
        evidence: Mapping[str, Any] | None = None,
        **context: Any,
    ) -> dict[str, Any]:
        if isinstance(reference, Mapping):
            unknown = set(reference) - {"answer", "evidence"}
            if unknown or "answer" not in reference:
                raise ValueError(
                    f"an open-ended reference mapping has 'answer' (text) and optional 'evidence' "
                    f"(attributes); got keys {sorted(map(str, reference))}"
                )
            if evidence is not None and reference.get("evidence") is not None:
                raise ValueError("evidence given twice (in the reference and as a keyword)")
            evidence = reference.get("evidence", evidence)
            reference = reference["answer"]
        out = super().variables(prediction, reference, question, **context)
        out["evidence"] = (
            format_attributes(evidence) if evidence else "(none supplied: use the reference answer)"
        )
        return out


class MarineLifeCaption(Rubric):
    """Caption hallucination judge: BEH, AH, ECF as in the paper's captioning table."""

    name = "marinelife_caption"
    version = "1"
    description = "Captions judged for entity, action and context hallucination, 0-5 each."
    prompt_name = "judge_marinelife_caption"
    explain = "each"
    criteria = tuple(
        Criterion(name, text, 1.0, title=title)
        for name, title, text in zip(
            CAPTION_CRITERIA,
            ("Subject correspondence", "Temporal description", "Hallucination detection"),
            (
                "Are the subjects (organisms, divers, objects) of the caption the ones of the reference? "
                "5: the same subjects; 0: unrelated subjects.",
                "Does the caption's account of how the objects move, and how the camera moves or is placed, "
                "agree with the reference? 5: fully consistent; 0: unrelated or contradicted.",
                "Does the caption add facts, actions or scene elements that are not there (imagined "
                "details, wrong inferences)? 5: nothing fabricated; 0: severe fabrication.",
            ),
            strict=True,
        )
    )


class MarineLifeCaptionReview(Rubric):
    """The caption engine's reviewer: one alignment score S_c of a draft caption with the attributes."""

    name = "marinelife_caption_review"
    version = "1"
    description = "Alignment of a draft caption with the 13 expert attributes over 8 dimensions (S_c, 0-5)."
    prompt_name = "judge_marinelife_caption_review"
    explain = "overall"
    criteria = (
        Criterion(
            "alignment",
            "Overall agreement of the caption with the attributes across the 8 dimensions; "
            "5: every dimension matches, 0: nothing relevant.",
            1.0,
            title="Attribute alignment",
        ),
    )

    def variables(
        self, prediction: str, reference: str | Mapping[str, Any], question: str | None, **context: Any
    ) -> dict[str, Any]:
        if not isinstance(reference, Mapping):
            raise TypeError(
                f"the caption review's reference is the mapping of expert attributes, got {type(reference).__name__}"
            )
        return super().variables(prediction, reference, question, **context)


# -- user rubrics ----------------------------------------------------------------------------


class CustomRubric(Rubric):
    """A rubric read from a user's YAML or JSON file (see :meth:`from_file`)."""

    name = "custom"
    prompt_name = "judge_custom"

    def __init__(
        self,
        rubric_name: str,
        criteria: tuple[Criterion, ...],
        version: str = "1",
        description: str = "",
        instructions: str = "",
        explain: Explain = "none",
        source: str = "<mapping>",
    ) -> None:
        if not _IDENTIFIER.fullmatch(rubric_name or ""):
            raise ValueError(
                f"{source}: rubric name {rubric_name!r} must be a letter then letters, digits or '_'"
            )
        self.rubric_name = rubric_name
        self.name = f"custom:{rubric_name}"
        self.criteria = tuple(criteria)
        self.version = str(version)
        self.description = description
        self.instructions = instructions.strip()
        self.explain = explain
        self.source = source
        try:
            self._check()
        except ValueError as err:
            raise ValueError(f"{source}: {err}") from None

    FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"name", "version", "description", "instructions", "scale", "explanations", "criteria"}
    )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<mapping>") -> CustomRubric:
        """A rubric from a mapping::

        name: clarity            # letters, digits, '_'
        version: 1               # bump when anything changes (part of the cache key)
        description: ...         # optional
        instructions: ...        # optional: what the judge is judging, shown before the criteria
        scale: {min: 0, max: 5}  # optional, default 0-5; a criterion may set its own min/max
        explanations: none       # none | each (one per criterion) | overall (one justification)
        criteria:
          - {name: correct, description: "Is it right?", weight: 0.6}
          - {name: complete, description: "Is anything missing?", weight: 0.4}
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"{source}: a rubric file holds a mapping, got {type(data).__name__}")
        unknown, missing = set(data) - cls.FIELDS, {"name", "criteria"} - set(data)
        if unknown or missing:
            raise ValueError(
                f"{source}: rubric needs name and criteria (optional: version, description, instructions, "
                f"scale, explanations); missing {sorted(missing)}, unknown {sorted(map(str, unknown))}"
            )
        scale = data.get("scale") or {}
        if not isinstance(scale, Mapping) or set(scale) - {"min", "max"}:
            raise ValueError(f"{source}: scale must be a mapping with min and max, got {scale!r}")
        items = data["criteria"]
        if not isinstance(items, list) or not items:
            raise ValueError(f"{source}: criteria must be a non-empty list")
        criteria = []
        for i, item in enumerate(items):
            where = f"{source}: criteria[{i}]"
            if not isinstance(item, Mapping) or not {"name", "description"} <= set(item):
                raise ValueError(f"{where} needs name and description (optional weight, min, max)")
            extra = set(item) - {"name", "description", "weight", "min", "max", "title"}
            if extra:
                raise ValueError(f"{where}: unknown fields {sorted(map(str, extra))}")
            try:
                criteria.append(
                    Criterion(
                        str(item["name"]),
                        str(item["description"]).strip(),
                        float(item.get("weight", 1.0)),
                        _int(item.get("min", scale.get("min", 0))),
                        _int(item.get("max", scale.get("max", 5))),
                        str(item.get("title", "")),
                    )
                )
            except (TypeError, ValueError) as err:
                raise ValueError(f"{where}: {err}") from None
        explain = str(data.get("explanations", "none"))
        if explain not in ("none", "each", "overall"):
            raise ValueError(f"{source}: explanations must be none, each or overall, got {explain!r}")
        return cls(
            str(data["name"]),
            tuple(criteria),
            version=str(data.get("version", "1")),
            description=str(data.get("description", "")),
            instructions=str(data.get("instructions", "")),
            explain=explain,  # type: ignore[arg-type]
            source=source,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> CustomRubric:
        """A rubric from a ``.yaml``/``.yml``/``.json`` file in the :meth:`from_mapping` format."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no rubric file at {path}")
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as err:
            raise ValueError(
                f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {err}"
            ) from None
        return cls.from_mapping(data, source=str(path))

    def variables(
        self, prediction: str, reference: str | Mapping[str, Any], question: str | None, **context: Any
    ) -> dict[str, Any]:
        out = super().variables(prediction, reference, question, **context)
        out["instructions"] = self.instructions or "Judge the predicted answer against the reference."
        return out


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"scale bounds must be integers, got {value!r}")
    return value


RUBRICS: dict[str, type[Rubric]] = {
    r.name: r for r in (MarineLifeOpenEnded, MarineLifeCaption, MarineLifeCaptionReview, CustomRubric)
}
DEFAULT_RUBRIC = MarineLifeOpenEnded.name


def get_rubric(name: str, path: str | Path | None = None) -> Rubric:
    """The rubric registered as ``name``; ``"custom"`` reads ``path`` (YAML or JSON)."""
    if name not in RUBRICS:
        raise ValueError(f"unknown rubric {name!r}; known: {', '.join(RUBRICS)}")
    if name == CustomRubric.name:
        if path is None:
            raise ValueError("the custom rubric needs a rubric file (YAML or JSON): pass path / rubric_path")
        return CustomRubric.from_file(path)
    if path is not None:
        raise ValueError(f"rubric {name!r} is built in; a rubric file is only read for 'custom'")
    return RUBRICS[name]()
