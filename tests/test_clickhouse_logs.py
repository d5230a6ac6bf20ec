"""The ClickHouse log backend on the real engine (in-process chdb, no mock) with the OTel
exporter's ``otel_logs`` DDL: every query shape, the paths it reports, bound parameters, the
import, and the same verified answers as the embedded store on the demo day.

The engine opens one data directory per process, so every test here shares one (``chdb_path``)
and keeps to its own table; a second process is what shows a held directory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.builders import readable, thunderbird_lines
from tests.ports import free_port
from veridiag.cli.app import app
from veridiag.config import ClickHouseSettings, Settings
from veridiag.pipeline.factory import assemble
from veridiag.text.cjk import has_cjk
from veridiag.text.search import fallback_terms, search_terms
from veridiag.tools.args import QueryLogsArgs
from veridiag.tools.backends.clickhouse import ClickHouseLogs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, LogRow
from veridiag.tools.backends.otel_logs import Where, exporter_ddl
from veridiag.tools.records import LogEvidence

T0 = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)
HOSTILE = ["it's", 'say "hi"', "back\\slash", "'; DROP TABLE plain_logs; --", "{p0:String}", "naïve", "连接超时"]


def backend(path: Path, table: str, clock: datetime | None = None) -> ClickHouseLogs:
    return ClickHouseLogs(ClickHouseSettings(table=table), path, clock=(lambda: clock) if clock else None)


@pytest.fixture(scope="module")
def plain(chdb_path: Path) -> Iterator[ClickHouseLogs]:
    """A table made with the exporter's DDL alone, rows written as the exporter writes them."""
    logs = backend(chdb_path, "plain_logs", T0 + timedelta(hours=1))
    client = logs.client()
    client.command(exporter_ddl("default", "plain_logs", veridiag=False))
    rows: list[list[Any]] = []
    for minute in range(60):
        at = T0 + timedelta(minutes=minute, seconds=7)
        rows.append([at, "api", "INFO", 9, f"GET /cart/{minute} 200 in {minute + 3}ms", {}])
        if minute >= 30:  # errors start at 10:30
            rows.append([at, "api", "ERROR", 17, f"upstream timeout after {minute}ms order={minute * 7}", {}])
        if minute >= 40:
            rows.append([at, "db", "Error", 0, f"Lock wait timeout exceeded table=t_{minute % 2}", {}])
    for number, text in enumerate(HOSTILE):
        rows.append([T0 + timedelta(minutes=5, seconds=number), "odd", "WARN", 13, f"value {text} seen", {}])
    names = ["Timestamp", "ServiceName", "SeverityText", "SeverityNumber", "Body", "LogAttributes"]
    client.insert("plain_logs", rows, column_names=names)
    yield logs
    logs.close()


def evidence(output: Any) -> LogEvidence:
    (found,) = output.evidence
    assert isinstance(found, LogEvidence)
    return found


def test_the_exporter_table_is_read_without_template_column_or_token_index(plain: ClickHouseLogs) -> None:
    out = plain.query_logs(QueryLogsArgs(service="api", level="ERROR", start="now-1h"))
    assert out.status == "ok", out.text
    found = evidence(out)
    assert found.matched == 30 and found.by_level == {"ERROR": 30}
    assert "no template column" in out.text and "window by primary key" in out.text
    assert out.retrieval_details["backend"] == "clickhouse"
    paths = out.retrieval_details["paths"]
    assert isinstance(paths, list) and any("no template column" in str(path) for path in paths)
    # Lines that differ only in numbers are one template, masked at query time.
    (template,) = found.templates
    assert template.count == 30 and template.template == "upstream timeout after <n>ms order=<n>"
    assert template.example == "upstream timeout after 30ms order=210"
    assert (found.bursts[0].first, found.bursts[0].count) == (T0 + timedelta(minutes=30, seconds=7), 30)
    searched = plain.query_logs(QueryLogsArgs(query="TIMEOUT", start="now-1h"))
    assert "no token index on lower(Body)" in searched.text
    # Case-insensitive whole words; a level read from the severity number, else its text.
    assert evidence(searched).by_level == {"ERROR": 50}


