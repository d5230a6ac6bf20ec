"""Data contracts shared by every stage. Imports nothing else of veridiag (docs/DESIGN.md §9)."""

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
