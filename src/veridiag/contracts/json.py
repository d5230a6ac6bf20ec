"""The one type for a JSON document nobody has validated yet — and only at an edge.

A model's parsed reply before it is read (``ExecutorMaterial.read``, ``Plan.read``), a backend's
HTTP body, a JSON column as stored: these really are arbitrary JSON. Everything between the
edges is a typed model; ``JsonObject`` says "not read yet", where a dict of ``Any`` said
nothing. Values are pydantic's ``JsonValue``, so a datetime or an object slipping in is an error
where it is built, not a surprise where it is dumped.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import JsonValue, WithJsonSchema

__all__ = ["JsonObject", "JsonValue", "json_object", "json_objects"]

#: A JSON object. Its JSON Schema stays ``{"type": "object"}`` with any properties, as the
#: committed schemas and the OpenAPI document have always described these fields.
JsonObject: TypeAlias = Annotated[
    dict[str, JsonValue], WithJsonSchema({"type": "object", "additionalProperties": True})
]


def json_object(value: JsonValue) -> JsonObject:
    """``value`` if it is a JSON object, else an empty one: how a reader of unvalidated JSON steps
    into a member without guessing at anything else."""
    return value if isinstance(value, dict) else {}


def json_objects(value: JsonValue) -> list[JsonObject]:
    """The objects of ``value`` if it is a JSON list (anything else in it is no record), else none."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