def test_words_are_whole_tokens_and_phrases_keep_their_order(plain: ClickHouseLogs) -> None:
    def matched(query: str) -> int:
        return evidence(plain.query_logs(QueryLogsArgs(query=query, start="now-1h"))).matched

    assert matched("time") == 0, "a part of a word is not the word"
    assert matched("lock wait") == 20
    assert matched('"wait lock"') == 0 and matched('"lock wait"') == 20
    assert matched("t_1") == 10, "an underscore separates words, as FTS5 reads them"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_values_are_bound_never_formatted(plain: ClickHouseLogs, hostile: str) -> None:
    out = plain.query_logs(QueryLogsArgs(service="odd", query=hostile, start="now-1h"))
    assert out.status == "ok", out.text
    assert [sample.line for sample in evidence(out).samples] == [f"value {hostile} seen"]
    as_service = plain.query_logs(QueryLogsArgs(service=hostile, start="now-1h"))
    assert as_service.status == "no_data" and "services with logs: api, db, odd" in as_service.text
    assert plain.services() == ["api", "db", "odd"], "the table is still there"


def test_errors_per_service_per_minute_say_which_moved_first(plain: ClickHouseLogs) -> None:
    minutes = plain.error_minutes(T0, T0 + timedelta(hours=1))
    assert minutes["api"][0] == (T0 + timedelta(minutes=30), 1) and len(minutes["api"]) == 30
    assert minutes["db"][0] == (T0 + timedelta(minutes=40), 1)
    assert min(minutes, key=lambda service: minutes[service][0][0]) == "api"


def demo_rows() -> list[LogRow]:
    from veridiag.tools import demo

    return [LogRow(x.ts, x.service, x.level, x.line, x.message, x.component) for x in demo.bundled_environment().logs()]


@pytest.fixture(scope="module")
def demo_store(chdb_path: Path, demo_env: EmbeddedEnvironment) -> Iterator[ClickHouseLogs]:
    """The demo day's logs imported into ``demo_logs`` (exporter DDL + template column + index)."""
    logs = ClickHouseLogs(ClickHouseSettings(table="demo_logs"), chdb_path, clock=demo_env.now)
    written = logs.add_logs(demo_rows())
    assert written.added > 30_000 and written.duplicates == 0
    yield logs
    logs.close()


def test_an_import_is_idempotent_and_uses_its_template_column_and_index(demo_store: ClickHouseLogs) -> None:
    again = demo_store.add_logs(demo_rows()[:5000])
    assert (again.added, again.duplicates) == (0, 5000)
    layout = demo_store.detect()
    assert layout.template and layout.timestamp_time
    assert (layout.body_index, layout.words_indexed, layout.pair_index) == ("idx_body_words", True, "idx_body_pairs")
    assert layout.bigram_index == "idx_body_bigrams"
    assert demo_store.server_version() >= (26, 2), "the pinned engine has text indexes"
    out = demo_store.query_logs(QueryLogsArgs(query="timeout", start="now-3h"))
    assert "templates from column LogTemplateId" in out.text
    assert "words through text index idx_body_words on lower(Body)" in out.text
    phrase = demo_store.query_logs(QueryLogsArgs(query="connection refused", start="now-8h"))
    assert "phrases through word-pair text index idx_body_pairs" in phrase.text


@pytest.mark.parametrize(
    "args",
    [
        {"service": "order-service", "level": "ERROR", "start": "now-3h"},
        {"service": "payment-service", "start": "2026-07-07T08:00:00Z", "end": "2026-07-08T00:00:00Z"},
        {"service": "order-service", "query": "timeout", "start": "now-8h"},
        {"query": "timeout", "start": "now-8h"},
        {"query": "支付 失败", "start": "now-8h"},
        {"level": "WARN", "start": "now-1h", "limit": 5},
    ],
)
def test_every_shape_gives_the_embedded_stores_evidence(
    demo_store: ClickHouseLogs, demo_env: EmbeddedEnvironment, args: dict[str, Any]
) -> None:
    ours, theirs = demo_store.query_logs(QueryLogsArgs(**args)), demo_env.query_logs(QueryLogsArgs(**args))
    assert ours.status == theirs.status
    mine, embedded = evidence(ours), evidence(theirs)
    assert mine.matched == embedded.matched and mine.by_level == embedded.by_level
    assert mine.bursts == embedded.bursts
    assert [(t.template, t.count, t.first, t.last) for t in mine.templates] == [
        (t.template, t.count, t.first, t.last) for t in embedded.templates
    ]
    assert [s.ts for s in mine.samples] == [s.ts for s in embedded.samples]


