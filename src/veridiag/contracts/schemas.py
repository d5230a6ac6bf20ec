"""JSON Schema export of the contracts, committed under ``schemas/`` for other stacks."""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel

    from veridiag.contracts.json import JsonObject

#: CLI name → committed file name. Names only: ``veridiag --help`` lists them without building
#: the models (~140 ms); ``SCHEMAS`` adds each model.
SCHEMA_FILES: dict[str, str] = {
    "executor-v2": "executor_evidence_v2.schema.json",
    "gatekeeper-result": "gatekeeper_result.schema.json",
    "invocation": "tool_invocation.schema.json",
    "session": "diagnosis_session.schema.json",
}


@cache
def _schemas() -> dict[str, tuple[type[BaseModel], str]]:
    from veridiag.contracts.executor_v2 import ExecutorEvidenceV2
    from veridiag.contracts.gatekeeper import GatekeeperResult
    from veridiag.contracts.invocation import InvocationRecord
    from veridiag.contracts.session import SessionRecord

    models: dict[str, type[BaseModel]] = {
        "executor-v2": ExecutorEvidenceV2,
        "gatekeeper-result": GatekeeperResult,
        "invocation": InvocationRecord,
        "session": SessionRecord,
    }
    return {name: (models[name], filename) for name, filename in SCHEMA_FILES.items()}


def __getattr__(name: str) -> dict[str, tuple[type[BaseModel], str]]:
    """``SCHEMAS``: CLI name → (model, committed file name), the models imported on first use."""
    if name == "SCHEMAS":
        return _schemas()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def schema_dict(name: str) -> JsonObject:
    """The JSON Schema of contract ``name``; ``KeyError`` names the known ones."""
    if name not in SCHEMA_FILES:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMA_FILES))}")
    model, filename = _schemas()[name]
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://veridiag.dev/schemas/{filename}"
    return schema


def schema_text(name: str) -> str:
    """Stable text form (sorted keys, trailing newline) so the committed files diff cleanly."""
    return json.dumps(schema_dict(name), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
