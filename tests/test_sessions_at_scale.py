"""Sessions at scale: listings along the (created_at, id) index without the audit, keyset
pages, and audits stored compact (references to invocation text) and, once older, compressed —
read back exactly as they were written."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import event, null, select, text, update
from typer.testing import CliRunner

from veridiag.agents.engines import offline_roles
from veridiag.api import create_app
from veridiag.cli.app import app as cli
from veridiag.config import Settings
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.parsing import parse_executor_output
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.audit import audit_chain
from veridiag.pipeline.factory import assemble
from veridiag.store import SessionStore, audit_storage
from veridiag.store.audit_storage import InvocationTexts, compact, hydrate
from veridiag.store.database import _alembic_config
from veridiag.store.models import SESSIONS
from veridiag.store.repository import session_cursor
from veridiag.tools import Toolbox
from veridiag.tools.backends.embedded import EmbeddedEnvironment

QUESTION = "订单123支付失败，帮我看看是什么原因"


@contextmanager
def statements(store: SessionStore) -> Iterator[list[tuple[str, Any]]]:
    """The SQL the store sends while the block runs."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        seen.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", record)


def query_plan(store: SessionStore, statement: str, parameters: Any) -> str:
    with store.engine.connect() as connection:
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
    return "\n".join(str(row[-1]) for row in rows)


def _stored_columns(store: SessionStore, session_id: str) -> Any:
    """The three audit columns as the database holds them (typed: JSON read as JSON)."""
    columns = (SESSIONS.c.self_evaluation, SESSIONS.c.audit, SESSIONS.c.audit_zlib)
    with store.engine.connect() as connection:
        return connection.execute(select(*columns).where(SESSIONS.c.id == session_id)).one()


def _created(store: SessionStore, at: datetime, *session_ids: str) -> None:
    """Move sessions in time (through the typed column, so SQLite stores the store's format)."""
    with store.engine.begin() as connection:
        connection.execute(update(SESSIONS).where(SESSIONS.c.id.in_(session_ids)).values(created_at=at))


def _age(store: SessionStore, session_id: str, days: int) -> None:
    _created(store, datetime.now(UTC) - timedelta(days=days), session_id)


def test_a_demo_audit_reads_back_exactly_compact_compressed_and_as_written_before(
    store_url: str, demo_env: EmbeddedEnvironment
) -> None:
    store = SessionStore(store_url)
    toolbox = Toolbox(logs=demo_env, metrics=demo_env, knowledge=demo_env, changes=demo_env)
    result = DiagnosisPipeline(store, offline_roles(demo_env, store), toolbox=toolbox).run(QUESTION)
    assert result.status == "completed"
    written: dict[str, Any] = dict(result.self_evaluation or {})  # JSON read as JSON here
    sqlite = store_url.startswith("sqlite")

    def as_read() -> tuple[dict[str, Any], str]:
        session = store.get_session(result.session_id)
        assert session is not None and session.self_evaluation is not None
        chain = audit_chain(store, result.session_id)
        assert chain is not None
        document = chain.model_dump(mode="json")
        return session.self_evaluation, json.dumps(document, ensure_ascii=False, sort_keys=not sqlite)

    fresh, chain = as_read()
    assert fresh == written
    if sqlite:  # PostgreSQL's JSONB orders keys its own way (as it always did)
        assert json.dumps(fresh, ensure_ascii=False) == json.dumps(written, ensure_ascii=False)

    # Compact: no copy of the trace summaries, matched spans or the parsed Executor output.
    stored = _stored_columns(store, result.session_id)
    assert stored.self_evaluation is None and stored.audit_zlib is None
    compact_text = json.dumps(stored.audit, ensure_ascii=False)
    full_text = json.dumps(written, ensure_ascii=False)
    for entry in written["verifier_evaluation"]["tool_trace_summary"]:
        if len(entry["output_summary"]) > 200:
            assert json.dumps(entry["output_summary"], ensure_ascii=False) not in compact_text
    # What compaction saves is at least those copies (a ratio of the whole would move with every
    # Gatekeeper rule added: its report is stored as written).
    copies = sum(
        len(json.dumps(entry["output_summary"], ensure_ascii=False))
        for entry in written["verifier_evaluation"]["tool_trace_summary"]
        if len(entry["output_summary"]) > 200
    )
    assert copies > 10_000 and len(full_text) - len(compact_text) >= copies

    # Older: compressed, read back the same. (Counts are not asserted: on PostgreSQL other
    # tests' sessions share the database.)
    store.compress_older_audits()
    assert _stored_columns(store, result.session_id).audit_zlib is None  # today's stays plain JSON
    _age(store, result.session_id, days=2)
    fresh, chain = as_read()  # the chain shows the new creation time
    assert fresh == written
    assert store.compress_older_audits() >= 1
    stored = _stored_columns(store, result.session_id)
    assert stored.audit is None and stored.self_evaluation is None
    assert len(stored.audit_zlib) < 40_000 < len(full_text.encode())
    assert as_read() == (fresh, chain)
    assert store.compress_older_audits() == 0

    # Written before migration 0003: the full JSON in ``self_evaluation``, read as it is…
    with store.engine.begin() as connection:
        connection.execute(
            update(SESSIONS)
            .where(SESSIONS.c.id == result.session_id)
            .values(self_evaluation=written, audit_zlib=null())
        )
    assert as_read() == (fresh, chain)
    # … and compressed (made compact on the way) by the same maintenance step.
    assert store.compress_older_audits() >= 1
    assert _stored_columns(store, result.session_id).audit_zlib is not None
    assert _stored_columns(store, result.session_id).self_evaluation is None
    assert as_read() == (fresh, chain)


