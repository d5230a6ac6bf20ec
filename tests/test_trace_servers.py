"""``query_traces`` over Jaeger's query API and Tempo's HTTP API (issue 29), against local fakes
written from their API documents (``tests/fake_traces.py``; no Jaeger or Tempo server installs
from the package registries this project uses): the requests they are sent, the figures they
give on the Nezha TrainTicket spans compared with the embedded backend's on the same spans,
generated span trees, the sample stated honestly, and every way a server fails as an error."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fake_traces import FakeJaeger, FakeTempo, b64, jaeger_trace, otlp_batches
from veridiag._retry import Backoff
from veridiag.analysis.traces import SpanFilter, TraceSpan
from veridiag.config import Settings
from veridiag.contracts.json import JsonObject
from veridiag.ingest.batch import import_trace_files
from veridiag.ingest.kubernetes import workload_of
from veridiag.ingest.spanfiles import SpanFileReport, read_span_file
from veridiag.tools.args import QueryTracesArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, SpanRow
from veridiag.tools.backends.jaeger import JaegerBackend
from veridiag.tools.backends.tempo import TempoBackend
from veridiag.tools.backends.tempo import trace_spans as tempo_spans
from veridiag.tools.factory import ConfigurationError, build_toolbox
from veridiag.tools.records import TraceEvidence
from veridiag.tools.results import ToolOutput
from veridiag.tools.spanjson import hex_id
from veridiag.tools.spans import TraceQuery

ROOT = Path(__file__).resolve().parents[1]
NEZHA_DAY = Path("nezha") / "trainticket-2023-01-29" / "trace"
FIXTURE = Path(__file__).parent / "fixtures" / "nezha_days" / "trainticket-2023-01-29" / "trace"
#: The minutes around "the travel page is slow at 10:05" and the hour before, as the sample has them.
MINUTES = ("09_30", "09_31", "09_32", "10_04", "10_05", "10_06")
WINDOW = {"start": "2023-01-29T10:03:00Z", "end": "2023-01-29T10:06:00Z"}
NOW = datetime(2023, 1, 29, 12, 0, tzinfo=UTC)
EVERY_TRACE = 10**6
JAEGER_URL, TEMPO_URL = "http://jaeger:16686", "http://tempo:3200"


def no_sleep(seconds: float) -> None:
    """Backoff waits, skipped: the tests count attempts, not seconds."""


def nezha_files() -> list[Path]:
    """The Nezha TrainTicket span CSVs: the shared sample's (``VERIDIAG_TEST_SAMPLES``, or
    ``shared/`` beside the repository) when the machine has it, else the repository's excerpt."""
    folders = [Path(os.environ["VERIDIAG_TEST_SAMPLES"])] if os.environ.get("VERIDIAG_TEST_SAMPLES") else []
    folders.append(ROOT.parent / "shared" / "samples")
    for folder in folders:
        found = [folder / NEZHA_DAY / f"{minute}_trace.csv" for minute in MINUTES]
        if all(path.is_file() for path in found):
            return found
    return sorted(FIXTURE.glob("*.csv"))


def nezha_spans(paths: list[Path]) -> list[TraceSpan]:
    """The files' spans as a server would hold them: each owned by its pod's workload."""
    spans: dict[tuple[str, str], TraceSpan] = {}
    for path in paths:
        for read in read_span_file(path, report=SpanFileReport()):
            spans[(read.trace_id, read.span_id)] = TraceSpan(
                trace_id=read.trace_id,
                span_id=read.span_id,
                parent_id=read.parent_id,
                service=workload_of(read.owner),
                operation=read.operation,
                start_ns=read.start_ns,
                end_ns=read.end_ns,
                error=read.error,
            )
    return list(spans.values())


def jaeger(fake: FakeJaeger | Callable[[httpx2.Request], httpx2.Response], **options: Any) -> JaegerBackend:
    return JaegerBackend(
        JAEGER_URL,
        transport=httpx2.MockTransport(fake),
        backoff=options.pop("backoff", Backoff(sleep=no_sleep)),
        **options,
    )


