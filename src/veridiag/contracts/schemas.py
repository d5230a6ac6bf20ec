"""JSON Schema export of the contracts, committed under ``schemas/`` for other stacks."""

from __future__ import annotations

import json

from pydantic import BaseModel

from veridiag.contracts.executor_v2 import ExecutorEvidenceV2
from veridiag.contracts.gatekeeper import GatekeeperResult
from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.json import JsonObject
from veridiag.contracts.session import SessionRecord

#: CLI name → (model, committed file name).
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "executor-v2": (ExecutorEvidenceV2, "executor_evidence_v2.schema.json"),
    "gatekeeper-result": (GatekeeperResult, "gatekeeper_result.schema.json"),
    "invocation": (InvocationRecord, "tool_invocation.schema.json"),
    "session": (SessionRecord, "diagnosis_session.schema.json"),
}


def schema_dict(name: str) -> JsonObject:
    """The JSON Schema of contract ``name``; ``KeyError`` names the known ones."""
    if name not in SCHEMAS:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMAS))}")
    model, filename = SCHEMAS[name]
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://veridiag.dev/schemas/{filename}"
    return schema


def schema_text(name: str) -> str:
    """Stable text form (sorted keys, trailing newline) so the committed files diff cleanly."""
    return json.dumps(schema_dict(name), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
