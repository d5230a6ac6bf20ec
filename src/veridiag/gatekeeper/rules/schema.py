"""``schema.executor_v2`` (docs/spec §11.1): the output is a V2 object, without removed fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from veridiag.contracts.executor_v2 import ANSWER_VERSION, OPTIONAL_ARRAYS, ExecutorEvidenceV2
from veridiag.contracts.json import JsonObject
from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.paths import loc_to_path
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata

#: Beyond this many schema errors the rest are summarised in one line.
MAX_REPORTED = 50


class SchemaParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    required_fields: list[str] = Field(default=["answer_version", "claims"], alias="requiredFields")
    deprecated_fields: list[str] = Field(default=["diagnosis_summary", "user_facing_answer"], alias="deprecatedFields")


@register
class ExecutorV2Schema(GatekeeperRule):
    id = "schema.executor_v2"
    Params = SchemaParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(SchemaParams)
        result = RuleResult(self.id)
        status = context.parse_status
        if status is not None and status.status != "valid":
            result.add("$", "fail", f"executor output is {status.status}: {status.detail}")
            return result
        output = context.output
        if not isinstance(output, dict):
            result.add("$", "fail", f"executor output must be a JSON object, got {_json_type(output)}")
            return result

        reported: set[str] = set()
        for name in params.required_fields:
            if name not in output:
                result.add(name, "fail", f"required field {name!r} is missing")
                reported.add(name)
        for name in params.deprecated_fields:
            if name in output:
                result.add(name, "fail", f"field {name!r} was removed in executor_evidence_v2 (docs/spec §8)")
        version = output.get("answer_version")
        if "answer_version" in output and version != ANSWER_VERSION:
            result.add("answer_version", "fail", f"answer_version must be {ANSWER_VERSION!r}, got {version!r}")
            reported.add("answer_version")
        for name in OPTIONAL_ARRAYS:
            if name not in output or output[name] is None:
                result.add(name, "pass", f"missing {name} normalised to []")

        self._model_errors(context.normalized or output, result, reported)
        self._duplicate_claim_ids(output, result)
        if not result.checks or result.status == "pass":
            result.add("$", "pass", "output matches executor_evidence_v2")
        return result

    @staticmethod
    def _model_errors(output: JsonObject, result: RuleResult, reported: set[str]) -> None:
        try:
            ExecutorEvidenceV2.model_validate(output)
        except ValidationError as exc:
            errors = [e for e in exc.errors() if loc_to_path(e["loc"]) not in reported]
            for error in errors[:MAX_REPORTED]:
                result.add(loc_to_path(error["loc"]) or "$", "fail", error["msg"])
            if len(errors) > MAX_REPORTED:
                result.add("$", "fail", f"{len(errors) - MAX_REPORTED} more schema errors not listed")
        except RecursionError:
            result.add("$", "fail", "output nests too deeply to validate")

    @staticmethod
    def _duplicate_claim_ids(output: JsonObject, result: RuleResult) -> None:
        claims = output.get("claims")
        if not isinstance(claims, list):
            return
        seen: dict[str, int] = {}
        for index, claim in enumerate(claims):
            claim_id = claim.get("claim_id") if isinstance(claim, dict) else None
            if not isinstance(claim_id, str):
                continue
            if claim_id in seen:
                result.add(
                    f"claims[{index}].claim_id",
                    "fail",
                    f"claim_id {claim_id!r} repeats claims[{seen[claim_id]}]",
                )
            else:
                seen[claim_id] = index


def _json_type(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
