"""JSON values for a JSON schema, written independently of the client's own schema code: one that is
valid (the chat server's default reply), one that is not (its ``invalid`` fault), and the keywords a
schema uses (what the Gemini-like server refuses)."""

from __future__ import annotations

from typing import Any


def schema_keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names excluded)."""
    found: set[str] = set()
    if isinstance(schema, list):
        for item in schema:
            found |= schema_keywords(item)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for sub in value.values():
                    found |= schema_keywords(sub)
            else:
                found |= schema_keywords(value)
    return found


def example_for_schema(
    schema: dict[str, Any], _root: dict[str, Any] | None = None, _name: str = "value"
) -> Any:
    """A value valid against ``schema``: enums take their first member, strings and numbers sit
    within their bounds, arrays have ``max(minItems, 1)`` items (within ``maxItems``), objects
    carry every property. Local ``$ref``s are followed. Independent of the client's own code."""
    root = schema if _root is None else _root
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        defs = {**root.get("definitions", {}), **root.get("$defs", {})}
        return example_for_schema(defs[name], root, _name)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_for_schema(options[0], root, _name)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for sub in schema["allOf"]:
            merged.update(sub)
        return example_for_schema(merged, root, _name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_for_schema(sub, root, name) for name, sub in props.items()}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        count = min(count, schema.get("maxItems", count))
        items = schema.get("items", {"type": "string"})
        return [example_for_schema(items, root, f"{_name} {i + 1}") for i in range(count)]
    if kind == "string":
        text = f"example {_name}"
        text = text.ljust(schema.get("minLength", 0), "x")
        return text[: schema["maxLength"]] if "maxLength" in schema else text
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        if "exclusiveMinimum" in schema and "minimum" not in schema:
            low = low + 1 if kind == "integer" else low + 0.5
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        value = max(low, 0) if high is None or max(low, 0) <= high else low
        if high is not None and "exclusiveMaximum" in schema and value >= high:
            value = high - 1 if kind == "integer" else (low + high) / 2
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    return None


def invalid_for_schema(schema: dict[str, Any] | None) -> Any:
    """JSON that violates ``schema``: an object missing its required fields, else a wrong type."""
    if schema and schema.get("type") == "object" and schema.get("required"):
        return {"unexpected_field": "this reply ignores the schema"}
    if schema and schema.get("type") == "array":
        return {"not": "an array"}
    return ["not", "what", "was", "asked"]
