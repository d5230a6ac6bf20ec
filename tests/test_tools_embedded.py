"""The embedded backend on the bundled demo day: useful answers, clear no-data and errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.builders import readable
from veridiag.text.render import invocation_json
from veridiag.tools import LookupKnowledgeArgs, QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.knowledge import RunbookError
from veridiag.tools.records import LogEvidence, MetricEvidence

INCIDENT = {"start": "2026-07-07T10:00:00Z", "end": "2026-07-07T10:30:00Z"}


def model_lines_are_stored(output_text: str, model_text: str) -> bool:
    stored = set(output_text.split("\n"))
    return all(line in stored for line in model_text.split("\n"))


def test_demo_loads_on_first_use(demo_env: EmbeddedEnvironment) -> None:
    assert demo_env.now().isoformat() == "2026-07-07T16:00:00+00:00"
    assert demo_env.services() == ["gateway", "inventory-service", "mysql", "order-service", "payment-service", "redis"]
    assert ("payment-service", "hikaricp_connections_active", "connections") in demo_env.metrics("payment-service")


def test_logs_find_the_order_from_a_chinese_question(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_logs(QueryLogsArgs(query="订单123", start="2026-07-07T09:00:00Z"))
    assert out.status == "ok"
    assert "searched 'order 123' instead" in out.text
    assert readable(out.retrieval_details)["matched"] == 2
    assert "order=123 ERR_TIMEOUT request timeout cost=5300ms" in out.text
    assert model_lines_are_stored(out.text, out.for_model())


def test_logs_summarise_patterns_with_a_verbatim_example(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_logs(QueryLogsArgs(service="payment-service", level="ERROR", limit=5, **INCIDENT))
    assert out.status == "ok"
    details = readable(out.retrieval_details)
    top = details["patterns"][0]
    assert top["template"] == "order=<*> ERR_TIMEOUT request timeout cost=<*>ms", "mined at import from the message"
    assert top["example"] in out.text and top["example"].startswith("2026-07-07T10:")
    (evidence,) = out.evidence
    assert isinstance(evidence, LogEvidence) and evidence.templates[0].count == top["count"]
    assert evidence.templates[0].line in out.text.split("\n") and evidence.line in out.text.split("\n")
    assert details["by_level"] == {"ERROR": details["matched"]}
    # the lines asked for and no more, stored as shown, and how many of the matched they are
    assert len(evidence.samples) == 5 and f"showing 5 of {details['matched']} lines (limit 5)" in out.text
    assert model_lines_are_stored(out.text, out.for_model())


def test_unknown_service_says_what_exists(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_logs(QueryLogsArgs(service="billing-service"))
    assert out.status == "no_data"
    assert "billing-service" in out.text and "payment-service" in out.text


def test_invalid_window_is_an_error(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_logs(QueryLogsArgs(start="2026-07-07T11:00:00Z", end="2026-07-07T10:00:00Z"))
    assert out.status == "error" and "must be before" in (out.error or "")
    with pytest.raises(ValueError, match=r"neither ISO-8601"):
        QueryLogsArgs(start="yesterday-ish")


def test_no_matching_lines_is_no_data(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_logs(QueryLogsArgs(query="kafka rebalance", **INCIDENT))
    assert out.status == "no_data" and "matched 0 lines" in out.text


def test_metrics_judge_the_window_against_the_series_history(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_metrics(
        QueryMetricsArgs(service="payment-service", metric="hikaricp_connections_active", **INCIDENT)
    )
    assert out.status == "ok"
    details = readable(out.retrieval_details)
    assert details["max"] == 50 and details["unit"] == "connections"
    assert details["baseline_median"] < 20
    assert "max 50 connections" in out.text and "history 2026-07-07T08:00:00Z" in out.text
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence)
    (anomaly,) = series.anomalies
    assert anomaly.direction == "up" and anomaly.onset.isoformat() == "2026-07-07T10:00:00+00:00"
    assert anomaly.line in out.text.split("\n") and anomaly.peak_line in out.text.split("\n")
    assert model_lines_are_stored(out.text, out.for_model())


def test_stored_details_keep_the_format_older_sessions_were_written_in(demo_env: EmbeddedEnvironment) -> None:
    """Retrieval details are stored and grounded in: typed now, the same JSON (names, order,
    windows and bursts as arrays)."""
    logs = demo_env.query_logs(QueryLogsArgs(service="payment-service", level="ERROR", **INCIDENT))
    details = readable(logs.retrieval_details)
    grounded = ["backend", "matched", "by_level", "window", "bursts", "unparsed", "patterns"]
    # Added last and drawn only (issue 17): the text facts are grounded in leaves it out.
    assert list(details) == [*grounded, "counts_over_time"]
    assert list(json.loads(invocation_json(details))) == sorted(grounded)
    assert details["window"] == ["2026-07-07T10:00:00Z", "2026-07-07T10:30:00Z"]
    first, last, count = details["bursts"][0]
    assert first <= last and isinstance(count, int) and count > 0
    assert list(details["patterns"][0]) == ["template", "count", "example"]
    metrics = demo_env.query_metrics(
        QueryMetricsArgs(service="payment-service", metric="hikaricp_connections_active", **INCIDENT)
    )
    details = readable(metrics.retrieval_details)
    assert list(details) == [
        "backend",
        "unit",
        "points",
        "window",
        "min",
        "max",
        "avg",
        "last",
        "peak_at",
        "baseline_median",
        "anomalies",
    ]
    assert list(details["anomalies"][0]) == ["onset", "end", "peak_at", "peak", "factor"]
    assert details["anomalies"][0]["onset"] == "2026-07-07T10:00:00Z"


def test_metric_peak_time_is_reported(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_metrics(
        QueryMetricsArgs(
            service="mysql",
            metric="mysql_lock_wait_p99_seconds",
            start="2026-07-07T14:30:00Z",
            end="2026-07-07T16:00:00Z",
        )
    )
    assert out.status == "ok"
    assert "2026-07-07T15:" in readable(out.retrieval_details)["peak_at"]


LEAK = {"start": "2026-07-07T11:30:00Z", "end": "2026-07-07T13:00:00Z"}


def test_a_sparse_counter_reads_as_its_increase_per_step(demo_env: EmbeddedEnvironment) -> None:
    """The demo's restart counter: +1 at 12:01, 12:31 and 13:00 (the window's end), each counted
    once — not a level that "rose to 2", nor five points of a 5m rate per restart."""
    args = QueryMetricsArgs(service="inventory-service", metric="pod_restarts_total", start=LEAK["start"])
    out = demo_env.query_metrics(args.model_copy(update={"end": "2026-07-07T13:30:00Z"}))
    assert out.status == "ok", out.text
    first = out.text.split("\n")[0]
    assert "kind=counter kind_from='name ends in _total' shown=increase[1m]" in first
    assert "shown_from='each step adds a few whole events (at most 1)'" in first
    line = "increases per 1m: 3 restarts in total, 3 steps rose: " + ", ".join(
        f"+1 at 2026-07-07T{at}:00Z" for at in ("12:01", "12:31", "13:00")
    )
    assert line in out.text.split("\n")
    details = readable(out.retrieval_details)
    assert (details["unit"], details["max"], details["points"]) == ("restarts", 1.0, 120)
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence) and series.metric_kind == "counter" and series.increases is not None
    assert series.increases.line == line and series.increases.total == 3
    assert [(s.at.strftime("%H:%M"), s.by, s.line) for s in series.increases.steps] == [
        (at, 1.0, f"2026-07-07T{at}:00Z 1 restarts") for at in ("12:01", "12:31", "13:00")
    ]
    assert all(step.line in out.text.split("\n") for step in series.increases.steps), "each step's point is kept"
    after = demo_env.query_metrics(
        args.model_copy(update={"start": "2026-07-07T13:01:00Z", "end": "2026-07-07T16:00:00Z"})
    )
    assert "increases per 1m: 0 restarts in total, 0 steps rose" in after.text, "no reset after the window"


def test_a_counter_asked_as_its_rate_reads_as_prometheus_rates_it(demo_env: EmbeddedEnvironment) -> None:
    """Two pulses of one restart per 5 minutes in the window — the same facts Prometheus' rate() gives (CI)."""
    args = QueryMetricsArgs(service="inventory-service", metric="pod_restarts_total", function="rate", **LEAK)
    out = demo_env.query_metrics(args)
    assert "shown=rate[5m] shown_from='asked for'" in out.text.split("\n")[0]
    details = readable(out.retrieval_details)
    assert details["unit"] == "restarts/s" and details["max"] == pytest.approx(1 / 300)
    assert "max 0.0033 restarts/s" in out.text
    (series,) = out.evidence
    assert isinstance(series, MetricEvidence) and series.increases is None
    assert [(a.onset.strftime("%H:%M"), a.end.strftime("%H:%M")) for a in series.anomalies] == [
        ("12:01", "12:05"),
        ("12:31", "12:35"),
    ]


