"""Structured replies: the schema we send (Gemini-safe), parsing what comes back, validating it.

Gemini's OpenAI-compatible endpoint rejects JSON schemas that contain ``$schema``,
``additionalProperties``, ``const`` or ``propertyNames``, and handles ``$ref`` poorly, so the schema
*sent* is inlined and stripped (:func:`gemini_safe_schema`). Validation still uses the full
original: the pydantic model itself, or the caller's dict schema via :func:`validate_json_schema`
(a small validator for the keywords structured-output schemas use; no extra dependency).

Servers wrap replies in code fences or add prose around the JSON; :func:`parse_json_reply` finds
the JSON value. A reply that cannot be parsed or validated raises :class:`ReplyError` with a
message meant to be sent back to the model in a re-ask.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from pydantic import BaseModel, Field, ValidationError, create_model

# Keywords Gemini rejects, plus ones that only add noise to the request.
_DROPPED_KEYS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "additionalProperties",
        "propertyNames",
        "patternProperties",
        "unevaluatedProperties",
        "discriminator",
        "title",
        "default",
        "examples",
    }
)
# Gemini accepts only these string formats.
_STRING_FORMATS = frozenset({"date-time", "enum"})
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)


class ReplyError(ValueError):
    """A reply that cannot be used (unparsable, schema-invalid, rejected by a validator, truncated)."""


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` with every local ``$ref`` replaced by its definition and ``$defs`` removed.

    Recursive schemas cannot be inlined (Gemini cannot take them either): a clear ValueError.
    """
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def resolve(node: Any, trail: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, trail) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            match = re.fullmatch(r"#/(?:\$defs|definitions)/(.+)", ref)
            if match is None or match.group(1) not in defs:
                raise ValueError(f"schema $ref {ref!r} cannot be resolved (only local #/$defs/... refs)")
            name = match.group(1)
            if name in trail:
                raise ValueError(
                    f"schema is recursive through {name!r}; structured replies need a finite schema"
                )
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return resolve({**defs[name], **siblings}, (*trail, name))
        return {k: resolve(v, trail) for k, v in node.items() if k not in ("$defs", "definitions")}

    return resolve(schema, ())


