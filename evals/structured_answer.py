"""Structured outputs in the relay: what a request's `output_config.format` asks the model to answer.

The real API constrains a structured-output reply to the request's JSON schema, so the engine that sent it
(recall/llm_select.py) never sees anything else. Whoever acts as the model through the relay can write
anything, so the relay checks the answer against the schema first and says in one line what does not fit,
instead of letting the engine drop the reply and fall back quietly. The check covers what structured outputs
accept: type, properties, required, additionalProperties, items, enum, const, anyOf.
"""

from __future__ import annotations

import json

_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
                                       "integer": (int,), "number": (int, float), "null": (type(None),)}


def output_schema(request: dict) -> dict | None:
    """The JSON schema the request's structured output must follow, or None when it asks for none."""
    form = (request.get("output_config") or {}).get("format")
    if isinstance(form, dict) and form.get("type") == "json_schema" and isinstance(form.get("schema"), dict):
        return form["schema"]
    return None


def _kind_ok(value: object, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _TYPES.get(kind, (object,)))


def mismatch(value: object, schema: dict, where: str = "the answer") -> str | None:
    """The first place where `value` does not fit `schema`, said in words; None when it fits."""
    if "anyOf" in schema:
        if all(mismatch(value, option, where) for option in schema["anyOf"]):
            return f"{where}: fits none of the allowed forms"
        return None
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    if kinds and not any(_kind_ok(value, kind) for kind in kinds):
        return f"{where}: expected {' or '.join(kinds)}, got {json.dumps(value, ensure_ascii=False)[:60]}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: must be one of {json.dumps(schema['enum'], ensure_ascii=False)[:120]}"
    if "const" in schema and value != schema["const"]:
        return f"{where}: must be {json.dumps(schema['const'], ensure_ascii=False)}"
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                return f"{where}: missing `{key}`"
        for key, item in value.items():
            if key in properties:
                problem = mismatch(item, properties[key], f"{where}.{key}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{where}: `{key}` is not in the schema (allowed: {', '.join(properties) or 'none'})"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problem = mismatch(item, schema["items"], f"{where}.{i}")
            if problem:
                return problem
    return None


def example(schema: dict) -> object:
    """A value of the schema's shape, to show whoever answers what to write."""
    if schema.get("anyOf"):
        return example(schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        return {key: example(sub) for key, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [example(schema["items"])] if isinstance(schema.get("items"), dict) else []
    return {"string": "...", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def answer_problem(blocks: list[dict], schema: dict) -> str | None:
    """What is wrong with a reply's text blocks as the structured output `schema` asks for, or None."""
    if any(b.get("type") != "text" for b in blocks):
        return "a structured-output answer is text blocks only (the JSON), no tool_use or other blocks"
    text = "".join(str(b.get("text", "")) for b in blocks).strip()
    shape = json.dumps(example(schema), ensure_ascii=False)
    try:
        value = json.loads(text)
    except ValueError:
        return f"the text must be JSON matching the request's output schema, such as {shape}; got {text[:60]!r}"
    problem = mismatch(value, schema)
    return f"{problem} (the text must be JSON matching the request's output schema, such as {shape})" if problem else None
