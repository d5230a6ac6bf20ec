"""``evidence.invocation_ref`` (docs/spec §11.2): every cited invocation exists, is this
session's, is the tool the binding names, and did not error."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from veridiag.gatekeeper.context import RuleResult, ValidationContext, as_invocation_id
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata


class InvocationRefParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    fail_on_errored_invocation: bool = Field(default=True, alias="failOnErroredInvocation")


@register
class InvocationReference(GatekeeperRule):
    id = "evidence.invocation_ref"
    Params = InvocationRefParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(InvocationRefParams)
        result = RuleResult(self.id)
        for claim in context.claim_views():
            raw_bindings = claim.claim.get("evidence_bindings")
            if not isinstance(raw_bindings, list) or not raw_bindings:
                result.add(f"{claim.target}.evidence_bindings", "fail", "claim has no evidence bindings")
                continue
            for binding in claim.bindings:
                if not binding.cited:
                    result.add(binding.target, "fail", "source_invocation_ids must be a non-empty array")
                    continue
                for position, raw_id in enumerate(binding.cited):
                    self._check_id(
                        context,
                        result,
                        params,
                        target=binding.target,
                        position=position,
                        raw_id=raw_id,
                        tool_name=binding.binding.get("tool_name"),
                    )
        return result

    @staticmethod
    def _check_id(
        context: ValidationContext,
        result: RuleResult,
        params: InvocationRefParams,
        *,
        target: str,
        position: int,
        raw_id: object,
        tool_name: object,
    ) -> None:
        invocation_id = as_invocation_id(raw_id)
        id_target = f"{target}.source_invocation_ids[{position}]"
        if invocation_id is None:
            result.add(id_target, "fail", f"{raw_id!r} is not an invocation id")
            return
        invocation = context.invocations.get(invocation_id)
        if invocation is None:
            result.add(
                target,
                "fail",
                f"source_invocation_ids {invocation_id} not found in current session",
                invocation_id=invocation_id,
            )
        elif invocation.session_id != context.session_id:
            result.add(
                target,
                "fail",
                f"invocation {invocation_id} belongs to another session",
                invocation_id=invocation_id,
            )
        elif tool_name != invocation.tool_name:
            result.add(
                f"{target}.tool_name",
                "fail",
                f"tool_name {tool_name!r} does not match invocation {invocation_id} ({invocation.tool_name!r})",
                invocation_id=invocation_id,
            )
        elif invocation.status == "error" and params.fail_on_errored_invocation:
            result.add(
                target,
                "fail",
                f"invocation {invocation_id} errored; an error is not evidence",
                invocation_id=invocation_id,
            )
        else:
            result.add(
                target,
                "pass",
                f"invocation {invocation_id} ({invocation.status})",
                invocation_id=invocation_id,
            )