def gemini_safe_schema(schema: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    """The schema to send: refs inlined, forbidden/noisy keywords dropped, ``const`` -> ``enum``.

    Property *names* are never touched (a field may be called ``title`` or ``default``).
    """
    raw = schema.model_json_schema() if _is_model(schema) else copy.deepcopy(schema)
    if not isinstance(raw, dict):
        raise TypeError(f"schema must be a pydantic model class or a JSON-schema dict, got {type(schema)}")

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYS:
                continue
            if key == "const":
                out["enum"] = [value]
            elif key == "format" and value not in _STRING_FORMATS and node.get("type") == "string":
                continue
            elif key == "properties" and isinstance(value, dict):
                out[key] = {name: clean(sub) for name, sub in value.items()}
            else:
                out[key] = clean(value)
        return out

    return clean(inline_refs(raw))


def _is_model(schema: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(schema, type) and issubclass(schema, BaseModel)


def parse_json_reply(text: str) -> Any:
    """The JSON value in a reply: bare, inside a code fence, or embedded in prose.

    Raises :class:`ReplyError` when there is none.
    """
    if text is None or not text.strip():
        raise ReplyError("the reply is empty; reply with a JSON value")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        first_error = err
    for match in _FENCE.finditer(text):
        try:
            return json.loads(match.group(1))
        except json.JSONDecodeError:
            pass
    # Prose around the JSON: decode from the first '{' or '[' that starts a complete value.
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", text):
        try:
            return decoder.raw_decode(text, match.start())[0]
        except json.JSONDecodeError:
            continue
    raise ReplyError(
        f"the reply is not valid JSON ({first_error.msg} at line {first_error.lineno} "
        f"column {first_error.colno}); reply with the JSON value only"
    )


@dataclass(frozen=True)
class ReplySchema:
    """One request's expected reply: the schema sent, and how to validate and store the value."""

    name: str
    sent: dict[str, Any]
    model: type[BaseModel] | None = None
    source: dict[str, Any] | None = None  # the dict schema (refs inlined) when no pydantic model

    @classmethod
    def of(
        cls, schema: type[BaseModel] | dict[str, Any] | None, name: str | None = None, *, bound: bool = False
    ) -> ReplySchema | None:
        """The reply schema of ``schema``; ``bound``: with a required :data:`ITEM_ID_FIELD` (the reply
        names the item it is about, :func:`bind_to_item` checks it)."""
        if schema is None:
            return None
        if _is_model(schema):
            if bound:
                return _bound_reply_schema(schema, name or schema.__name__)
            return _model_reply_schema(schema, name)
        if not isinstance(schema, dict):
            raise TypeError(
                f"schema must be a pydantic model class or a JSON-schema dict, got {type(schema)}"
            )
        if bound:
            schema = {
                **schema,
                "properties": {ITEM_ID_FIELD: _ITEM_ID_SCHEMA, **schema.get("properties", {})},
                "required": [ITEM_ID_FIELD, *(r for r in schema.get("required", []) if r != ITEM_ID_FIELD)],
            }
        title = name or schema.get("title") or "reply"
        return cls(name=_safe_name(str(title)), sent=gemini_safe_schema(schema), source=inline_refs(schema))

    def response_format(self) -> dict[str, Any]:
        return {
            "type": "json_schema",
            "json_schema": {"name": self.name, "schema": self.sent, "strict": False},
        }

    def validate(self, value: Any) -> Any:
        """The validated value (a model instance for pydantic schemas); :class:`ReplyError` if invalid."""
        if self.model is not None:
            try:
                return self.model.model_validate(value)
            except ValidationError as err:
                raise ReplyError(_describe_validation_error(err)) from None
        problems = validate_json_schema(value, self.source or self.sent)
        if problems:
            raise ReplyError("the reply does not match the schema: " + "; ".join(problems[:10]))
        return value

    def to_json(self, value: Any) -> Any:
        """The JSON form of a validated value, as stored in the cache."""
        return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


#: The field of a bound reply that names its item (:func:`bind_to_item`).
ITEM_ID_FIELD = "item_id"
_ITEM_ID_DESCRIPTION = "the item id given in the request, copied exactly"
_ITEM_ID_SCHEMA = {"type": "string", "description": _ITEM_ID_DESCRIPTION}


@functools.lru_cache(maxsize=256)
def _bound_reply_schema(model: type[BaseModel], name: str) -> ReplySchema:
    """The reply schema of ``model`` with a required :data:`ITEM_ID_FIELD`: validated by a subclass
    (still a ``model``, its own validators kept), sent with the id first, as the prompts show it, so
    that a model writes which item it answers before its answer."""
    if ITEM_ID_FIELD not in model.model_fields:
        model = create_model(
            model.__name__, __base__=model, item_id=(str, Field(description=_ITEM_ID_DESCRIPTION))
        )
    schema = _model_reply_schema(model, name)
    sent = dict(schema.sent)
    properties = sent.get("properties", {})
    sent["properties"] = {ITEM_ID_FIELD: properties[ITEM_ID_FIELD], **properties}
    sent["required"] = [ITEM_ID_FIELD, *(r for r in sent.get("required", []) if r != ITEM_ID_FIELD)]
    return replace(schema, sent=sent)


def bind_to_item(item_id: str, validator: Callable[[Any], Any] | None = None) -> Callable[[Any], Any]:
    """A validator refusing a reply that names another item than ``item_id`` (a reply meant for another
    request: a proxy or a server that mixed replies up), then running ``validator``."""

    def check(value: Any) -> None:
        got = value.get(ITEM_ID_FIELD) if isinstance(value, dict) else getattr(value, ITEM_ID_FIELD, None)
        if got != item_id:
            raise ReplyError(
                f"the reply is about item {got!r}, not about this request's item {item_id!r}; reply about "
                f"item {item_id!r} and copy its id into {ITEM_ID_FIELD}"
            )
        if validator is not None:
            validator(value)

    return check


@functools.lru_cache(maxsize=256)
def _model_reply_schema(model: type[BaseModel], name: str | None) -> ReplySchema:
    # Building a pydantic JSON schema costs more than the rest of a request's preparation; batches
    # reuse one model for thousands of requests. (Callers must not mutate ``sent``.)
    return ReplySchema(name=_safe_name(name or model.__name__), sent=gemini_safe_schema(model), model=model)


def validate_reply(
    text: str | None, schema: ReplySchema | None, validator: Callable[[Any], Any] | None = None
) -> Any:
    """Parse and validate one reply text (plain text when there is no schema). Raises :class:`ReplyError`."""
    return check_value(parse_json_reply(text or "") if schema is not None else text, schema, validator)


def check_value(value: Any, schema: ReplySchema | None, validator: Callable[[Any], Any] | None = None) -> Any:
    """Validate an already-parsed value (e.g. one read from the cache) and run the domain validator.

    The validator gets the validated value (a model instance for pydantic schemas) and rejects it
    by raising ValueError (or AssertionError); its message is sent back to the model in a re-ask.
    """
    if schema is not None:
        value = schema.validate(value)
    elif not isinstance(value, str) or not value.strip():
        raise ReplyError("the reply is empty")
    if validator is not None:
        try:
            validator(value)
        except ReplyError:
            raise
        except (ValueError, AssertionError) as err:
            raise ReplyError(f"the reply was rejected: {err}") from None
    return value


def _safe_name(name: str) -> str:
    # OpenAI requires ^[a-zA-Z0-9_-]{1,64}$ for json_schema.name.
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "reply"


def _describe_validation_error(err: ValidationError) -> str:
    parts = []
    for item in err.errors()[:10]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        parts.append(f"{where}: {item['msg']}")
    return "the reply does not match the schema: " + "; ".join(parts)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate_json_schema(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems of ``value`` against a JSON schema (empty list: valid).

    Covers the structured-output subset: type (incl. lists and ``nullable``), enum, const,
    properties/required/additionalProperties, items/minItems/maxItems/uniqueItems, string
    length/pattern, numeric bounds, anyOf/oneOf/allOf/not. Local refs must be inlined first.
    """
    problems: list[str] = []
    if schema is True or schema == {}:
        return problems
    if schema is False:
        return [f"{path}: no value is allowed here"]
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if schema.get("nullable"):
            allowed.append("null")
        if not any(_TYPES[t](value) for t in allowed if t in _TYPES):
            return [f"{path}: expected {' or '.join(allowed)}, got {_json_type(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: must be {schema['const']!r}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"{path}: missing required field {name!r}")
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                problems += validate_json_schema(item, props[name], f"{path}.{name}")
            elif extra is False:
                problems.append(f"{path}: unexpected field {name!r}")
            elif isinstance(extra, dict):
                problems += validate_json_schema(item, extra, f"{path}.{name}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path}: needs at least {schema['minItems']} items, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: allows at most {schema['maxItems']} items, got {len(value)}")
        if schema.get("uniqueItems"):
            seen = [json.dumps(v, sort_keys=True) for v in value]
            if len(set(seen)) != len(seen):
                problems.append(f"{path}: items must be unique")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                problems += validate_json_schema(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']} characters")
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            problems.append(f"{path}: does not match pattern {schema['pattern']!r}")
    if _TYPES["number"](value):
        for key, ok in (
            ("minimum", lambda b: value >= b),
            ("maximum", lambda b: value <= b),
            ("exclusiveMinimum", lambda b: value > b),
            ("exclusiveMaximum", lambda b: value < b),
        ):
            if key in schema and not ok(schema[key]):
                problems.append(f"{path}: {value} violates {key} {schema[key]}")
    if "anyOf" in schema and all(validate_json_schema(value, s, path) for s in schema["anyOf"]):
        problems.append(f"{path}: matches none of the allowed alternatives (anyOf)")
    if "oneOf" in schema:
        matches = sum(not validate_json_schema(value, s, path) for s in schema["oneOf"])
        if matches != 1:
            problems.append(f"{path}: must match exactly one alternative (oneOf), matches {matches}")
    for sub in schema.get("allOf", []):
        problems += validate_json_schema(value, sub, path)
    if "not" in schema and not validate_json_schema(value, schema["not"], path):
        problems.append(f"{path}: matches a forbidden schema (not)")
    return problems


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__
