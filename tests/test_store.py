"""The session store, on SQLite and on a real PostgreSQL (CI starts one)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from veridiag.store import MAX_STORED_OUTPUT, SessionStore, StoreError, database, open_store
from veridiag.store.database import current_revision, head_revision
from veridiag.store.models import SESSIONS, schema_metadata
from veridiag.tools import Toolbox, ToolRunner
from veridiag.tools.backends.embedded import EmbeddedEnvironment


def test_session_lifecycle(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("订单123支付失败，帮我看看原因", lang="zh")
    assert store.get_session(session.id) == session
    store.update_session(session.id, plan={"skill": "payment_timeout"}, rounds=1)
    done = store.finish_session(session.id, "completed", verdict="LOW_CONFID", final_answer="…")
    assert (done.status, done.verdict, done.plan, done.rounds) == (
        "completed",
        "LOW_CONFID",
        {"skill": "payment_timeout"},
        1,
    )
    assert done.updated_at >= done.created_at
    with pytest.raises(ValueError, match="not session fields"):
        store.update_session(session.id, nonsense=1)  # type: ignore[call-arg]  # an untyped caller
    with pytest.raises(KeyError):
        store.update_session("s-missing", status="failed")
    with pytest.raises(TypeError, match="does not take lang"):  # a completed session's fields only
        store.finish_session(session.id, "completed", final_answer="…", lang="en")
    assert store.get_session("s-missing") is None


def test_invocations_are_durable_and_scoped(store_url: str) -> None:
    store = SessionStore(store_url)
    first, second = store.create_session("a"), store.create_session("b")
    made = store.record_invocation(
        session_id=first.id,
        tool_name="query_logs",
        arguments={"service": "payment-service", "query": "超时"},
        status="ok",
        output="line 1\nline 2",
        retrieval_details={"matched": 2, "patterns": [{"count": 2}]},
        round=2,
        latency_ms=12.5,
    )
    other = store.record_invocation(
        session_id=second.id, tool_name="query_metrics", arguments={}, status="no_data", output=""
    )
    fresh = SessionStore(store_url)  # a new connection sees the committed rows
    found = fresh.get_invocations([made.id, other.id, 10**9, -1])
    assert set(found) == {made.id, other.id}
    assert found[made.id].session_id == first.id and found[other.id].session_id == second.id
    assert found[made.id].arguments == {"service": "payment-service", "query": "超时"}
    assert found[made.id].retrieval_details == {"matched": 2, "patterns": [{"count": 2}]}
    assert (found[made.id].round, found[made.id].latency_ms, found[made.id].output_preview) == (
        2,
        12.5,
        "line 1\nline 2",
    )
    assert [i.id for i in fresh.list_invocations(first.id)] == [made.id]
    with pytest.raises(KeyError):
        store.record_invocation(session_id="s-nope", tool_name="x", arguments={}, status="ok", output="")


def test_huge_output_is_stored_cut_with_a_flag(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("big")
    made = store.record_invocation(
        session_id=session.id, tool_name="query_logs", arguments={}, status="ok", output="x" * (MAX_STORED_OUTPUT + 10)
    )
    stored = store.get_invocations([made.id])[made.id]
    assert stored.output_truncated and len(stored.output) == MAX_STORED_OUTPUT


def test_listing_pages_and_filters(store_url: str) -> None:
    store = SessionStore(store_url)
    ids = [store.create_session(f"q{i}").id for i in range(5)]
    store.finish_session(ids[0], "completed", verdict="REJECT", final_answer="rejected: …")
    page = store.list_sessions(limit=2)
    assert len(page) == 2
    assert ids[0] in {s.id for s in store.list_sessions(limit=100, verdict="REJECT")}
    assert store.count_sessions(verdict="REJECT") >= 1


def test_migrations_are_idempotent(store_url: str) -> None:
    first = SessionStore(store_url)
    assert current_revision(first.engine) == head_revision()
    SessionStore(store_url)  # opening again migrates nothing and fails nothing
    assert current_revision(first.engine) == head_revision()


def test_the_tables_the_store_queries_are_the_ones_the_migrations_create(store_url: str) -> None:
    """``models.py`` and the migrations are written apart: alembic finds no difference between
    them — column types (JSONB on PostgreSQL), nullability, constraints, indexes."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    store = SessionStore(store_url)
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, schema_metadata()) == []


