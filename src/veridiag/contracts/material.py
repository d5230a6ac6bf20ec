"""What the pipeline reads of an Executor output, typed, whatever its contract validity.

The Gatekeeper judges the raw JSON against the contract (``executor_v2``) and names every
claim that breaks it; the stages after it still have to carry those claims — as
``unsupported``, as gaps, on the workbench — so they cannot use the strict models, which
would drop them. ``ExecutorMaterial.read`` is the one place the raw dict is read: a field
of the wrong type is read as absent, never guessed, and every later stage (guardrails,
verdict, composer input, audit views, workbench) passes these objects instead of dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict, ValidationError

from veridiag.contracts.verifier import CRITICAL_CLAIM_TYPES


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class BindingView(_View):
    """One evidence binding: ``source_invocation_ids`` keeps only true integers (a string
    "12" cites nothing — the Gatekeeper's contract rule says why)."""

    tool_name: str = ""
    source_invocation_ids: tuple[int, ...] = ()
    evidence_excerpt: str = ""


class ClaimView(_View):
    """A claim as stated. ``claim_id`` is the id the Gatekeeper trace uses: the stated id, or
    ``#<index>`` when there is none."""

    index: int
    claim_id: str
    claim_type: str = ""
    claim_text: str = ""
    support_level: str = ""
    bindings: tuple[BindingView, ...] = ()
    #: The Executor says this claim answers what the question asked (``Claim.answers``).
    answers: bool = False

    @property
    def is_critical(self) -> bool:
        """docs/spec §16.1.1: symptom, root cause, impact and risk claims decide the verdict."""
        return self.claim_type in CRITICAL_CLAIM_TYPES

    def cites_only(self, citable: set[int]) -> bool:
        """At least one binding whose cited ids are all in ``citable``."""
        return any(b.source_invocation_ids and set(b.source_invocation_ids) <= citable for b in self.bindings)


class HypothesisView(_View):
    index: int
    hypothesis_text: str = ""
    basis: str = ""
    needed_evidence: tuple[str, ...] = ()


class ActionView(_View):
    action_text: str = ""
    reason: str = ""


class ExecutorScope(_View):
    """The period the Executor settled on and how it chose it (``chosen``: question,
    most_anomalous, asked_lines, after_change, whole_window); the scope line shows it. Optional: a model
    Executor may not write one, and one that does not fit is read as absent."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    window: tuple[str, str] | None = None
    focus: tuple[str, str] | None = None
    chosen: str | None = None
    #: ``chosen == "after_change"``: when the change the question pointed at happened (ISO).
    after_change_at: str | None = None
    services: tuple[str, ...] = ()
    surveyed: bool = False
    involved: tuple[str, ...] = ()
    #: The services the culprit search examined, the named services' callers and callees among
    #: them, and the named services that hold no data in the window.
    examined: tuple[str, ...] = ()
    neighbours: tuple[str, ...] = ()
    without_data: tuple[str, ...] = ()


class ExecutorMaterial(_View):
    """The Executor's claims, hypotheses, actions, gaps and stated scope, typed."""

    claims: tuple[ClaimView, ...] = ()
    hypotheses: tuple[HypothesisView, ...] = ()
    recommended_actions: tuple[ActionView, ...] = ()
    missing_info: tuple[str, ...] = ()
    scope: ExecutorScope | None = None

    @classmethod
    def read(cls, structured: Mapping[str, Any] | None) -> ExecutorMaterial:
        if not structured:
            return cls()
        scope = structured.get("scope")
        return cls(
            claims=tuple(
                _claim(index, item) for index, item in enumerate(_list(structured.get("claims"))) if _is_map(item)
            ),
            hypotheses=tuple(
                HypothesisView(
                    index=index,
                    hypothesis_text=_text(item.get("hypothesis_text")),
                    basis=_text(item.get("basis")),
                    needed_evidence=_texts(item.get("needed_evidence")),
                )
                for index, item in enumerate(_list(structured.get("hypotheses")))
                if _is_map(item)
            ),
            recommended_actions=tuple(
                ActionView(action_text=_text(item.get("action_text")), reason=_text(item.get("reason")))
                for item in _list(structured.get("recommended_actions"))
                if _is_map(item)
            ),
            missing_info=_texts(structured.get("missing_info")),
            scope=_scope(scope),
        )

    def claim(self, claim_id: str) -> ClaimView | None:
        return next((c for c in self.claims if c.claim_id == claim_id), None)


def claim_id_at(index: int, item: object) -> str:
    """The id every stage uses for the claim at ``index``: the stated one, else ``#<index>``."""
    stated = item.get("claim_id") if _is_map(item) else None
    return stated if isinstance(stated, str) and stated else f"#{index}"


def _claim(index: int, item: Mapping[str, Any]) -> ClaimView:
    return ClaimView(
        index=index,
        claim_id=claim_id_at(index, item),
        claim_type=_text(item.get("claim_type")),
        claim_text=_text(item.get("claim_text")),
        support_level=_text(item.get("support_level")),
        answers=item.get("answers") is True,
        bindings=tuple(
            BindingView(
                tool_name=_text(binding.get("tool_name")),
                source_invocation_ids=tuple(i for i in _list(binding.get("source_invocation_ids")) if type(i) is int),
                evidence_excerpt=_text(binding.get("evidence_excerpt")),
            )
            for binding in _list(item.get("evidence_bindings"))
            if _is_map(binding)
        ),
    )


def _scope(value: object) -> ExecutorScope | None:
    if not _is_map(value):
        return None
    try:
        return ExecutorScope.model_validate(value)
    except ValidationError:
        return None


def _is_map(value: object) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(value, Mapping)


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _texts(value: object) -> tuple[str, ...]:
    return tuple(item for item in _list(value) if isinstance(item, str))