def tempo(fake: FakeTempo | Callable[[httpx2.Request], httpx2.Response], **options: Any) -> TempoBackend:
    return TempoBackend(
        TEMPO_URL,
        transport=httpx2.MockTransport(fake),
        backoff=options.pop("backoff", Backoff(sleep=no_sleep)),
        **options,
    )


def run(backend: Any, **args: Any) -> ToolOutput:
    return TraceQuery(backend, now=NOW).run(QueryTracesArgs.model_validate({**WINDOW, **args}))


def evidence(output: ToolOutput) -> TraceEvidence:
    assert output.status == "ok", output.text
    return next(e for e in output.evidence if isinstance(e, TraceEvidence))


# --- the Nezha spans: the same figures as the embedded backend's ------------------------------


class Nezha:
    """The sample's spans, a fake Jaeger and a fake Tempo holding them, and two embedded files:
    the CSVs imported as they are (ns), and the fake Jaeger's own answer imported as a Jaeger
    download (µs, as Jaeger keeps them)."""

    def __init__(self, folder: Path) -> None:
        self.paths = nezha_files()
        self.spans = nezha_spans(self.paths)
        self.jaeger = FakeJaeger(self.spans)
        self.tempo = FakeTempo(self.spans)
        self.csv = EmbeddedEnvironment(folder / "csv.db", load_demo=False)
        assert all(f.outcome == "imported" for f in import_trace_files(self.csv, self.paths).files)
        download = folder / "jaeger.json"
        traces = [jaeger_trace(trace_id, spans) for trace_id, spans in self.jaeger.traces.items()]
        download.write_text(json.dumps({"data": traces, "total": len(traces), "errors": None}))
        self.micros = EmbeddedEnvironment(folder / "micros.db", load_demo=False)
        assert all(
            f.outcome == "imported" for f in import_trace_files(self.micros, [download], fmt="jaeger-json").files
        )

    def services(self) -> list[str]:
        """The services with the most spans in the window, and ts-travel-service."""
        start, end = (datetime.fromisoformat(WINDOW[k].replace("Z", "+00:00")) for k in ("start", "end"))
        counts: dict[str, int] = {}
        for name in self.csv.trace_services():
            counts[name] = self.csv.span_stats(SpanFilter(service=name, start=start, end=end)).spans
        ranked = sorted((n for n in counts if counts[n]), key=lambda n: (-counts[n], n))[:2]
        return sorted({*ranked, *(["ts-travel-service"] if counts.get("ts-travel-service") else [])})


@pytest.fixture(scope="module")
def nezha(tmp_path_factory: pytest.TempPathFactory) -> Nezha:
    return Nezha(tmp_path_factory.mktemp("nezha"))


def figures(found: TraceEvidence, *, errors: bool = True) -> dict[str, tuple[Any, ...]]:
    return {
        f.name: (f.window, f.baseline, f.factor)
        for f in [*found.figures, *(f.model_copy(update={"name": f"callee {f.service}"}) for f in found.callees)]
        if errors or f.name != "errors"
    }


def calls(found: TraceEvidence, *, errors: bool = True) -> list[tuple[Any, ...]]:
    return [
        (c.caller, c.callee, c.calls, c.baseline_calls, *((c.errors, c.baseline_errors) if errors else ()))
        for c in found.calls
    ]


def slowest(found: TraceEvidence) -> list[tuple[Any, ...]]:
    return [
        (t.trace_id, t.span_ms, t.trace_ms, [(h.service, h.operation, h.critical_ms, h.self_ms) for h in t.path])
        for t in found.slowest
    ]


def test_jaeger_gives_the_embedded_backends_figures_on_the_same_spans(nezha: Nezha) -> None:
    """Every trace read: Jaeger's figures are the embedded file's of the same µs spans, line for
    line; against the CSVs' ns spans the counts and calls are the same and each time within the
    µs Jaeger rounds to."""
    backend = jaeger(nezha.jaeger, max_traces=EVERY_TRACE, max_response_bytes=2**30)
    services = nezha.services()
    assert services
    for service in services:
        found, same, exact = (
            evidence(run(backend, service=service)),
            evidence(run(nezha.micros, service=service)),
            (evidence(run(nezha.csv, service=service))),
        )
        assert [f.line for f in found.figures] == [f.line for f in same.figures], service
        assert [f.line for f in found.callees] == [f.line for f in same.callees], service
        assert [c.line for c in found.calls] == [c.line for c in same.calls], service
        assert slowest(found) == slowest(same), service
        assert found.traces is not None and not found.limit_reached
        now, then = figures(found, errors=False), figures(exact, errors=False)
        assert now.keys() == then.keys(), service
        assert now["spans"] == then["spans"], service
        for name in now.keys() - {"spans"}:
            for mine, theirs in zip(now[name][:2], then[name][:2], strict=True):
                assert (mine is None) == (theirs is None), (service, name)
                if mine is not None and theirs is not None:
                    assert mine == pytest.approx(theirs, abs=0.02), (service, name)
        assert calls(found, errors=False) == calls(exact, errors=False), service