def test_a_gauge_is_shown_as_stored_and_says_so(demo_env: EmbeddedEnvironment) -> None:
    args = QueryMetricsArgs(service="inventory-service", metric="jvm_heap_used_mb", function="rate", **LEAK)
    out = demo_env.query_metrics(args)
    first = out.text.split("\n")[0]
    assert "kind=gauge kind_from='name has no counter or histogram suffix'" in first and "shown=" not in first
    assert readable(out.retrieval_details)["unit"] == "MB"


def test_histogram_buckets_need_the_prometheus_backend(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_metrics(QueryMetricsArgs(service="gateway", metric="http_request_duration_seconds_bucket"))
    assert out.status == "error" and "le label" in out.text and "prometheus backend" in out.text


def test_unknown_metric_lists_the_service_metrics(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_metrics(QueryMetricsArgs(service="payment-service", metric="gc_pause_ms"))
    assert out.status == "no_data" and "hikaricp_connections_active" in out.text
    missing = demo_env.query_metrics(QueryMetricsArgs(service="payment-service"))
    assert missing.status == "error" and "needs service and metric" in missing.text


def test_window_outside_the_data_is_no_data(demo_env: EmbeddedEnvironment) -> None:
    out = demo_env.query_metrics(
        QueryMetricsArgs(
            service="redis", metric="redis_ops_per_second", start="2026-07-01T00:00:00Z", end="2026-07-01T01:00:00Z"
        )
    )
    assert out.status == "no_data" and "data covers 2026-07-07T08:00:00Z" in out.text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("超时 连接池", "rb-db-pool-exhaustion"),
        ("内存泄漏 重启", "rb-jvm-oom"),
        ("锁等待", "rb-mysql-lock-wait"),
        ("gateway 504 upstream timed out", "rb-gateway-timeout"),
        ("error spike after deploy", "rb-bad-deploy"),
    ],
)
def test_knowledge_search_in_chinese_and_english(demo_env: EmbeddedEnvironment, query: str, expected: str) -> None:
    out = demo_env.lookup_knowledge(LookupKnowledgeArgs(query=query, limit=3))
    assert out.status == "ok"
    assert expected in [d["id"] for d in readable(out.retrieval_details)["documents"]]
    assert "hypotheses to check, not facts" in out.text
    assert model_lines_are_stored(out.text, out.for_model())


