"""Data contracts shared by every stage. Imports nothing else of veridiag (docs/DESIGN.md §9).

The names below are imported from their module when first used (``veridiag._lazy``): the
models cost ~140 ms to build, which ``veridiag --help`` (it lists the schema names) never needs.
"""

from typing import TYPE_CHECKING

from veridiag._lazy import lazy_exports

if TYPE_CHECKING:
    from veridiag.contracts.executor_v2 import (
        ANSWER_VERSION,
        OPTIONAL_ARRAYS,
        REMOVED_FIELDS,
        Claim,
        EvidenceBinding,
        ExecutorEvidenceV2,
        Hypothesis,
        RecommendedAction,
    )
    from veridiag.contracts.gatekeeper import (
        CheckRecord,
        ClaimTrace,
        GatekeeperError,
        GatekeeperReport,
        GatekeeperResult,
        MatchedSpan,
        RuleStatus,
        Severity,
        VerdictImpact,
    )
    from veridiag.contracts.invocation import (
        InMemoryInvocations,
        InvocationRecord,
        InvocationSource,
        InvocationStatus,
        InvocationView,
    )
    from veridiag.contracts.parsing import ParsedOutput, ParseStatus, parse_executor_output
    from veridiag.contracts.session import SessionRecord, SessionStatus
    from veridiag.contracts.trace import ToolTraceEntry

__getattr__ = lazy_exports(
    __name__,
    {
        ".executor_v2": (
            "ANSWER_VERSION",
            "OPTIONAL_ARRAYS",
            "REMOVED_FIELDS",
            "Claim",
            "EvidenceBinding",
            "ExecutorEvidenceV2",
            "Hypothesis",
            "RecommendedAction",
        ),
        ".gatekeeper": (
            "CheckRecord",
            "ClaimTrace",
            "GatekeeperError",
            "GatekeeperReport",
            "GatekeeperResult",
            "MatchedSpan",
            "RuleStatus",
            "Severity",
            "VerdictImpact",
        ),
        ".invocation": (
            "InMemoryInvocations",
            "InvocationRecord",
            "InvocationSource",
            "InvocationStatus",
            "InvocationView",
        ),
        ".parsing": ("ParsedOutput", "ParseStatus", "parse_executor_output"),
        ".session": ("SessionRecord", "SessionStatus"),
        ".trace": ("ToolTraceEntry",),
    },
)

__all__ = [
    "ANSWER_VERSION",
    "OPTIONAL_ARRAYS",
    "REMOVED_FIELDS",
    "CheckRecord",
    "Claim",
    "ClaimTrace",
    "EvidenceBinding",
    "ExecutorEvidenceV2",
    "GatekeeperError",
    "GatekeeperReport",
    "GatekeeperResult",
    "Hypothesis",
    "InMemoryInvocations",
    "InvocationRecord",
    "InvocationSource",
    "InvocationStatus",
    "InvocationView",
    "MatchedSpan",
    "ParseStatus",
    "ParsedOutput",
    "RecommendedAction",
    "RuleStatus",
    "SessionRecord",
    "SessionStatus",
    "Severity",
    "ToolTraceEntry",
    "VerdictImpact",
    "parse_executor_output",
]