@pytest.mark.parametrize(
    "question", ["订单123支付失败，帮我看看是什么原因", "Is the database why orders are slow after 15:00?"]
)
def test_the_demo_incidents_get_the_same_verified_answers_from_either_store(
    demo_store: ClickHouseLogs, chdb_path: Path, tmp_path: Path, question: str
) -> None:
    home = tmp_path / "home"
    answers = []
    for logs in ("embedded", "clickhouse"):
        settings = Settings(home=home, tools={"logs": logs}, clickhouse={"path": chdb_path, "table": "demo_logs"})
        assembly = assemble(settings)
        assert assembly.pipeline.toolbox is not None and assembly.pipeline.toolbox.logs.name == logs
        try:
            result = assembly.pipeline.run(question)
        finally:
            assembly.close()
        evaluation = readable(result.self_evaluation)["verifier_evaluation"]
        kept = {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
        claims = sorted(
            c["claim_text"] for c in evaluation["executor_structured_output"]["claims"] if c["claim_id"] in kept
        )
        answers.append((result.verdict, claims))
    assert answers[0][1], "the demo question has allowed claims"
    assert answers[0] == answers[1]


def test_import_logs_into_clickhouse_from_the_cli_and_a_held_directory_is_said(
    chdb_path: Path, demo_store: ClickHouseLogs, tmp_path: Path
) -> None:
    log = tmp_path / "app.log"
    log.write_text(
        "2026-07-07T10:00:01Z ERROR pool exhausted after 30000ms\n2026-07-07T10:00:02Z INFO request served\n"
    )
    environ = {**os.environ, "VERIDIAG_HOME": str(tmp_path / "home"), "VERIDIAG_EMBEDDED__LOAD_DEMO": "false"}
    command = [sys.executable, "-m", "veridiag", "data", "import-logs", str(log), "--service", "app"]
    own = {**environ, "VERIDIAG_CLICKHOUSE__PATH": str(tmp_path / "own")}
    done = subprocess.run(
        [*command, "--store", "clickhouse", "--json"], env=own, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert '"imported": 2' in done.stdout
    assert "preparing ClickHouse table otel_logs" in done.stderr and "added to" not in done.stderr, "a new table"
    # This process holds chdb_path open (demo_store): another one is told so, by pid.
    held = {**environ, "VERIDIAG_CLICKHOUSE__PATH": str(chdb_path)}
    refused = subprocess.run([*command, "--store", "clickhouse"], env=held, capture_output=True, text=True, check=False)
    assert refused.returncode != 0
    assert f"in use by PID: {os.getpid()}" in refused.stderr, refused.stderr


def test_without_the_extra_the_cli_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "app.log"
    log.write_text("2026-07-07T10:00:01Z ERROR x\n")
    monkeypatch.setitem(sys.modules, "clickhouse_connect", None)  # as if not installed
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    done = CliRunner().invoke(app, ["data", "import-logs", str(log), "--service", "a", "--store", "clickhouse"])
    assert done.exit_code != 0
    assert "pip install 'veridiag[clickhouse]'" in done.output


def test_a_server_that_does_not_answer_is_an_error_not_an_empty_answer(tmp_path: Path) -> None:
    """The HTTP path: the same backend, the client library's HTTP interface."""
    settings = ClickHouseSettings(url=f"http://127.0.0.1:{free_port()}", timeout_seconds=2)
    out = ClickHouseLogs(settings, tmp_path).query_logs(QueryLogsArgs(service="api"))
    assert out.status == "error" and out.error and out.error.startswith("clickhouse:")
    assert not out.evidence


def test_the_bench_times_every_shape_on_both_stores_with_the_same_counts(tmp_path: Path) -> None:
    """In a child process: the engine there opens the bench's own data directory."""
    script = (
        "import sys; from pathlib import Path; from veridiag.bench import clickhouse; "
        "print(clickhouse.run(lines=3000, repeats=1, cache=Path(sys.argv[1])).model_dump_json())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert set(report["shapes"]) == {
        "service_1h_errors",
        "service_24h_counts",
        "keyword_service_24h",
        "keyword_all_24h",
        "errors_per_service_minute_1h",
    }
    assert all(shape["same_counts"] for shape in report["shapes"].values()), report["shapes"]
    assert report["lines"] == 3000 and report["query_logs_p99_ms"] > 0


def test_a_service_only_the_clickhouse_table_holds_is_found_and_diagnosed(
    plain: ClickHouseLogs, chdb_path: Path, tmp_path: Path
) -> None:
    """A user points veridiag at an existing otel_logs table and nothing else: the planner finds
    the asked service among the table's services, and the answer rests on its lines."""
    settings = Settings(
        home=tmp_path / "home",
        embedded={"load_demo": False},
        tools={"logs": "clickhouse"},
        clickhouse={"path": chdb_path, "table": "plain_logs"},
    )
    assembly = assemble(settings)
    try:
        result = assembly.pipeline.run(f"api {T0:%Y-%m-%d} 为什么报错？")
    finally:
        assembly.close()
    assert result.verdict == "PASS", result.answer
    # the named service is examined with every other service that has data (issue 26), and said so
    assert result.answer.splitlines()[0].endswith("服务：窗口内有数据的全部 2 个服务（问题提到 api）。"), result.answer
    assert "共有 30 条 ERROR 日志" in result.answer and "upstream timeout after <n>ms" in result.answer


def test_lines_that_write_no_level_are_said_so_and_never_read_as_no_errors(chdb_path: Path, tmp_path: Path) -> None:
    """Imported lines without a level are stored as OTel's "unspecified" (0, no text), read as
    INFO, counted in the window; the answer says the logs write no level instead of confirming
    "no ERROR lines" — as on the embedded file (tests/test_log_levels.py)."""
    from veridiag.ingest.importers import import_logs

    settings = Settings(
        home=tmp_path / "home",
        embedded={"load_demo": False},
        tools={"logs": "clickhouse"},
        clickhouse={"path": chdb_path, "table": "tbird_logs"},
    )
    log = tmp_path / "tbird.log"
    log.write_text("\n".join(thunderbird_lines()) + "\n", encoding="utf-8")
    store = ClickHouseLogs(ClickHouseSettings(table="tbird_logs"), chdb_path)
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    try:
        assert import_logs(env, log, service="tbird", logs=store).imported == 60
        ((unspecified,),) = store._rows("SELECT countIf(SeverityNumber = 0 AND SeverityText = '') FROM tbird_logs", {})
        assert unspecified == 60
    finally:
        store.close()
        env.close()
    assembly = assemble(settings)
    try:
        result = assembly.pipeline.run("tbird 2005-11-09 有什么错误？")
        audit = readable(result.self_evaluation)["verifier_evaluation"]
    finally:
        assembly.close()
    assert result.verdict == "PASS", result.answer
    assert "没有 ERROR 日志" not in result.answer
    assert "的日志大多不写级别（60 条中 60 条没有级别" in result.answer and "Bind to port" in result.answer
    said = json.dumps(audit["tool_trace_summary"], ensure_ascii=False)
    assert "levels: 60 of the 60 lines of tbird in the window write no level (read as INFO)" in said


def test_a_logql_query_is_refused_the_same_way_by_both_stores(plain: ClickHouseLogs, tmp_path: Path) -> None:
    embedded = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    try:
        asked = QueryLogsArgs(logql='{service="api"} |= "timeout"')
        refusals = [store.query_logs(asked) for store in (plain, embedded)]
    finally:
        embedded.close()
    assert all(r.status == "error" and r.error == "logql needs the loki backend" for r in refusals)
    assert (
        refusals[0].text
        == refusals[1].text
        == "query_logs error: logql needs the loki backend; use service/query/level"
    )


def test_the_offline_roles_see_the_tables_services_and_its_data_end(plain: ClickHouseLogs, tmp_path: Path) -> None:
    """What the planner anchors "the last hour" to, with logs only in the table: the minute after
    its newest line, of one service or of the whole table (one statement, not one per service)."""
    from veridiag.tools.catalogue import LogsElsewhere, offline_environment

    embedded = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    try:
        environment = offline_environment(embedded, plain)
        assert isinstance(environment, LogsElsewhere)
        assert offline_environment(embedded, embedded) is embedded
        assert environment.services() == ["api", "db", "odd"]
        assert environment.data_end("api") == environment.data_end() == T0 + timedelta(hours=1)
        assert environment.data_end("odd") == T0 + timedelta(minutes=6)
        assert environment.data_end("nobody") is None
        span = plain.table_span()
        assert span is not None and span.last == T0 + timedelta(minutes=59, seconds=7)
    finally:
        embedded.close()


#: Words, and what may stand between them: FTS5's separators, an underscore, a non-ASCII letter
#: (part of a word to ``hasToken``), a middle dot and the pair joiner itself (planted).
WORDS = ["t", "stock", "lock", "wait", "timeout", "db", "7", "支付", "超时", "订单号", "付"]
GAPS = [" ", "_", "-", ". ", "=", "超", "·", "\ue000", "  "]


def _bodies(count: int, seed: int = 5) -> list[str]:
    import random

    rng = random.Random(seed)
    return [
        "".join(
            rng.choice(WORDS).upper() if rng.random() < 0.2 else rng.choice(WORDS) + rng.choice(GAPS)
            for _ in range(rng.randint(1, 7))
        )
        for _ in range(count)
    ]


TWIN_BODIES = _bodies(400)


@pytest.fixture(scope="module")
def twins(chdb_path: Path) -> tuple[ClickHouseLogs, ClickHouseLogs]:
    """The same lines in a plain exporter table (words and phrases read line by line) and in one
    with veridiag's text indexes (read from the word and word-pair indexes)."""
    pair = (
        backend(chdb_path, "twin_plain", T0 + timedelta(hours=1)),
        backend(chdb_path, "twin_indexed", T0 + timedelta(hours=1)),
    )
    client = pair[0].client()
    rows = [[T0 + timedelta(seconds=n), "svc", "INFO", 9, body, {}] for n, body in enumerate(TWIN_BODIES)]
    names = ["Timestamp", "ServiceName", "SeverityText", "SeverityNumber", "Body", "LogAttributes"]
    for logs, ours in zip(pair, (False, True), strict=True):
        client.command(exporter_ddl("default", logs.settings.table, veridiag=ours))
        client.insert(logs.settings.table, rows, column_names=names)
    assert not pair[0].layout.pair_index and pair[1].layout.pair_index and pair[1].layout.words_indexed
    return pair


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(words=["t", "t"], joiner=" ", quoted=True)  # a non-ASCII letter between is not a gap
@example(words=["t", "stock"], joiner="_", quoted=False)
@example(words=["lock", "wait", "timeout"], joiner=" ", quoted=True)
@example(words=["支付", "超时"], joiner=" ", quoted=True)
@example(words=["订单号"], joiner=" ", quoted=False)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    joiner=st.sampled_from([" ", "_", "-", "."]),
    quoted=st.booleans(),
)
def test_the_text_indexes_find_what_reading_every_line_finds(
    twins: tuple[ClickHouseLogs, ClickHouseLogs], words: list[str], joiner: str, quoted: bool
) -> None:
    query = joiner.join(words)
    query = f'"{query}"' if quoted else query
    args = QueryLogsArgs(query=query, start="2026-07-07T09:00:00Z", end="2026-07-07T11:00:00Z", limit=500)
    found = [logs.query_logs(args) for logs in twins]  # every matched line listed: at most 500 here
    expected = [body for body in TWIN_BODIES if _has_terms(body, search_terms(query))]
    fallback = fallback_terms(query) if not expected and has_cjk(query) else []
    if fallback:  # no line holds the Chinese words: the English ones are searched instead
        expected = [body for body in TWIN_BODIES if _has_terms(body, [part.split(" ") for part in fallback])]
    for out in found:
        assert (out.status, [s.line for s in evidence(out).samples]) == ("ok" if expected else "no_data", expected)
        assert evidence(out).matched == len(expected), query


def _has_terms(body: str, terms: list[list[str]]) -> bool:
    """The reference: every term's words stand together, in order, among the line's words (ASCII
    letters and digits, non-ASCII characters part of a word; ASCII case ignored)."""
    lowered = body.encode().lower().decode()
    words = re.findall(r"[0-9a-z\u0080-\U0010ffff]+", lowered)
    for term in terms:
        if any(not word.isascii() and word.lower() not in body.lower() for word in term):
            return False  # a Chinese word: anywhere in the line
        wanted = [token for word in term if word.isascii() for token in re.findall(r"[0-9a-z]+", word.lower())]
        if not any(words[at : at + len(wanted)] == wanted for at in range(len(words))):
            return False
    return True


def _plan(logs: ClickHouseLogs, where: Where) -> str:
    sql = f"EXPLAIN actions=1 SELECT count() FROM {logs.layout.name} WHERE {where.sql}"
    return "\n".join(row[0] for row in logs.client().query(sql, parameters=where.params).result_rows)


def test_a_two_word_phrase_is_read_from_the_indexes_alone(twins: tuple[ClickHouseLogs, ClickHouseLogs]) -> None:
    """The plan: the window by the primary key, words and pairs from the text indexes, no line's
    Body read (no regex), so a frequent phrase costs what its postings cost."""
    indexed = twins[1]
    where = Where(indexed.layout).window(0, 2_000_000_000_000).terms([["t", "stock"]])
    plan = _plan(indexed, where)
    assert "__text_index_idx_body_pairs_hasToken" in plan and "idx_body_words" not in plan, "the pair alone"
    assert "match(" not in plan and "Timestamp >=" not in plan.replace("TimestampTime >=", "")
    three = Where(indexed.layout).window(0, 1).terms([["lock", "wait", "timeout"]])
    assert any("match(" in clause for clause in three.clauses), "three words still check their order"
    chinese = Where(indexed.layout).window(0, 2_000_000_000_000).terms([["支付"]])
    plan = _plan(indexed, chinese)
    assert "__text_index_idx_body_bigrams_hasAllTokens" in plan and "position" not in plan.lower()
    assert not chinese.reads_lines and three.reads_lines
    longer = Where(indexed.layout).terms([["订单号"]])
    assert longer.reads_lines and any("positionCaseInsensitiveUTF8" in clause for clause in longer.clauses)


def test_a_table_an_earlier_veridiag_made_gets_the_text_indexes(chdb_path: Path) -> None:
    logs = backend(chdb_path, "older_import", T0 + timedelta(hours=1))
    rows = [LogRow(T0 + timedelta(seconds=n), "svc", "ERROR", body, body) for n, body in enumerate(_bodies(200, 9))]
    assert logs.add_logs(rows).added == 200
    client = logs.client()
    for name in ("idx_body_words", "idx_body_pairs", "idx_body_bigrams"):  # as the previous release created it
        client.command(f"ALTER TABLE older_import DROP INDEX {name}")
    client.command(
        "ALTER TABLE older_import ADD INDEX idx_body_lower lower(Body) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8"
    )
    before = logs.detect()
    assert (before.body_index, before.words_indexed, before.pair_index) == ("idx_body_lower", False, None)
    ask = QueryLogsArgs(query="t stock", start="2026-07-07T09:00:00Z", end="2026-07-07T11:00:00Z")
    was = evidence(logs.query_logs(ask)).matched
    assert logs.create_tables() == ["idx_body_words", "idx_body_pairs", "idx_body_bigrams"]
    assert logs.create_tables() == [], "once"
    after = logs.layout
    assert (after.body_index, after.words_indexed, after.pair_index) == ("idx_body_words", True, "idx_body_pairs")
    assert after.bigram_index == "idx_body_bigrams"
    assert evidence(logs.query_logs(ask)).matched == was > 0


def test_a_table_veridiag_did_not_make_keeps_its_indexes(plain: ClickHouseLogs) -> None:
    assert plain.create_tables() == []
    assert plain.layout.body_index is None and plain.layout.pair_index is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    window=st.tuples(
        st.integers(min_value=0, max_value=20 * 3600),
        st.integers(min_value=1, max_value=6 * 3600),
        st.sampled_from([0, 250]),
    ),
    service=st.sampled_from([None, "order-service", "payment-service"]),
    level=st.sampled_from([None, "ERROR", "WARN"]),
)
def test_whole_minutes_from_the_per_minute_table_equal_every_line_read(
    demo_store: ClickHouseLogs, chdb_path: Path, window: tuple[int, int, int], service: str | None, level: str | None
) -> None:
    start, seconds, milli = window
    begin = datetime(2026, 7, 7, tzinfo=UTC) + timedelta(seconds=start, milliseconds=milli)
    args = QueryLogsArgs(
        service=service, level=level, start=begin.isoformat(), end=(begin + timedelta(seconds=seconds)).isoformat()
    )
    line_by_line = backend(chdb_path, "demo_logs")
    line_by_line._layout = replace(demo_store.layout, minutes=False)  # the same table, read without its rollup
    ours, theirs = demo_store.query_logs(args), line_by_line.query_logs(args)
    assert ours.status == theirs.status
    if ours.status == "ok":
        assert "whole minutes counted from the per-minute table demo_logs_minutes" in ours.text
        assert evidence(ours).model_dump(exclude={"line"}) == evidence(theirs).model_dump(exclude={"line"})
        assert ours.retrieval_details["counts_over_time"] == theirs.retrieval_details["counts_over_time"]