def test_knowledge_without_match(demo_env: EmbeddedEnvironment) -> None:
    assert demo_env.lookup_knowledge(LookupKnowledgeArgs(query="量子纠缠")).status == "no_data"


def test_user_runbooks_override_bundled_ones(tmp_path: Path) -> None:
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "pool.md").write_text(
        "---\nid: rb-db-pool-exhaustion\ntitle: 我们自己的连接池手册\nservices: [payment-service]\n"
        "symptoms: [连接池]\n---\n## 步骤\n先看 Grafana 面板 payments-db。\n",
        encoding="utf-8",
    )
    env = EmbeddedEnvironment(tmp_path / "env.db", runbook_dir=folder)
    out = env.lookup_knowledge(LookupKnowledgeArgs(query="连接池"))
    assert "我们自己的连接池手册" in out.text and "payments-db" in out.text
    (folder / "broken.md").write_text("no front matter here", encoding="utf-8")
    with pytest.raises(RunbookError, match=r"broken\.md"):
        env.index_knowledge()


def test_the_index_follows_runbook_changes_without_kb_index(tmp_path: Path) -> None:
    """A new release's runbooks and files added to the user folder are indexed at the next
    start; a broken user file is left out with its reason instead of stopping start-up."""
    path, folder = tmp_path / "env.db", tmp_path / "runbooks"
    folder.mkdir()
    env = EmbeddedEnvironment(path, runbook_dir=folder)
    with env.connect() as conn:  # as an older release would have left it
        conn.execute("UPDATE kb_doc SET body = '## Steps\n1. stale' WHERE id = 'rb-db-pool-exhaustion'")
        conn.execute("UPDATE meta SET value = 'older release' WHERE key = 'kb_fingerprint'")
    (folder / "kafka.md").write_text(
        "---\nid: rb-kafka-lag\ntitle: Kafka 消费积压 / Kafka consumer lag\nsymptoms: [kafka lag]\n---\n"
        "## Steps\n1. Check consumer group lag.\n",
        encoding="utf-8",
    )
    (folder / "broken.md").write_text("no front matter here", encoding="utf-8")
    reopened = EmbeddedEnvironment(path, runbook_dir=folder)
    pool = reopened.lookup_knowledge(LookupKnowledgeArgs(query="连接池 超时", limit=1))
    assert "stale" not in pool.text and "maximum-pool-size" in pool.text
    kafka = reopened.lookup_knowledge(LookupKnowledgeArgs(query="kafka lag", limit=1))
    assert readable(kafka.retrieval_details)["documents"][0]["id"] == "rb-kafka-lag"
    assert len(reopened.skipped_runbooks) == 1 and "broken.md" in reopened.skipped_runbooks[0]
    with pytest.raises(RunbookError, match=r"broken\.md"):
        reopened.index_knowledge()  # `kb index` still says what is wrong


