"""MarineLife-16K's judge rubrics (:data:`RUBRICS`, listed in :data:`builders.evaluation.rubrics.RUBRICS`).

- ``marinelife_open_ended`` (the default of the judge metric and of ``vqabench judge``; the paper's
  OEMU): criteria ``camera`` (35%), ``activity`` (30%), ``relation`` (35%); ``reference`` is the
  reference answer text, or a mapping ``{"answer": text, "evidence": {attribute: value}}``;
  ``evidence=`` may also be given as a keyword.
- ``marinelife_caption``: criteria ``BEH``, ``AH``, ``ECF`` (ECF 5 = no fabrication), equal
  weights, a short explanation each; ``reference`` is the reference caption.
- ``marinelife_caption_review``: the caption engine's reviewer (S_c). ``prediction`` is the draft
  caption, ``reference`` the mapping of the 13 expert attributes (other keys, e.g. ``video_id``, are
  ignored); one criterion ``alignment`` 0-5 over the 8 dimensions plus a ``justification``;
  ``score(value) == {"criteria": {"alignment": S_c}, "score": float(S_c)}``.

Attribute mappings are shown to the judge (and to the pipeline's LLM steps) by
:func:`format_attributes`. :func:`camera_groups` splits judge means by static/moving camera.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from builders.scoring.rubrics import Criterion, Groups, Rubric
from marinelife16k.vocabulary import (
    ATTRIBUTES,
    CAMERA_KINDS,
    CAPTION_CRITERIA,
    CAPTION_CRITERION_DEFINITIONS,
    CAPTION_CRITERION_TITLES,
)


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


#: The judge results' breakdown by camera kind (``by_camera``; ``JudgeResult.by(CAMERA_GROUP)``).
CAMERA_GROUP = "camera"


def camera_groups(camera: Sequence[str] | None) -> Groups | None:
    """The judge's ``by_camera`` breakdown for per-item camera kinds (None: no breakdown)."""
    return None if camera is None else Groups(CAMERA_GROUP, CAMERA_KINDS, camera)


class MarineLifeRubric(Rubric):
    """A MarineLife-16K rubric: a mapping reference is a set of expert attributes; the means are split
    by camera kind (``by_camera``)."""

    breakdown = (CAMERA_GROUP, CAMERA_KINDS)

    def format_reference(self, reference: str | Mapping[str, Any]) -> str:
        if isinstance(reference, Mapping):
            return format_attributes(reference)
        return super().format_reference(reference)


class MarineLifeOpenEnded(MarineLifeRubric):
    """Open-ended QA with motion understanding (the paper's OEMU judge)."""

    name = "marinelife_open_ended"
    version = "2"  # 2: bound to its item (an item id in the prompt and the reply)
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


class MarineLifeCaption(MarineLifeRubric):
    """Caption hallucination judge: BEH, AH, ECF as in the paper's captioning table."""

    name = "marinelife_caption"
    version = "2"  # 2: bound to its item (an item id in the prompt and the reply)
    description = "Captions judged for entity, action and context hallucination, 0-5 each."
    prompt_name = "judge_marinelife_caption"
    explain = "each"
    criteria = tuple(
        Criterion(name, CAPTION_CRITERION_DEFINITIONS[name], 1.0, title=CAPTION_CRITERION_TITLES[name])
        for name in CAPTION_CRITERIA
    )


class MarineLifeCaptionReview(MarineLifeRubric):
    """The caption engine's reviewer: one alignment score S_c of a draft caption with the attributes."""

    name = "marinelife_caption_review"
    version = "2"  # 2: bound to its item (an item id in the prompt and the reply)
    description = "Alignment of a draft caption with the 13 expert attributes over 8 dimensions (S_c, 0-5)."
    prompt_name = "judge_marinelife_caption_review"
    explain = "overall"
    reference_fields = ATTRIBUTES
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


#: The rubrics this benchmark's judge offers, in the order ``vqabench judge rubrics`` lists them (the
#: first is the judge metric's and ``vqabench judge``'s default).
RUBRICS: tuple[type[Rubric], ...] = (MarineLifeOpenEnded, MarineLifeCaption, MarineLifeCaptionReview)


class JudgeTask(NamedTuple):
    """A judge task: the questions it judges, with which rubric, and what reports call it."""

    question_type: str
    rubric: str
    title: str


#: The judge's tasks, by the keys of a judge results file (``--judge-results``).
JUDGE_TASKS: dict[str, JudgeTask] = {
    "oemu": JudgeTask("camera_object_open_ended", MarineLifeOpenEnded.name,
                      "open-ended questions on camera and object motion (OEMU)"),
    "caption": JudgeTask("caption", MarineLifeCaption.name, "captions (BEH, AH, ECF)"),
}  # fmt: skip