def test_tempo_gives_the_embedded_backends_figures_on_the_same_spans(nezha: Nezha) -> None:
    """Every trace read: Tempo's OTLP spans are the CSVs' to the nanosecond, so every figure,
    call and critical path is the embedded file's (the CSVs state no status; OTLP says "unset",
    so only the error counts differ: none stated against 0)."""
    backend = tempo(nezha.tempo, max_traces=EVERY_TRACE, max_response_bytes=2**30)
    for service in nezha.services():
        found, exact = evidence(run(backend, service=service)), evidence(run(nezha.csv, service=service))
        assert figures(found, errors=False) == figures(exact, errors=False), service
        assert calls(found, errors=False) == calls(exact, errors=False), service
        assert slowest(found) == slowest(exact), service
        spans = found.figure("spans")
        errors = found.figure("errors")
        assert spans is not None and errors is not None and errors.window == 0.0
        assert exact.figure("errors") is not None and exact.figure("errors").window is None  # type: ignore[union-attr]


def test_the_figures_are_said_to_be_over_the_traces_read(nezha: Nezha) -> None:
    """A search that stops at its limit: the line every claim quotes says how many traces the
    figures are over and that more may match; the retrieval details say it too."""
    nezha.jaeger.requests.clear()
    backend = jaeger(nezha.jaeger, max_traces=5)
    output = run(backend, service="ts-gateway-service")
    found = evidence(output)
    assert found.traces == 5 and found.limit_reached
    assert "every figure is over the traces jaeger's search returned, not every span: 5 for the window" in found.line
    assert "(its limit: more may match)" in found.line
    assert found.line in output.text.splitlines()
    assert output.retrieval_details["traces_read"] == 5 and output.retrieval_details["limit_reached"] is True
    searches = [r for r in nezha.jaeger.requests if r.url.path == "/api/traces"]
    assert searches and all(r.url.params["limit"] == "5" for r in searches)
    earlier = str((1674986580 - 600) * 10**6)  # 10 minutes before the window
    assert not any(r.url.params["start"] == earlier for r in searches), "a window read in part: its calls alone"
    everything = evidence(run(jaeger(nezha.jaeger, max_traces=EVERY_TRACE), service="ts-gateway-service"))
    assert "(all that matched)" in everything.line and not everything.limit_reached
    spans_read, all_spans = found.figure("spans"), everything.figure("spans")
    assert spans_read is not None and all_spans is not None and spans_read.window < all_spans.window  # type: ignore[operator]


def test_jaeger_is_asked_as_its_query_api_reads_requests(nezha: Nezha) -> None:
    fake = FakeJaeger(nezha.spans)
    run(jaeger(fake, max_traces=50), service="ts-travel-service", operation="POST /api/v1/travelservice/trips/left")
    search = next(r for r in fake.requests if r.url.path == "/api/traces")
    params = search.url.params
    assert params["service"] == "ts-travel-service"
    assert params["operation"] == "POST /api/v1/travelservice/trips/left"
    assert int(params["start"]) == 1674986580 * 10**6  # 10:03:00 in µs
    assert int(params["end"]) == 1674986760 * 10**6 - 1  # both ends included: 1 µs before 10:06
    assert params["limit"] == "50"
    assert search.headers["accept"] == "application/json"


