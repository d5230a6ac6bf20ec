"""The MCP tools over one assembled pipeline, served by the official SDK's ``MCPServer``.

Thin on purpose: each tool calls what the API and the pipeline already use — the pipeline from
``assemble``, ``answer_document``, ``audit_chain``, ``ToolRunner``, ``verifier_input`` — so an MCP
client gets the documents ``POST /api/v1/chat`` and ``GET …/audit`` return, evidence redacted and
stored by the same runner the Executor uses, and the Gatekeeper's verdict exactly as a diagnosis
round gets it. The work is synchronous, so it runs in worker threads; diagnoses, CPU-bound, behind a
capacity limiter (``api_concurrency``) as the API's are, so queued ones finish in arrival order.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from veridiag import __version__
from veridiag.api.schemas import ChatRequest
from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.audit import AuditChain
from veridiag.contracts.json import JsonObject
from veridiag.mcp_server.models import ClaimsCheck, EvidenceCall
from veridiag.pipeline import audit_chain
from veridiag.pipeline.factory import Assembly
from veridiag.pipeline.hook import verifier_input
from veridiag.pipeline.progress import Progress
from veridiag.pipeline.report import answer_document
from veridiag.tools.args import TOOL_ARGS
from veridiag.tools.runner import DESCRIPTIONS, ToolRunner

#: The question an evidence session is stored under (the workbench lists sessions by question).
EVIDENCE_QUESTION = "evidence gathered by an MCP client"

INSTRUCTIONS = (
    "veridiag diagnoses incidents from logs, metrics, changes and runbooks and states only what the "
    "evidence supports. `diagnose` answers a question (verdict, answer, claims with the invocations they "
    "cite, session id); `get_audit` shows how. To check your own conclusions: call the evidence tools "
    "(they return a session_id and an invocation_id per call), write an executor_evidence_v2 document "
    "citing those ids, and pass it to `check_claims` with the session_id."
)

# The tools' parameters: the SDK builds each tool's input schema from these annotations.
Question = Annotated[str, Field(description="The question, 中文 or English, e.g. 订单123支付失败，帮我看看是什么原因")]
Lang = Annotated[Literal["zh", "en"] | None, Field(description="Answer language; default: the question's.")]
SessionId = Annotated[str, Field(min_length=1, max_length=100, description="A session id.")]
CitedSession = Annotated[
    str, Field(min_length=1, max_length=100, description="The session whose invocations the claims cite.")
]
ExecutorDocument = Annotated[
    JsonObject | str,
    Field(description="An executor_evidence_v2 document (`veridiag schema executor-v2`), as an object or JSON text."),
]
EvidenceSession = Annotated[
    str | None,
    Field(
        default=None,
        max_length=100,
        description="An evidence session an earlier evidence call returned; omit to open a new one.",
    ),
]


class VeridiagTools:
    """The tools' implementation. Holds the shared collaborators and the ids of the evidence
    sessions this server opened (only those take more calls: a diagnosis's evidence is closed
    once its answer is written); each call's own state stays in the call."""

    def __init__(self, assembly: Assembly, *, concurrency: int) -> None:
        self.assembly = assembly
        self.limiter = anyio.CapacityLimiter(concurrency)
        self._evidence_sessions: set[str] = set()
        self._lock = threading.Lock()

    async def diagnose(self, question: Question, ctx: Context[Any, Any], lang: Lang = None) -> AnswerDocument:
        """Each stage of the run is reported as MCP progress (the stage's name as the message),
        as the API's stream sends it; a client that asked for no progress hears nothing."""
        try:  # the API's own request model: one definition of a usable question
            request = ChatRequest(query=question, lang=lang)
        except ValidationError as exc:
            raise ToolError("; ".join(error["msg"].removeprefix("Value error, ") for error in exc.errors())) from None
        # The run is in a worker thread: it queues its stages without waiting on the client.
        stages, heard = anyio.create_memory_object_stream[str](math.inf)

        def progress(stage: str, _details: JsonObject) -> None:
            anyio.from_thread.run_sync(stages.send_nowait, stage)

        async def report() -> None:
            async with heard:
                step = 0
                async for stage in heard:
                    step += 1
                    await ctx.report_progress(step, None, stage)

        async with anyio.create_task_group() as reporting:
            reporting.start_soon(report)
            with stages:
                document = await anyio.to_thread.run_sync(self._diagnose, request, progress, limiter=self.limiter)
        return document

    def _diagnose(self, request: ChatRequest, progress: Progress) -> AnswerDocument:
        result = self.assembly.pipeline.run(request.query, request.lang, progress=progress, source="mcp")
        return answer_document(result, self.assembly.engine)

    async def get_audit(self, session_id: SessionId) -> AuditChain:
        chain = await anyio.to_thread.run_sync(audit_chain, self.assembly.store, session_id)
        if chain is None:
            raise ToolError(f"no session {session_id!r}")
        return chain

    def evidence_tool(self, tool_name: str, model: type[BaseModel]) -> Callable[..., Awaitable[EvidenceCall]]:
        """The MCP tool for one evidence tool; its input is the tool's own argument model."""

        async def call(arguments: BaseModel, session_id: EvidenceSession = None) -> EvidenceCall:
            return await anyio.to_thread.run_sync(self._gather, tool_name, arguments, session_id)

        # The SDK reads the input schema off the signature: this tool's arguments are ``model``.
        call.__annotations__["arguments"] = model
        call.__name__ = tool_name
        return call

    def _gather(self, tool_name: str, arguments: BaseModel, session_id: str | None) -> EvidenceCall:
        toolbox = self.assembly.pipeline.toolbox
        if toolbox is None:
            raise ToolError("no evidence tools are configured")
        session = self._evidence_session(session_id)
        runner = ToolRunner(self.assembly.store, toolbox, session)
        result = runner.run(tool_name, arguments.model_dump(mode="json", exclude_unset=True))
        return EvidenceCall(
            session_id=session,
            invocation_id=result.invocation_id,
            tool_name=result.tool_name,
            status=result.status,
            output=result.output.for_model(),
            error=result.output.error,
        )

    def _evidence_session(self, session_id: str | None) -> str:
        if session_id is None:
            opened = self.assembly.store.create_session(EVIDENCE_QUESTION).id
            with self._lock:
                self._evidence_sessions.add(opened)
            return opened
        with self._lock:
            ours = session_id in self._evidence_sessions
        if not ours:
            raise ToolError(
                f"session {session_id!r} takes no evidence calls: only evidence sessions this server opened do "
                "(omit session_id to open one)"
            )
        return session_id

    async def check_claims(
        self,
        session_id: CitedSession,
        document: ExecutorDocument,
    ) -> ClaimsCheck:
        raw = document if isinstance(document, str) else json.dumps(document, ensure_ascii=False)
        return await anyio.to_thread.run_sync(self._check, session_id, raw)

    def _check(self, session_id: str, raw: str) -> ClaimsCheck:
        store = self.assembly.store
        session = store.get_session(session_id)
        if session is None:
            raise ToolError(f"no session {session_id!r}")
        # The client's text enters as a model's does (redacted before it is read: a secret is
        # known by its key, which a rule's message quoting one of its words no longer shows),
        # and what is said back is redacted on the way out, as every other answer is.
        redactor = self.assembly.pipeline.redactor
        hook = verifier_input(
            session.query,
            redactor.redact_written(raw),
            session_id=session_id,
            round=1,
            invocations=store,
            gatekeeper=self.assembly.gatekeeper,
        )
        if not hook.parsed.ok or hook.report is None:
            status = hook.parsed.status
            raise ToolError(f"the document is not one JSON object ({status.status}): {status.detail}")
        report = hook.report
        return redactor.redact_data(
            ClaimsCheck(
                session_id=session_id,
                parse_status=hook.parsed.status,
                result=report.result,
                failed_rule_impacts=report.failed_rule_impacts,
                claim_traces=report.claim_traces,
                other_checks=report.other_checks,
            )
        )