def test_the_schema_names_jsonb_and_the_partial_index_per_dialect() -> None:
    """What alembic cannot compare: the JSON columns' type per dialect as compiled, and the
    predicate of the partial index (declared by ``schema_metadata`` only)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.schema import CreateIndex, CreateTable

    indexes = schema_metadata().tables["diagnosis_session"].indexes
    (index,) = (i for i in indexes if i.name == "ix_diagnosis_session_uncompressed_audit")
    for url, json_type in (("sqlite://", "JSON"), ("postgresql+psycopg://", "JSONB")):
        dialect = make_url(url).get_dialect()()
        lines = {line.strip("\t ,") for line in str(CreateTable(SESSIONS).compile(dialect=dialect)).splitlines()}
        assert {f"audit {json_type}", f"deliveries {json_type}"} <= lines
        assert str(CreateIndex(index).compile(dialect=dialect)).endswith(
            "WHERE audit IS NOT NULL OR self_evaluation IS NOT NULL"
        )


def test_the_head_read_from_the_scripts_is_alembics(tmp_path: Path) -> None:
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(database.__file__).with_name("migrations")))
    assert head_revision() == ScriptDirectory.from_config(config).get_current_head() is not None
    engine = database.make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    with engine.connect() as connection:
        assert current_revision(engine) is None is MigrationContext.configure(connection).get_current_revision()
    database.upgrade(engine)
    with engine.connect() as connection:
        assert (
            current_revision(engine) == head_revision() == MigrationContext.configure(connection).get_current_revision()
        )


def test_bad_urls_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="invalid database URL"):
        open_store("not a url")
    with pytest.raises(StoreError):
        open_store("postgresql://nobody@127.0.0.1:1/nothing?connect_timeout=2")


class _Fixed:
    """A deterministic backend: output names the args, so mixing would show."""

    name = "fixed"

    def query_logs(self, args):  # type: ignore[no-untyped-def]
        from veridiag.tools.results import ToolOutput

        return ToolOutput(status="ok", text=f"logs for {args.service} query={args.query}")

    query_metrics = lookup_knowledge = query_logs


def test_fifty_concurrent_sessions_lose_nothing_and_mix_nothing(store_url: str) -> None:
    store = SessionStore(store_url)
    fixed = _Fixed()
    toolbox = Toolbox(logs=fixed, metrics=fixed, knowledge=fixed, changes=fixed)  # type: ignore[arg-type]
    barrier = threading.Barrier(50)

    def session_work(index: int) -> tuple[str, list[int]]:
        session = store.create_session(f"concurrent {index}")
        runner = ToolRunner(store, toolbox, session.id)
        barrier.wait()
        ids = [
            runner.run("query_logs", {"service": f"svc-{index}", "query": f"q{call}"}).invocation_id
            for call in range(6)
        ]
        return session.id, ids

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(session_work, range(50)))
    all_ids = [i for _s, ids in results for i in ids]
    assert len(set(all_ids)) == 300, "every call got its own id"
    stored = store.get_invocations(all_ids)
    assert len(stored) == 300, "no invocation lost"
    for index, (session_id, ids) in enumerate(results):
        assert [i.id for i in store.list_invocations(session_id)] == ids
        for call, invocation_id in enumerate(ids):
            record = stored[invocation_id]
            assert record.session_id == session_id
            assert record.output == f"logs for svc-{index} query=q{call}"


def test_an_explicit_id_does_not_make_later_inserts_collide(store_url: str) -> None:
    """Fixtures force ids; the database's own numbering must continue after them (on
    PostgreSQL a sequence does not notice explicit ids by itself)."""
    store = SessionStore(store_url)
    session = store.create_session("ids")

    def record(invocation_id: int | None = None) -> int:
        return store.record_invocation(
            session_id=session.id,
            tool_name="query_logs",
            arguments={},
            status="ok",
            output="x",
            invocation_id=invocation_id,
        ).id

    forced = record() + 5
    assert record(forced) == forced
    following = [record() for _ in range(3)]
    assert min(following) > forced and len(set(following)) == 3
    with pytest.raises(StoreError, match="cannot record invocation"):
        record(forced)  # an id already taken is refused, not overwritten
    assert record() > max(following)


def test_store_is_the_gatekeepers_invocation_source(store_url: str, demo_env: EmbeddedEnvironment) -> None:
    from veridiag.contracts.json import JsonObject
    from veridiag.gatekeeper import Gatekeeper

    store = SessionStore(store_url)
    session = store.create_session("订单123支付失败")
    result = ToolRunner(store, Toolbox(demo_env, demo_env, demo_env, demo_env), session.id).run(
        "query_logs", {"query": "order=123", "start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:30:00Z"}
    )
    output: JsonObject = {
        "answer_version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "claim-1",
                "claim_type": "symptom",
                "support_level": "direct",
                "claim_text": "订单123在 10:01:02 出现 ERR_TIMEOUT，耗时 5300ms。",
                "evidence_bindings": [
                    {
                        "source_type": "tool_trace",
                        "tool_name": "query_logs",
                        "source_invocation_ids": [result.invocation_id],
                        "evidence_excerpt": "order=123 ERR_TIMEOUT request timeout cost=5300ms",
                    }
                ],
            }
        ],
    }
    report = Gatekeeper().validate(output, session_id=session.id, invocations=store)
    assert report.result.status == "pass", report.result
    other = store.create_session("another")
    stolen = Gatekeeper().validate(output, session_id=other.id, invocations=store)
    assert "evidence.invocation_ref" in stolen.result.failed_rules