def test_a_value_that_looks_like_a_reference_is_stored_escaped() -> None:
    texts = {1: InvocationTexts(output="line one\nline two", output_preview="line one", error=None)}
    audit: dict[str, Any] = {
        "verifier_evaluation": {
            "round": 1,
            "executor_structured_output": {"$ref": {"raw_of_round": 1}},  # what a model wrote
            "tool_trace_summary": [
                {"invocation_ids": [1], "output_summary": "line one"},
                {"invocation_ids": [2], "output_summary": "not stored here"},
            ],
        },
        "rounds": [
            {
                "round": 1,
                "executor_raw_output": '{"claims": []}',
                "gatekeeper_trace": [
                    {
                        "checks": [
                            {
                                "matched_span": {
                                    "invocation_id": 1,
                                    "source": "output",
                                    "start": 9,
                                    "end": 17,
                                    "text": "line two",
                                }
                            },
                            {
                                "matched_span": {
                                    "invocation_id": 1,
                                    "source": "output",
                                    "start": 0,
                                    "end": 4,
                                    "text": "lime",
                                }
                            },
                        ]
                    }
                ],
            }
        ],
    }
    spans = [check["matched_span"] for check in audit["rounds"][0]["gatekeeper_trace"][0]["checks"]]
    spans[0]["text"], spans[1]["text"] = "line two", "lime"
    stored: Any = compact(audit, texts)  # read as JSON below
    assert stored["verifier_evaluation"]["tool_trace_summary"][0]["output_summary"] == {
        "$ref": {"invocation": 1, "field": "output", "chars": 8}
    }
    checks = stored["rounds"][0]["gatekeeper_trace"][0]["checks"]
    assert checks[0]["matched_span"]["text"] == {"$ref": "span"}
    assert checks[1]["matched_span"]["text"] == "lime"  # not what the invocation holds: kept
    assert hydrate(stored, texts) == audit
    assert audit["verifier_evaluation"]["tool_trace_summary"][0]["output_summary"] == "line one"  # not changed


def test_a_span_that_names_no_place_keeps_its_copy() -> None:
    """Only a span at a real place of a plain invocation field becomes a reference; ids that
    are booleans, negative offsets or a rendered source keep the text."""
    texts = {1: InvocationTexts(output="line one", output_preview="line one", error=None)}
    spans: list[JsonValue] = [
        {"invocation_id": True, "source": "output", "start": 0, "end": 4, "text": "line"},
        {"invocation_id": 1, "source": "output", "start": -4, "end": 8, "text": "one"},
        {"invocation_id": 1, "source": "context", "start": 0, "end": 4, "text": "line"},
        {"invocation_id": 1, "source": "output_preview", "start": 5, "end": 8, "text": "one"},
    ]
    audit: JsonObject = {
        "rounds": [{"round": 1, "gatekeeper_trace": [{"checks": [{"matched_span": s} for s in spans]}]}]
    }
    stored: Any = compact(audit, texts)
    kept = [check["matched_span"]["text"] for check in stored["rounds"][0]["gatekeeper_trace"][0]["checks"]]
    assert kept == ["line", "one", "line", {"$ref": "span"}]
    assert hydrate(stored, texts) == audit