def test_a_reader_never_sees_the_runbook_index_half_rebuilt(tmp_path: Path) -> None:
    """A server keeps answering while another process sharing its home starts after an upgrade
    changed the runbooks and re-indexes them: every look-up meanwhile finds the runbook, from the
    old index or the new one — not an empty index, nor a missing ``kb_fts``."""
    path = tmp_path / "env.db"
    serving = EmbeddedEnvironment(path)
    statuses: list[str] = []
    starting = threading.Event()

    def answer() -> None:
        while not starting.is_set() or len(statuses) < 20:
            statuses.append(serving.lookup_knowledge(LookupKnowledgeArgs(query="连接池 超时", limit=1)).status)

    reader = threading.Thread(target=answer)
    reader.start()
    for _ in range(3):  # three upgrades in a row, each start re-indexing
        with serving.connect() as conn:  # as an older release would have left it
            conn.execute("UPDATE meta SET value = 'older release' WHERE key = 'kb_fingerprint'")
        EmbeddedEnvironment(path)
    starting.set()
    reader.join()
    assert set(statuses) == {"ok"}, f"{statuses.count('ok')} of {len(statuses)} look-ups found the runbook"


def test_a_broken_runbook_does_not_stop_the_first_start(tmp_path: Path) -> None:
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "broken.md").write_bytes(b"\xff not UTF-8")
    env = EmbeddedEnvironment(tmp_path / "env.db", runbook_dir=folder)  # loads the demo, then indexes
    assert len(env.skipped_runbooks) == 1 and "not UTF-8" in env.skipped_runbooks[0]
    assert env.lookup_knowledge(LookupKnowledgeArgs(query="连接池 超时")).status == "ok"


def test_reopening_does_not_reload(tmp_path: Path) -> None:
    path = tmp_path / "env.db"
    first = EmbeddedEnvironment(path)
    count = first._connection().execute("SELECT COUNT(*) FROM log_line").fetchone()[0]
    second = EmbeddedEnvironment(path)
    assert second._connection().execute("SELECT COUNT(*) FROM log_line").fetchone()[0] == count > 30_000


def test_close_closes_every_threads_connection_and_a_later_call_reopens(tmp_path: Path) -> None:
    """``veridiag ask`` freezes its objects, so nothing closes a connection at exit but
    ``close``: the tool threads' connections too, and SQLite then removes its WAL file."""
    import sqlite3
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "env.db"
    env = EmbeddedEnvironment(path)
    mine = env._connection()
    with ThreadPoolExecutor(max_workers=1) as pool:
        theirs = pool.submit(env._connection).result()
        assert theirs is not mine
        assert tmp_path.joinpath("env.db-wal").exists()
        env.close()
        for conn in (mine, theirs):
            with pytest.raises(sqlite3.ProgrammingError, match="closed"):
                conn.execute("SELECT 1")
        assert not tmp_path.joinpath("env.db-wal").exists()
        reopened = pool.submit(env._connection).result()
    assert reopened.execute("SELECT COUNT(*) FROM log_line").fetchone()[0] > 30_000
    assert env._connection() is not mine


def test_a_gone_threads_connection_is_not_kept_for_close(tmp_path: Path) -> None:
    """A server's worker threads come and go: ``close`` tracks their connections weakly, so a
    gone thread's is collected as before (a connection and its statement cache hold each other:
    the collector frees it) instead of staying open in the list."""
    import gc
    import threading

    env = EmbeddedEnvironment(tmp_path / "env.db")
    env._connection()
    worker = threading.Thread(target=env._connection)
    worker.start()
    worker.join()
    gc.collect()
    assert len(env._opened) == 1
