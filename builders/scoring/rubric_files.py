"""Rubrics from a user's YAML or JSON file: ``get_rubric("custom", path=...)``.

:class:`CustomRubric` is registered as ``custom`` in :data:`builders.evaluation.rubrics.RUBRICS`. The
file format is :meth:`CustomRubric.from_mapping`; every
error names the file and, where it can, the criterion and field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import yaml

from builders.scoring.rubrics import IDENTIFIER, Criterion, Explain, Rubric


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
        if not IDENTIFIER.fullmatch(rubric_name or ""):
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

    @classmethod
    def from_options(cls, path: str | Path | None = None) -> CustomRubric:
        if path is None:
            raise ValueError("the custom rubric needs a rubric file (YAML or JSON): pass path / rubric_path")
        return cls.from_file(path)

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