def test_an_audit_column_holding_no_object_reads_as_no_audit(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    session = store.create_session("q")
    with store.engine.begin() as connection:  # by hand: the store writes objects only
        connection.execute(update(SESSIONS).where(SESSIONS.c.id == session.id).values(audit=[1, 2]))
    found = store.get_session(session.id)
    assert found is not None and found.self_evaluation is None


def test_listing_reads_only_list_columns_along_the_index(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    made = [store.create_session(f"q{i}") for i in range(5)]
    with statements(store) as seen:
        first = store.list_sessions(limit=2)
        store.list_sessions(limit=2, cursor=session_cursor(first[-1]))
        store.list_sessions(limit=2, verdict="PASS")
    listings = [(sql, params) for sql, params in seen if "FROM diagnosis_session" in sql]
    assert len(listings) == 3
    for sql, params in listings:
        assert not any(json_column in sql for json_column in ("self_evaluation", "audit", "plan", "llm_usage"))
        plan = query_plan(store, sql, params)
        assert "created_at_id" in plan, plan
        assert "TEMP B-TREE" not in plan, plan  # no sort: the index gives the order
    assert all(record.self_evaluation is None for record in first)
    assert [s.id for s in first] == [s.id for s in reversed(made)][:2]
    store.update_session(made[-1].id, plan={"skill": "x"})
    store.complete_session(made[-1].id, verdict="PASS", final_answer="the answer", self_evaluation={"rounds": []})
    (listed,) = store.list_sessions(limit=1)
    assert (listed.final_answer, listed.plan, listed.self_evaluation) == ("the answer", None, None)
    (detailed,) = store.list_sessions(limit=1, details=True)  # what `veridiag sessions --json` prints
    assert (detailed.final_answer, detailed.plan, detailed.self_evaluation) == ("the answer", {"skill": "x"}, None)


def test_keyset_pages_visit_every_session_once_newest_first(store_url: str) -> None:
    store = SessionStore(store_url)
    mark = secrets.token_hex(4)  # this test's sessions only (PostgreSQL's database is shared)
    ids = [store.create_session(f"page {mark} {i}").id for i in range(7)]
    _created(store, datetime.now(UTC) - timedelta(hours=1), *ids[1:4])  # ties are ordered by id
    everything = [s.id for s in store.list_sessions(limit=100, search=mark)]
    assert set(everything) == set(ids)
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = store.list_sessions(limit=2, cursor=cursor, search=mark)
        if not page:
            break
        pages.append([s.id for s in page])
        cursor = session_cursor(page[-1])
    assert [i for page in pages for i in page] == everything
    offsets = range(0, len(everything), 2)
    by_offset = [s.id for offset in offsets for s in store.list_sessions(limit=2, offset=offset, search=mark)]
    assert by_offset == everything
    tied = [i for i in everything if i in ids[1:4]]
    assert tied == sorted(ids[1:4], reverse=True)
    with pytest.raises(ValueError, match="not a session cursor"):
        store.list_sessions(cursor="yesterday")


def test_compression_finds_older_audits_through_its_index(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'veridiag.db'}")  # where the CLI finds it
    old, new, unfinished = (store.create_session(q) for q in ("old", "new", "running"))
    for session in (old, new):
        store.complete_session(session.id, verdict=None, final_answer="a", self_evaluation={"rounds": []})
    _age(store, old.id, days=3)
    _age(store, unfinished.id, days=3)
    with statements(store) as seen:
        assert store.compress_older_audits(limit=10) == 1
    select = next((sql, params) for sql, params in seen if sql.lstrip().startswith("SELECT"))
    assert "ix_diagnosis_session_uncompressed_audit" in query_plan(store, *select)
    assert _stored_columns(store, old.id).audit_zlib is not None
    assert _stored_columns(store, new.id).audit_zlib is None
    assert store.get_session(old.id).self_evaluation == {"rounds": []}  # type: ignore[union-attr]

    result = CliRunner().invoke(cli, ["db", "compact", "--older-than-days", "0"], env={"VERIDIAG_HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert "compressed 1 " in result.output
    assert _stored_columns(store, new.id).audit_zlib is not None


def test_migration_0003_keeps_audits_written_before_it_and_downgrades_them_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = SessionStore(url)
    session = store.create_session("q")
    store.record_invocation(session_id=session.id, tool_name="query_logs", arguments={}, status="ok", output="x\ny")
    summary: list[JsonValue] = [{"invocation_ids": [1], "output_summary": "x"}]
    audit: JsonObject = {"verifier_evaluation": None, "rounds": [{"round": 1, "tool_trace_summary": summary}]}
    store.complete_session(session.id, verdict=None, final_answer="a", self_evaluation=audit)
    _age(store, session.id, days=2)
    assert store.compress_older_audits() == 1
    config = _alembic_config(store.engine)
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0002")
    with store.engine.connect() as connection:
        legacy = connection.execute(text("SELECT self_evaluation FROM diagnosis_session")).scalar_one()
    assert json.loads(legacy) == audit
    with store.engine.connect() as connection:  # no cascade (read as rows: this code's table has later columns)
        kept = connection.execute(text("SELECT session_id FROM tool_invocation")).scalars().all()
    assert kept == [session.id]
    reopened = SessionStore(url)  # migrates up again: the row is read as written before 0003
    assert reopened.get_session(session.id).self_evaluation == audit  # type: ignore[union-attr]


def test_the_api_pages_by_cursor_and_keeps_offset_pages(tmp_path: Path) -> None:
    assembly = assemble(Settings(home=tmp_path))
    made = [assembly.store.create_session(f"api page {i}").id for i in range(5)]
    client = TestClient(create_app(Settings(home=tmp_path), assembly=assembly), base_url="http://localhost")
    seen: list[str] = []
    page = client.get("/api/v1/sessions", params={"limit": 2}).json()
    while True:
        assert page["total"] == 5 and len(page["items"]) <= 2
        seen += [item["id"] for item in page["items"]]
        if page["next_cursor"] is None:
            break
        page = client.get("/api/v1/sessions", params={"limit": 2, "cursor": page["next_cursor"]}).json()
    assert seen == made[::-1]
    by_offset = client.get("/api/v1/sessions", params={"limit": 2, "offset": 2}).json()
    assert [item["id"] for item in by_offset["items"]] == seen[2:4] and by_offset["offset"] == 2
    assert client.get("/api/v1/sessions", params={"cursor": "not-one"}).status_code == 422


def test_the_sessions_benchmark_smoke() -> None:
    """A short run of ``veridiag bench --only sessions``: its keys, and that what it compares
    holds (the keyset page is the offset page; the compact form is smaller than the old one)."""
    from veridiag.bench import sessions as bench

    result = bench.run(sessions=300, repeats=3, baseline_sessions=50)
    assert result.sessions == 300 and result.pages_agree is True
    assert 1 <= result.uncompressed_sessions <= 10  # the last of 100 days stays plain JSON
    for value in (result.list_p50_ms, result.list_p99_ms, result.keyset_page_p50_ms, result.get_compressed_p50_ms):
        assert value > 0
    audit = result.audit_bytes
    assert audit.compressed < audit.compact < audit.before
    assert 0 < result.bytes_per_session < result.bytes_per_session_before


_MEMBER = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_LEAF = st.one_of(st.integers(-5, 5), st.text(alphabet='ab 1:日志"', max_size=8), st.booleans(), st.none())


@settings(deadline=None)
@given(
    written=st.dictionaries(_MEMBER, st.lists(_LEAF, max_size=3), min_size=1, max_size=4),
    filled=st.lists(_MEMBER, max_size=2),
)
def test_a_structured_output_is_a_reference_only_to_a_reply_that_parses_to_it(
    written: dict[str, list[Any]], filled: list[str]
) -> None:
    """The pipeline keeps the parsed reply with the optional arrays a model left out filled in: a
    reply that never writes such a member is not parsed again to find that out (it cannot parse
    to the copy), and the copy reads back exactly either way."""
    structured: dict[str, Any] = {**written, **{name: [] for name in filled if name not in written}}
    parses: list[str] = []

    def parse(raw: str) -> Any:
        parses.append(raw)
        return parse_executor_output(raw)

    raw = json.dumps(written)
    audit: JsonObject = {
        "rounds": [{"round": 1, "executor_raw_output": raw}],
        "verifier_evaluation": {"round": 1, "executor_structured_output": structured},
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(audit_storage, "parse_executor_output", parse)
        stored: Any = compact(audit, {})
    kept = stored["verifier_evaluation"]["executor_structured_output"]
    assert (kept == {"$ref": {"raw_of_round": 1}}) == (structured == written)
    assert bool(parses) == (structured == written)
    assert hydrate(stored, {}) == audit