def build_server(
    assembly: Assembly,
    *,
    concurrency: int,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer:
    """The server with every tool registered; ``token_verifier`` and ``auth`` for HTTP."""
    tools = VeridiagTools(assembly, concurrency=concurrency)
    server: MCPServer = MCPServer(
        "veridiag",
        version=__version__,
        instructions=INSTRUCTIONS,
        token_verifier=token_verifier,
        auth=auth,
        log_level="WARNING",
    )
    reading = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server.add_tool(
        tools.diagnose,
        name="diagnose",
        title="Diagnose an incident question",
        description="Diagnose a question from logs, metrics, changes and runbooks. Returns the verdict (PASS, "
        "LOW_CONFID, REJECT), the answer, each claim with the invocations it cites, and the session id "
        "(for get_audit).",
    )
    server.add_tool(
        tools.get_audit,
        name="get_audit",
        title="Audit chain of a session",
        description="How a session's answer was reached: final answer → composer → verifier → Gatekeeper → "
        "tool invocations (as `veridiag audit --json`).",
        annotations=reading,
    )
    for name, model in TOOL_ARGS.items():
        server.add_tool(
            tools.evidence_tool(name, model),
            name=name,
            description=f"{DESCRIPTIONS[name]} Stored as an invocation in an evidence session; cite its "
            "invocation_id and check the claims with check_claims.",
        )
    server.add_tool(
        tools.check_claims,
        name="check_claims",
        title="Check claims with the Gatekeeper",
        description="Run the Gatekeeper over an executor_evidence_v2 document against one session's tool "
        "invocations: every citation must name an invocation of that session, every excerpt must occur in "
        "it, every number and id must be grounded. Returns pass/warn/fail, the failed rules and, per "
        "claim, each check.",
        annotations=reading,
    )
    return server