def test_a_search_more_lines_match_than_are_read_describes_the_first_minutes(
    twins: tuple[ClickHouseLogs, ClickHouseLogs], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted exactly from the indexes, described for the lines of the first minutes up to the
    cap, as the embedded store describes its first lines; a search that reads lines reads all."""
    import veridiag.tools.backends.clickhouse as backend_module

    monkeypatch.setattr(backend_module, "LOOKUP_CAP", 40)
    args = QueryLogsArgs(query="stock", start="2026-07-07T09:00:00Z", end="2026-07-07T11:00:00Z")
    at = [n for n, body in enumerate(TWIN_BODIES) if _has_terms(body, [["stock"]])]
    last_minute = at[39] // 60  # the lines are a second apart from 10:00:00
    described = [n for n in at if n // 60 <= last_minute]
    indexed, plain = twins[1].query_logs(args), twins[0].query_logs(args)
    assert evidence(indexed).matched == evidence(plain).matched == len(at) > len(described)
    assert indexed.retrieval_details["counted"] == sum(evidence(indexed).by_level.values()) == len(described)
    assert f"{len(at)} lines match; only the first {len(described)} in time order were read" in indexed.text
    assert evidence(indexed).bursts[-1].last < T0 + timedelta(minutes=last_minute + 1)
    assert "counted" not in plain.retrieval_details, "a table without the indexes reads every line anyway"


def test_a_server_older_than_text_indexes_gets_the_token_index(
    chdb_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """25.8 is an LTS release: the table is made with the token bloom filter, and phrases are
    checked in the lines, as before the text indexes."""
    logs = backend(chdb_path, "older_server", T0 + timedelta(hours=1))
    monkeypatch.setattr(logs, "server_version", lambda: (25, 8))
    rows = [LogRow(T0 + timedelta(seconds=n), "svc", "INFO", body, body) for n, body in enumerate(TWIN_BODIES)]
    assert logs.add_logs(rows).added == len(TWIN_BODIES)
    layout = logs.layout
    assert (layout.body_index, layout.words_indexed, layout.pair_index, layout.bigram_index) == (
        "idx_body_lower",
        False,
        None,
        None,
    )
    assert layout.minutes, "the per-minute counts need no text index"
    ask = QueryLogsArgs(query='"t stock"', start="2026-07-07T09:00:00Z", end="2026-07-07T11:00:00Z")
    assert evidence(logs.query_logs(ask)).matched == sum(_has_terms(b, [["t", "stock"]]) for b in TWIN_BODIES)
    assert logs.create_tables() == []


def test_container_records_keep_their_trace_and_span_as_attributes(chdb_path: Path, tmp_path: Path) -> None:
    """nezha's container log CSV into ClickHouse: pods as services, trace and span ids in
    ``LogAttributes`` (a user's table need not have the exporter's TraceId / SpanId)."""
    from veridiag.ingest.importers import import_logs

    log = Path(__file__).parent / "fixtures" / "nezha" / "trainticket" / "log" / "09_30_log.csv"
    store = ClickHouseLogs(ClickHouseSettings(table="container_logs"), chdb_path)
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    try:
        report = import_logs(env, log, service=None, logs=store)
        assert report.imported == report.traced == 19
        ((traced, services),) = store._rows(
            "SELECT countIf(LogAttributes['trace_id'] != '' AND LogAttributes['span_id'] != ''),"
            " uniqExact(ServiceName) FROM container_logs",
            {},
        )
        assert (traced, services) == (19, len(report.services))
    finally:
        store.close()
        env.close()