def test_tempo_is_asked_as_its_api_documents_say(nezha: Nezha) -> None:
    fake = FakeTempo(nezha.spans)
    output = run(tempo(fake, max_traces=20), service="ts-travel-service", operation="queryInfo")
    search = next(r for r in fake.requests if r.url.path == "/api/search")
    params = search.url.params
    assert params["q"] == '{ resource.service.name = "ts-travel-service" && name = "queryInfo" }'
    assert (params["start"], params["end"]) == ("1674986580", "1674986760")
    assert params["limit"] == "20" and params["spss"] == "1"
    reads = [r for r in fake.requests if r.url.path.startswith("/api/traces/")]
    assert all(r.headers["accept"] == "application/json" for r in reads)
    assert len({r.url.path for r in reads}) == len(reads), "a trace is read by id once"
    assert output.status in ("ok", "no_data"), output.text


def test_an_operation_the_service_lacks_is_answered_with_those_it_has(nezha: Nezha) -> None:
    for backend in (nezha.csv, jaeger(nezha.jaeger), tempo(nezha.tempo)):
        lacking = run(backend, service="ts-travel-service", operation="GET /nothing")
        assert lacking.status == "no_data", lacking.text
        assert "ts-travel-service has no operation 'GET /nothing'; its operations: " in lacking.text
        assert "TravelController.queryInfo" in lacking.text


def test_traces_tempo_found_but_could_not_read_are_not_counted_as_read(nezha: Nezha) -> None:
    """Half the traces a search returns are gone when read by id: the figures are over the half
    read, and the search still stopped at its limit."""
    found: list[str] = []

    def forgetful(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.startswith("/api/traces/"):
            found.append(request.url.path)
            if len(found) % 2 == 0:
                return httpx2.Response(404, text="trace not found")
        return nezha.tempo.answer(request)

    output = run(tempo(forgetful, max_traces=4), service="ts-travel-service")
    read = evidence(output)
    assert read.traces == 2 and read.limit_reached
    assert "not every span: 2 for the window (its limit: more may match)" in read.line


def test_tempo_v2_traces_read_as_v1_ones(nezha: Nezha) -> None:
    v1 = evidence(run(tempo(FakeTempo(nezha.spans)), service="ts-travel-service"))
    v2 = evidence(run(tempo(FakeTempo(nezha.spans, v2_traces=True)), service="ts-travel-service"))
    assert v1.figures == v2.figures and v1.calls == v2.calls and v1.line == v2.line


def test_tempo_ids_in_base64_read_as_hex() -> None:
    trace_id, span_id = "1ef9949724d3b5a57f2b70622fef43c8", "00d9cd9b6326f38c"
    assert hex_id(b64(trace_id)) == trace_id and hex_id(b64(span_id)) == span_id
    assert hex_id(trace_id.upper()) == trace_id and hex_id("not-an-id") == "not-an-id"
    span = TraceSpan(
        trace_id=trace_id, span_id=span_id, parent_id="", service="api", operation="GET", start_ns=10, end_ns=20
    )
    for key in ("batches", "resourceSpans"):
        body: JsonObject = json.loads(json.dumps({key: otlp_batches([span])}))
        assert [s._asdict() for s in tempo_spans(body)] == [span.model_dump(exclude={"self_ns"}) | {"error": False}]


# --- generated span trees ---------------------------------------------------------------------

T0 = 1_780_000_000 * 10**9  # 2026-05-28T20:26:40Z
US = 1000


@st.composite
def span_trees(draw: st.DrawFn) -> list[TraceSpan]:
    """A few traces of services a–d, µs-aligned (as Jaeger keeps times), over 20 minutes."""
    spans: list[TraceSpan] = []
    for t in range(draw(st.integers(1, 6))):
        trace_id = f"{t + 1:032x}"
        base = T0 + draw(st.integers(0, 20 * 60 * 10**6)) * US
        trace: list[TraceSpan] = []
        for index in range(draw(st.integers(1, 8))):
            if index == 0:
                start, length, parent = base, draw(st.integers(1, 500_000)) * US, ""
            else:
                owner = trace[draw(st.integers(0, index - 1))]
                start = owner.start_ns + draw(st.integers(0, owner.duration_ns // US)) * US
                length = draw(st.integers(0, max(0, (owner.end_ns - start) // US) + 200)) * US
                parent = owner.span_id
            trace.append(
                TraceSpan(
                    trace_id=trace_id,
                    span_id=f"{t + 1:08x}{index + 1:08x}",
                    parent_id=parent,
                    service=draw(st.sampled_from("abcd")),
                    operation=draw(st.sampled_from(["GET /x", "SELECT"])),
                    start_ns=start,
                    end_ns=start + length,
                    error=draw(st.booleans()),
                )
            )
        spans += trace
    return spans


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spans=span_trees(), service=st.sampled_from("abcd"), minutes=st.integers(1, 20))
def test_generated_traces_read_through_either_server_give_the_embedded_figures(
    tmp_path: Path, spans: list[TraceSpan], service: str, minutes: int
) -> None:
    path = tmp_path / f"{abs(hash((tuple(spans), service, minutes)))}.db"
    env = EmbeddedEnvironment(path, load_demo=False)
    env.add_spans(
        [
            SpanRow(s.trace_id, s.span_id, s.parent_id, s.service, s.operation, s.start_ns, s.end_ns, s.error)
            for s in spans
        ],
        source="generated",
        reach_key="generated",
    )
    start = datetime.fromtimestamp(T0 / 1e9, tz=UTC) + timedelta(minutes=minutes // 2)
    where = SpanFilter(service=service, start=start, end=start + timedelta(minutes=minutes))
    expected = env.span_stats(where)
    for backend in (jaeger(FakeJaeger(spans), max_traces=100), tempo(FakeTempo(spans), max_traces=100)):
        found = backend.span_stats(where)
        assert found.traces is not None and not found.limit_reached
        assert found.model_copy(update={"traces": None}) == expected
        assert sorted(backend.call_counts(where), key=repr) == sorted(env.call_counts(where), key=repr)
        mine = [[s.model_copy(update={"self_ns": None}) for s in t] for t in backend.slowest_traces(where, 3)]
        theirs = [[s.model_copy(update={"self_ns": None}) for s in t] for t in env.slowest_traces(where, 3)]
        assert [t[0].trace_id for t in mine] == [t[0].trace_id for t in theirs]
        assert [sorted(t, key=lambda s: s.span_id) for t in mine] == [
            sorted(t, key=lambda s: s.span_id) for t in theirs
        ]
    env.close()


# --- servers that cannot answer ---------------------------------------------------------------


def _refused_connection(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)


def _timed_out(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out", request=request)


BROKEN: dict[str, tuple[Callable[[httpx2.Request], httpx2.Response], str]] = {
    "down": (_refused_connection, "unavailable: ConnectError"),
    "slow": (_timed_out, "unavailable: timed out"),
    "500": (lambda r: httpx2.Response(500, text="internal error: storage unreachable"), "HTTP 500: internal error"),
    "not json": (lambda r: httpx2.Response(200, text="<html>proxy login</html>"), "not a JSON object"),
    "a list": (lambda r: httpx2.Response(200, json=[1, 2]), "not a JSON object"),
    "huge": (lambda r: httpx2.Response(200, content=b"{" + b" " * 5000 + b"}"), "more than the 4096 bytes read"),
    "huge, streamed": (
        lambda r: httpx2.Response(200, content=iter([b'{"data": [', b" " * 3000, b" " * 3000, b"]}"])),
        "more than the 4096 bytes read",
    ),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
@pytest.mark.parametrize("server", ["jaeger", "tempo"])
def test_a_server_that_cannot_answer_is_an_error_saying_why(kind: str, server: str) -> None:
    handler, said = BROKEN[kind]
    attempts: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        attempts.append(request)
        return handler(request)

    make = jaeger if server == "jaeger" else tempo
    output = run(make(answer, max_response_bytes=4096), service="ts-travel-service")
    assert output.status == "error", output.text
    assert said in (output.error or ""), output.error
    url = JAEGER_URL if server == "jaeger" else TEMPO_URL
    assert output.text.startswith("query_traces error: ") and f"{server} at {url}" in output.text
    retried = kind in ("down", "500")
    assert len(attempts) == (3 if retried else 1), kind  # connect errors and 5xx retried; never a timeout


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"data": "nope"}, "not Jaeger's trace JSON"),
        ({"data": [{"spans": "nope"}]}, "not Jaeger's trace JSON"),
        ({"data": None, "errors": [{"code": 500, "msg": "cassandra: no hosts available"}]}, "no hosts available"),
    ],
)
def test_jaeger_json_of_the_wrong_shape_is_an_error(body: dict[str, Any], said: str) -> None:
    output = run(jaeger(lambda r: httpx2.Response(200, json=body)), service="x")
    assert output.status == "error" and said in (output.error or ""), output.text


def test_a_malformed_span_is_left_out_not_the_trace() -> None:
    good = TraceSpan(
        trace_id="ab" * 16,
        span_id="cd" * 8,
        parent_id="",
        service="api",
        operation="GET",
        start_ns=T0,
        end_ns=T0 + 5 * 10**6,
    )
    trace = jaeger_trace(good.trace_id, [good])
    trace["spans"].append({"spanID": "", "startTime": "soon"})
    backend = jaeger(lambda r: httpx2.Response(200, json={"data": [trace], "errors": None}))
    start = datetime.fromtimestamp(T0 / 1e9, tz=UTC)
    stats = backend.span_stats(SpanFilter(service="api", start=start, end=start + timedelta(minutes=1)))
    assert stats.spans == 1 and stats.duration_p50 == 5.0


def test_tempo_traces_of_the_wrong_shape_or_not_found_are_an_error(nezha: Nezha) -> None:
    def odd(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.startswith("/api/traces/"):
            return httpx2.Response(200, json={"resource": "nope"})
        return nezha.tempo.answer(request)

    output = run(tempo(odd), service="ts-travel-service")
    assert output.status == "error" and "not an OTLP trace" in (output.error or ""), output.text

    def forgetful(request: httpx2.Request) -> httpx2.Response:
        if request.url.path.startswith("/api/traces/"):
            return httpx2.Response(404, text="trace not found")
        return nezha.tempo.answer(request)

    output = run(tempo(forgetful), service="ts-travel-service")
    assert output.status == "error" and "but none could be read by id" in (output.error or ""), output.text


def test_an_unknown_service_lists_the_servers_services_and_an_empty_window_says_so(nezha: Nezha) -> None:
    for backend in (jaeger(nezha.jaeger), tempo(nezha.tempo), tempo(FakeTempo(nezha.spans, v1_tags_only=True))):
        output = run(backend, service="ts-nowhere-service")
        assert output.status == "error" and "services with spans: " in output.text, output.text
        assert output.text.endswith(
            f"services with spans: {', '.join(nezha.jaeger.services[:20])}"
            + (" …" if len(nezha.jaeger.services) > 20 else "")
        )
        empty = run(backend, service="ts-travel-service", start="2023-01-29T03:00:00Z", end="2023-01-29T03:10:00Z")
        assert empty.status == "no_data", empty.text
        assert f"none of ts-travel-service's spans in the traces {backend.name} returned for the 7 days before now" in (
            empty.text
        )
        lacking = run(backend, service="ts-travel-service", operation="GET /nothing")
        assert (
            lacking.status == "no_data"
            and "ts-travel-service has no operation 'GET /nothing'; its operations: " in (lacking.text)
        )
        assert "TravelController.queryInfo" in lacking.text


# --- configuration ----------------------------------------------------------------------------


def test_the_settings_choose_the_trace_server(tmp_path: Path) -> None:
    home = {"home": tmp_path, "embedded": {"load_demo": False}}
    toolbox = build_toolbox(
        Settings.model_validate({**home, "tools": {"traces": "jaeger"}, "jaeger": {"url": JAEGER_URL}})
    )
    assert isinstance(toolbox.traces, JaegerBackend) and toolbox.traces.max_traces == 200
    toolbox.close()
    tempo_settings = {"url": TEMPO_URL, "bearer_token": "s3cret", "headers": {"X-Scope-OrgID": "team-a"}}
    settings = Settings.model_validate({**home, "tools": {"traces": "tempo"}, "tempo": tempo_settings})
    assert settings.live_backends
    toolbox = build_toolbox(settings)
    assert isinstance(toolbox.traces, TempoBackend) and toolbox.traces.max_traces == 100
    headers = toolbox.traces._client.headers
    assert headers["authorization"] == "Bearer s3cret" and headers["x-scope-orgid"] == "team-a"
    assert "s3cret" not in repr(settings) and "team-a" not in repr(settings)
    toolbox.close()
    with pytest.raises(ConfigurationError, match=r"jaeger\.url"):
        build_toolbox(Settings.model_validate({**home, "tools": {"traces": "jaeger"}}))


# --- the diagnosis reads spans from the server -------------------------------------------------


def test_the_offline_diagnosis_reads_the_trace_servers_spans_and_cites_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spans only in Jaeger (the embedded file holds none): the planner knows the server's
    services, the executor reads their spans through it, and the answer quotes its lines."""
    from veridiag.pipeline.factory import assemble
    from veridiag.tools import factory

    start = datetime(2026, 3, 1, 8, 30, tzinfo=UTC)
    spans: list[TraceSpan] = []
    for minute in range(120):
        own_ms = 50 if 90 <= minute < 100 else 5
        for k in range(4):
            at = ns_of(start + timedelta(minutes=minute, seconds=k * 10))
            trace = f"{minute:016x}{k:016x}"
            total = (own_ms + 10) * 10**6
            spans += [
                TraceSpan(trace_id=trace, span_id=f"{trace[:14]}g{k}", parent_id="", service="gateway",
                          operation="GET /trips", start_ns=at, end_ns=at + total + 2 * 10**6),
                TraceSpan(trace_id=trace, span_id=f"{trace[:14]}a{k}", parent_id=f"{trace[:14]}g{k}", service="api",
                          operation="queryTrips", start_ns=at + 10**6, end_ns=at + total + 10**6),
                TraceSpan(trace_id=trace, span_id=f"{trace[:14]}d{k}", parent_id=f"{trace[:14]}a{k}", service="db",
                          operation="SELECT", start_ns=at + 2 * 10**6, end_ns=at + 12 * 10**6),
            ]  # fmt: skip
    fake = FakeJaeger(spans)
    monkeypatch.setattr(factory, "trace_backend", lambda settings: jaeger(fake))
    settings = Settings.model_validate(
        {"home": tmp_path / "home", "embedded": {"load_demo": False}, "tools": {"traces": "jaeger"},
         "jaeger": {"url": JAEGER_URL}}
    )  # fmt: skip
    assembly = assemble(settings)
    try:
        result = assembly.pipeline.run("why is the trips page slow at 10:05 on 2026-03-01?")
        calls = assembly.store.list_invocations(result.session_id)
    finally:
        assembly.close()
    traced = [c for c in calls if c.tool_name == "query_traces" and c.status == "ok"]
    assert traced, [(c.tool_name, c.status, c.output[:200]) for c in calls]
    api = next(c for c in traced if c.arguments.get("service") == "api")
    assert (api.retrieval_details or {}).get("backend") == "jaeger"
    assert "every figure is over the traces jaeger's search returned" in api.output
    assert any(r.url.path == "/api/traces" and r.url.params["service"] == "api" for r in fake.requests)
    assert "api" in result.answer and "self time" in result.answer, result.answer


def ns_of(moment: datetime) -> int:
    return int(moment.timestamp()) * 10**9


def test_a_server_that_cannot_list_its_services_leaves_every_known_service_to_be_tried(tmp_path: Path) -> None:
    """The planner and the executor ask for the server's services: down, it is asked once in a
    minute (not once per question word), and every service the file knows is still tried, so
    each failed read is recorded and said to be a gap."""
    from veridiag.tools.catalogue import TracesElsewhere, offline_environment

    attempts: list[httpx2.Request] = []

    def down(request: httpx2.Request) -> httpx2.Response:
        attempts.append(request)
        return _refused_connection(request)

    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    at = T0
    env.add_spans([SpanRow("t1", "s1", "", "checkout", "GET /pay", at, at + 10**6, None)], source="x", reach_key="x")
    backend = jaeger(down)
    found = offline_environment(env, env, backend)
    assert isinstance(found, TracesElsewhere)
    assert found.trace_services() == env.services() == ["checkout"]
    assert found.services() == ["checkout"] and found.trace_services() == ["checkout"]
    assert len(attempts) == 3, "one listing, retried, then believed for a minute"
    assert offline_environment(env, env, env) is env
    env.close()


def test_the_runner_stores_a_servers_answer_or_its_failure_and_the_sample_line_grounds_a_claim(
    nezha: Nezha, tmp_path: Path
) -> None:
    from tests.builders import SESSION, binding, claim, invocation, v2
    from veridiag.contracts import InMemoryInvocations
    from veridiag.gatekeeper import Gatekeeper
    from veridiag.store import SessionStore
    from veridiag.tools.runner import Toolbox, ToolRunner

    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    args = {"service": "ts-travel-service", **WINDOW}
    for backend, status in ((jaeger(nezha.jaeger, max_traces=5), "ok"), (jaeger(_refused_connection), "error")):
        toolbox = Toolbox(logs=nezha.csv, metrics=nezha.csv, knowledge=nezha.csv, changes=nezha.csv, traces=backend)
        session = store.create_session("t").id
        result = ToolRunner(store, toolbox, session).run("query_traces", args)
        assert result.status == status, result.output.text
        (stored,) = store.list_invocations(session)
        assert stored.status == status and stored.output == result.output.text
    assert "jaeger at http://jaeger:16686 unavailable: ConnectError" in (stored.error or "")

    output = run(jaeger(nezha.jaeger, max_traces=5), service="ts-travel-service")
    head = evidence(output).line
    made = claim(
        text="ts-travel-service 的数据只来自 jaeger 返回的 5 条链路（窗口内 5 条，已达上限）",
        bindings=[binding([902], head, tool_name="query_traces")],
    )
    stored_call = invocation(
        902, "query_traces", output.text, arguments=args, retrieval_details=output.retrieval_details
    )
    report = Gatekeeper().validate(v2([made]), session_id=SESSION, invocations=InMemoryInvocations([stored_call]))
    assert list(report.result.failed_rules) == []


def test_over_real_http_a_server_answers_and_a_closed_port_is_down(nezha: Nezha) -> None:
    """The backends over a socket (the fakes behind a loopback HTTP server): the same figures as
    through a mock transport; a port nobody listens on is "unavailable", after its retries."""
    from tests.fake_traces import serving
    from tests.ports import free_port

    through_mock = evidence(run(jaeger(nezha.jaeger, max_traces=20), service="ts-travel-service"))
    with serving(FakeJaeger(nezha.spans)) as url, serving(FakeTempo(nezha.spans)) as tempo_url:
        over_http = evidence(run(JaegerBackend(url, max_traces=20), service="ts-travel-service"))
        over_tempo = evidence(run(TempoBackend(tempo_url, max_traces=20), service="ts-travel-service"))
    assert over_http.figures == through_mock.figures and over_http.calls == through_mock.calls
    assert over_tempo.figure("spans") == through_mock.figure("spans")
    closed = f"http://127.0.0.1:{free_port()}"
    down = run(JaegerBackend(closed, backoff=Backoff(sleep=no_sleep)), service="ts-travel-service")
    assert down.status == "error" and f"jaeger at {closed} unavailable: ConnectError" in (down.error or "")


def test_one_trace_by_its_id_reads_alike_from_jaeger_tempo_and_the_embedded_file(nezha: Nezha) -> None:
    """``query_traces trace_id=…`` (the trace a log line names) through either server: the
    services it reached, what the service called and its path, as the µs / ns files read them;
    an id no server holds is no data."""
    trace_id, spans = max(nezha.jaeger.traces.items(), key=lambda item: (len(item[1]), item[0]))
    service = spans[0].service
    lines = {}
    for name, backend in (
        ("jaeger", jaeger(nezha.jaeger)),
        ("tempo", tempo(nezha.tempo)),
        ("micros", nezha.micros),
        ("csv", nezha.csv),
    ):
        output = run(backend, service=service, trace_id=trace_id)
        assert output.status == "ok", (name, output.text)
        found = evidence(output)
        assert found.trace_id == trace_id.lower() and found.trace_spans == len(spans), name
        lines[name] = [found.reached_line, found.own_line]
    assert lines["jaeger"] == lines["micros"] and lines["tempo"] == lines["csv"] == lines["micros"]
    for backend in (jaeger(nezha.jaeger), tempo(nezha.tempo)):
        assert run(backend, service=service, trace_id="0" * 32).status == "no_data"
