"""The RCA benchmark's pure parts: the Nezha reader, the baseline's job and driver, the scoring,
reading an answer's services and wrong origins, and the frame — on a trimmed copy of two real
days (``tests/fixtures/nezha_days``), with RCAEval stood in for by a few lines of Python (the
real one runs in its own Python 3.12 environment, checked at the end when it is built)."""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import stat
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veridiag.bench import BENCHMARKS, rca, rcaeval, rcaeval_job
from veridiag.bench.nezha import (
    CODE_FAULTS,
    CPU_FAULTS,
    Fault,
    NezhaDay,
    NezhaFormatError,
    read_day,
    read_days,
    service_of,
    shows_in,
)
from veridiag.bench.rca_answers import (
    answer_services,
    decided_service,
    question_for,
    services_named,
    veridiag_answers,
    wrong_origins,
)
from veridiag.bench.rca_score import CaseScore, breakdown, ranked_services, score, tally
from veridiag.bench.rca_words import RcaWords, rca_words
from veridiag.contracts.composer import AllowedClaim
from veridiag.contracts.invocation import InvocationRecord
from veridiag.text.wordfiles import WordFileError, read_words

DAYS = Path(__file__).parent / "fixtures" / "nezha_days"
OB = DAYS / "onlineboutique-2022-08-22"
TT = DAYS / "trainticket-2023-01-29"


# -- the dataset ---------------------------------------------------------------------------


def test_a_day_reads_into_faults_in_time_order_with_culprit_type_and_utc_time() -> None:
    day = read_day(OB)
    assert (day.system, day.day.isoformat(), day.name) == ("onlineboutique", "2022-08-22", "onlineboutique-2022-08-22")
    assert day.services == ["cartservice", "checkoutservice", "frontend"]
    assert [(f.culprit, f.fault_type) for f in day.faults] == [
        ("cartservice", "network_delay"),
        ("cartservice", "cpu_contention"),
        ("checkoutservice", "cpu_contention"),
    ]
    assert [f.id for f in day.faults] == [f"onlineboutique-2022-08-22#{n}" for n in (1, 2, 3)]
    first = day.faults[0]
    assert first.inject_time == datetime(2022, 8, 22, 4, 27, 3, tzinfo=UTC)
    assert first.pod == "cartservice-579f59597d-wc2lz"
    assert not first.has_logs and not first.has_traces, "the OB day ships metrics only"
    assert [f.shows_in for f in day.faults] == ["nowhere", "metrics", "metrics"]


def test_the_trainticket_day_reads_inject_time_not_the_8_hours_off_timestamp() -> None:
    day = read_day(TT)
    shipped = json.loads((TT / "fault_list.json").read_text())
    stated = {e["inject_time"]: int(e["inject_timestamp"]) for entries in shipped.values() for e in entries}
    food = day.faults[0]
    assert food.inject_epoch == int(datetime(2023, 1, 29, 9, 30, 9, tzinfo=UTC).timestamp())
    assert stated["2023-01-29 09:30:09"] != food.inject_epoch
    # the data's own epoch column agrees with inject_time: the fault's minute is in the file
    rows = (TT / "metric" / "ts-food-service-f5756978c-k8vqf_metric.csv").read_text().splitlines()[1:]
    stamps = [int(row.split(",")[1]) for row in rows]
    assert min(abs(stamp - food.inject_epoch) for stamp in stamps) < 60


def test_logs_and_traces_cover_only_the_faults_whose_minute_the_day_has() -> None:
    food, contacts = read_day(TT).faults
    assert (food.fault_type, food.has_logs, food.has_traces, food.shows_in) == ("return", True, True, "logs")
    assert (contacts.fault_type, contacts.has_logs, contacts.shows_in) == ("cpu_contention", False, "metrics")


@pytest.mark.parametrize("fault_type", sorted(CPU_FAULTS | CODE_FAULTS | {"network_delay"}))
@pytest.mark.parametrize("logs", [True, False])
def test_where_a_fault_shows_follows_the_issues_rule(fault_type: str, logs: bool) -> None:
    found = shows_in(fault_type, logs=logs)  # type: ignore[arg-type]
    if fault_type in CPU_FAULTS:
        assert found == "metrics"
    elif fault_type in CODE_FAULTS:
        assert found == ("logs" if logs else "nowhere")
    else:
        assert found == "nowhere", "a network delay barely moves these metrics: the evidence cannot tell"


def test_real_pod_names_of_both_systems() -> None:
    assert service_of("ts-contacts-service-866bd68c97-xcqfx") == "ts-contacts-service"
    assert service_of("ts-travel2-service-5c66d57d58-6mp2b") == "ts-travel2-service"
    assert service_of("frontend-579b9bff58-t2dbm") == "frontend"
    assert service_of("redis-cart-0") == "redis-cart"


def _copy_day(tmp_path: Path, source: Path = OB, name: str | None = None) -> Path:
    target = tmp_path / (name or source.name)
    shutil.copytree(source, target)
    return target


def test_faults_listed_out_of_order_are_read_in_time_order(tmp_path: Path) -> None:
    folder = _copy_day(tmp_path)
    entries = json.loads((folder / "fault_list.json").read_text())["04"]
    (folder / "fault_list.json").write_text(json.dumps({"05": [entries[2]], "04": [entries[1], entries[0]]}))
    times = [f.inject_time for f in read_day(folder).faults]
    assert times == sorted(times) and len(times) == 3


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda f: f.rename(f.parent / "onlineboutique"), "<system>-<YYYY-MM-DD>"),
        (lambda f: _rewrite(f, "cpu_contention", "disk_full"), "inject_type"),
        (lambda f: _rewrite(f, "2022-08-22 04:36:03", "22/08/2022 04:36"), "inject_time"),
        (lambda f: shutil.rmtree(f / "metric"), "no metric folder"),
        (lambda f: (f / "fault_list.json").write_text("{not json"), "fault_list.json"),
    ],
)
def test_a_day_not_laid_out_as_shipped_is_a_clear_error(tmp_path: Path, change: object, says: str) -> None:
    folder = _copy_day(tmp_path)
    moved = change(folder)  # type: ignore[operator]
    target = moved if isinstance(moved, Path) else folder
    with pytest.raises(NezhaFormatError, match=says.replace("<", ".").replace(">", ".")):
        read_day(target)


def _rewrite(folder: Path, old: str, new: str) -> None:
    path = folder / "fault_list.json"
    path.write_text(path.read_text().replace(old, new, 1))


def test_every_shared_day_folder_is_read_and_none_invented(tmp_path: Path) -> None:
    assert [day.name for day in read_days(DAYS)] == ["onlineboutique-2022-08-22", "trainticket-2023-01-29"]
    with pytest.raises(NezhaFormatError, match="no Nezha day folder"):
        read_days(tmp_path)


# -- the baseline's job (runs in RCAEval's Python: standard library only) -------------------


def test_the_job_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(rcaeval_job.__file__).read_text())
    imported = {
        (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported - {"__future__"} <= sys.stdlib_module_names, imported - sys.stdlib_module_names


def _job(day: NezhaDay, columns: list[str] | None = None) -> rcaeval_job.Job:
    job = rcaeval.job_for(day)
    if columns is not None:
        job["columns"] = columns
    return job


def test_the_table_names_each_column_service_underscore_header_and_keeps_only_the_chosen_ones() -> None:
    day = read_day(OB)
    table = rcaeval_job.Table()
    for source in _job(day)["metrics"]:
        table.add_file(source, _job(day))
    kept = rca_words().baseline_columns
    assert sorted(table.columns) == sorted(f"{s}_{c}" for s in day.services for c in kept)
    assert ranked_services(table.columns, day.services) == day.services, "the service is before the first _"
    assert len(table.times) == 41, "one row a minute over 04:15–04:55"


def test_nan_is_a_missing_value_and_text_an_unreadable_one(tmp_path: Path) -> None:
    path = tmp_path / "x-6cfdd55578-gfj6q_metric.csv"
    path.write_text("TimeStamp,CpuUsageRate(%),PodServerLatencyP90(s)\n60,1.5,NaN\n120,oops,inf\nlater,1,1\n")
    job = _job(read_day(OB), ["CpuUsageRate(%)", "PodServerLatencyP90(s)"])
    table = rcaeval_job.Table()
    table.add_file(rcaeval_job.MetricFile(service="x", path=str(path)), job)
    assert (table.unreadable_rows, table.unreadable_values) == (1, 1)
    assert table.window(0, 1000) == [
        {"time": 60.0, "x_CpuUsageRate(%)": 1.5, "x_PodServerLatencyP90(s)": None},
        {"time": 120.0, "x_CpuUsageRate(%)": None, "x_PodServerLatencyP90(s)": None},
    ]


def test_a_second_pod_of_a_service_keeps_its_own_columns(tmp_path: Path) -> None:
    for pod in ("cart-6cfdd55578-gfj6q", "cart-6cfdd55578-bbbbb"):
        (tmp_path / f"{pod}_metric.csv").write_text("TimeStamp,CpuUsageRate(%)\n60,1\n")
    job = _job(read_day(OB), ["CpuUsageRate(%)"])
    table = rcaeval_job.Table()
    for path in sorted(tmp_path.iterdir()):
        table.add_file(rcaeval_job.MetricFile(service="cart", path=str(path)), job)
    assert table.columns == ["cart_CpuUsageRate(%)", "cart_CpuUsageRate(%)#2"]


def _rise(rows: list[dict[str, float | None]], inject: float, column: str) -> float:
    """How many times its mean before the injection a column's largest value after it is."""
    before = [row[column] or 0.0 for row in rows if (row["time"] or 0.0) < inject]
    after = [row[column] or 0.0 for row in rows if (row["time"] or 0.0) >= inject]
    return max(after, default=0.0) / (sum(before) / len(before) + 1e-9) if before else 0.0


def _largest_rise(data: object, inject: int, **_: object) -> dict[str, list[str]]:
    """A stand-in for BARO: columns by how far they rose from the injection on."""
    rows: list[dict[str, float | None]] = data if isinstance(data, list) else []
    columns = [name for name in rows[0] if name != "time"] if rows else []
    print("a method printing must not spoil the job's JSON")
    return {"ranks": sorted(columns, key=lambda column: _rise(rows, inject, column), reverse=True)}


def _failing(data: object, inject: int, **_: object) -> dict[str, list[str]]:
    raise ValueError("not enough rows")


def _rows_as_they_are(columns: list[str], rows: list[dict[str, float | None]]) -> object:
    return rows


def test_each_case_is_cut_at_its_windows_and_a_failing_method_is_a_result_not_a_crash() -> None:
    day = read_day(OB)
    job = _job(day)
    job["methods"] = ["baro", "nsigma"]
    output = rcaeval_job.run(job, {"baro": _largest_rise, "nsigma": _failing}, _rows_as_they_are, {"python": "test"})
    assert [case["id"] for case in output["cases"]] == [f.id for f in day.faults]
    first, second, third = output["cases"]
    assert (first["normal_rows"], first["anomal_rows"]) == (10, 9), "04:27:03: 04:17–04:26 normal, cut at 04:36:03"
    assert second["normal_rows"] == 10 and second["anomal_rows"] == 8, "04:36:03 → the next injection at 04:44:16"
    assert third["anomal_rows"] == 10, "the last fault keeps the whole 10 minutes"
    cpu = second["methods"]["baro"]
    assert cpu["error"] is None and cpu["ranks"][0].startswith("cartservice_")  # CPU 6 % → 88 % from 04:37
    failed = second["methods"]["nsigma"]
    assert (failed["ranks"], failed["error"]) == ([], "ValueError: not enough rows")


_FAKES = {
    "pandas.py": """
        class DataFrame:
            def __init__(self, rows): self.rows = rows
            @classmethod
            def from_records(cls, rows, columns): return cls([{c: r.get(c) for c in columns} for r in rows])
            def replace(self, old, new): return self
            def ffill(self): return self
            def fillna(self, value):
                return DataFrame([{k: (value if v is None else v) for k, v in r.items()} for r in self.rows])
    """,
    "numpy.py": "inf = float('inf')\nnan = float('nan')\n",
    "RCAEval/__init__.py": "",
    "RCAEval/e2e.py": """
        def baro(data, inject_time, dataset=None, **kw):
            assert dataset and dataset.startswith('nezha-'), dataset
            before = [r for r in data.rows if r['time'] < inject_time]
            after = [r for r in data.rows if r['time'] >= inject_time]
            columns = [c for c in data.rows[0] if c != 'time']
            print('RCAEval prints as it goes')
            def rise(c):
                return max(r[c] for r in after) / (sum(r[c] for r in before) / len(before) + 1e-9)
            return {'ranks': sorted(columns, key=rise, reverse=True)}
        nsigma = baro
    """,
}


def fake_venv(folder: Path, fakes: Path) -> Path:
    """A folder ``ensure_venv`` takes as built, whose ``bin/python`` runs this Python with
    stand-ins for pandas, numpy and RCAEval (``-I`` would hide them: the shim drops it)."""
    for name, text in _FAKES.items():
        (fakes / name).parent.mkdir(parents=True, exist_ok=True)
        (fakes / name).write_text(textwrap.dedent(text))
    shim = fakes / "shim.py"
    shim.write_text(
        "import runpy, sys\n"
        f"sys.path.insert(0, {str(fakes)!r})\n"
        "args = [a for a in sys.argv[1:] if a != '-I']\n"
        "sys.argv = args\n"
        "runpy.run_path(args[0], run_name='__main__')\n"
    )
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} {shim} "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    wanted = hashlib.sha256(rcaeval.requirements_text().encode()).hexdigest()
    stamp = {"requirements": wanted, "python": "3.12.1", "seconds": 33.6, "built": "2026-12-04T00:00:00Z"}
    (folder / "veridiag-baseline.json").write_text(json.dumps(stamp))
    return folder


def test_a_day_runs_through_the_baselines_process_and_comes_back_as_services(tmp_path: Path) -> None:
    venv = rcaeval.ensure_venv(fake_venv(tmp_path / "venv", tmp_path))
    assert (venv.created, venv.seconds, venv.python) == (False, 33.6, "3.12.1"), "a built environment is reused"
    found = rcaeval.run_day(venv, read_day(OB))
    assert found.versions["python"] and found.columns == 3 * len(rca_words().baseline_columns)
    cpu = found.cases[1].methods["baro"]
    assert cpu.services[0] == "cartservice" and sorted(cpu.services) == ["cartservice", "checkoutservice", "frontend"]


def test_an_environment_built_from_other_requirements_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fake_venv(tmp_path / "venv", tmp_path)
    monkeypatch.setattr(rcaeval, "requirements_text", lambda: "rcaeval==9.9\n")
    monkeypatch.setenv(rcaeval.PYTHON_VARIABLE, sys.executable)  # 3.11: refused before anything is removed
    with pytest.raises(rcaeval.BaselineUnavailableError, match=r"not a Python 3\.12.*VERIDIAG_RCAEVAL_PYTHON"):
        rcaeval.ensure_venv(folder)
    assert (folder / "bin" / "python").exists()


def test_no_python_3_12_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(rcaeval.PYTHON_VARIABLE, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    with pytest.raises(rcaeval.BaselineUnavailableError, match=r"no python3\.12 found.*install Python 3\.12"):
        rcaeval.find_python()


@given(gaps=st.lists(st.integers(min_value=0, max_value=1500), min_size=1, max_size=12))
def test_a_case_never_reaches_past_the_next_injection(gaps: list[int]) -> None:
    start = datetime(2022, 8, 22, 4, tzinfo=UTC)
    moments = [start + timedelta(seconds=sum(gaps[: n + 1])) for n in range(len(gaps))]
    faults = [_fault(moment, n) for n, moment in enumerate(moments)]
    cases = rcaeval.case_windows(faults)
    for index, (fault, case) in enumerate(zip(faults, cases, strict=True)):
        inject = fault.inject_epoch
        assert case["inject"] == inject and case["normal_start"] == inject - 600
        later = [f.inject_epoch for f in faults[index + 1 :] if f.inject_epoch > inject]
        assert case["anomal_end"] == min([inject + 600, *later[:1]])


def _fault(moment: datetime, number: int, culprit: str = "cartservice", kind: str = "cpu_contention") -> Fault:
    return Fault(
        id=f"onlineboutique-2022-08-22#{number + 1}",
        system="onlineboutique",
        inject_time=moment,
        pod=f"{culprit}-579f59597d-wc2lz",
        culprit=culprit,
        fault_type=kind,
        has_logs=False,
        has_traces=False,
        shows_in=shows_in(kind, logs=False),  # type: ignore[arg-type]
    )


# -- scoring ---------------------------------------------------------------------------------


def test_a_ranking_of_columns_names_each_service_once_at_its_first_column() -> None:
    ranks = ["b_cpu", "a_mem", "b_mem", "ghost_cpu", "c_latency#2", "a_cpu"]
    assert ranked_services(ranks, {"a", "b", "c"}) == ["b", "a", "c"]


@given(named=st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), unique=True, max_size=5))
def test_top1_and_top3_are_the_culprits_place(named: list[str]) -> None:
    case = score(_fault(datetime(2022, 8, 22, tzinfo=UTC), 0, culprit="c"), named)
    place = named.index("c") if "c" in named else None
    assert case.top1 == (place == 0)
    assert case.top3 == (place is not None and place < 3)
    assert case.top3 or not case.top1


def _case(system: str, kind: str, top: str, seconds: float | None, culprit: str = "x") -> CaseScore:
    fault = _fault(datetime(2022, 8, 22, tzinfo=UTC), 0, culprit=culprit, kind=kind).model_copy(
        update={"system": system}
    )
    return score(fault, [top], seconds=seconds)


def test_tallies_split_by_system_type_and_where_the_fault_shows() -> None:
    cases = [
        _case("ob", "cpu_contention", "x", 1.0),
        _case("ob", "network_delay", "y", 3.0),
        _case("tt", "cpu_contention", "y", 2.0),
        _case("tt", "exception", "x", None),
    ]
    whole = breakdown(cases)
    assert (whole.overall.cases, whole.overall.top1, whole.overall.top1_hits) == (4, 0.5, 2)
    assert whole.overall.seconds_per_case == 2.0, "the median over the timed cases"
    assert whole.by_system["ob"].top1 == 0.5 and whole.by_system["tt"].top1 == 0.5
    assert whole.by_fault_type["cpu_contention"].top1 == 0.5 and whole.by_fault_type["network_delay"].top1 == 0
    assert whole.shown.cases == 2, "cpu in the metrics; an exception without logs and a delay do not show"
    empty = tally([])
    assert (empty.top1, empty.top3, empty.seconds_per_case) == (None, None, None), "no case is not 0 %"


# -- reading veridiag's answer ---------------------------------------------------------------

TT_SERVICES = [
    "ts-order-service",
    "ts-order-other-service",
    "ts-admin-order-service",
    "ts-travel-service",
    "ts-travel2-service",
    "ts-food-service",
    "ts-station-food-service",
]
#: What stands between two names in an answer (never nothing: two names run together are one word).
FILLERS = [
    " ",
    "，",
    "、",
    "：",
    " and ",
    "的 CPU 在 07:01 升高，",
    " moved first (cpu from 07:01), before ",
    "\n- ",
]


@given(
    picks=st.lists(st.sampled_from(TT_SERVICES), min_size=1, max_size=8),
    fillers=st.lists(st.sampled_from(FILLERS), min_size=9, max_size=9),
    pods=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_the_services_an_answer_names_are_read_in_order_of_first_mention(
    picks: list[str], fillers: list[str], pods: list[bool]
) -> None:
    text = fillers[0]
    for name, filler, pod in zip(picks, fillers[1:], pods, strict=False):
        text += (f"{name}-5b67c48447-mv5hb" if pod else name) + filler
    expected = list(dict.fromkeys(picks))
    assert services_named(text, TT_SERVICES) == expected


def test_a_name_inside_a_longer_name_is_no_mention_of_it() -> None:
    text = "ts-admin-order-service 和 ts-station-food-service 异常；ts-travel2-service 正常"
    assert services_named(text, TT_SERVICES) == [
        "ts-admin-order-service",
        "ts-station-food-service",
        "ts-travel2-service",
    ]


def test_the_scope_line_is_not_read_as_an_answer() -> None:
    answer = "时间窗口：…；服务：ts-food-service、ts-order-service。\n\nts-order-service 的错误在 09:31 增多。"
    assert answer_services(answer, TT_SERVICES) == ["ts-order-service"]
    assert answer_services("Time window: … services: ts-food-service.", TT_SERVICES) == []


def _claim(text: str, kind: str = "observation", verification: str = "direct_observation") -> AllowedClaim:
    return AllowedClaim(claim_id="c1", claim_type=kind, claim_text=text, verification=verification)


def test_a_confirmed_claim_presenting_another_service_as_the_origin_is_counted() -> None:
    services = ["cartservice", "checkoutservice", "frontend"]
    counted = [
        _claim("源头是 checkoutservice：cpu_usage_rate 自 04:37 起升至 88%", kind="root_cause"),
        _claim("frontend 的发布导致 cartservice 延迟升高", kind="root_cause"),
        _claim("checkoutservice first, then cartservice", kind="first_mover"),
    ]
    not_counted = [
        _claim("源头是 cartservice：cpu_usage_rate 自 04:37 起升至 88%", kind="root_cause"),  # the culprit: right
        _claim("源头是 frontend", kind="root_cause", verification="reasonable_inference"),  # shown as inferred
        _claim("the deploy caused latency", kind="root_cause"),  # names no service
        # a symptom quoting a log line that says "root cause" presents nothing as the origin
        _claim(
            "checkoutservice logged 6 ERROR lines: Servlet.service() threw exception "
            "[IllegalStateException: No instances available for cartservice] with root cause",
            kind="symptom",
        ),
        _claim("checkoutservice moved first (cpu from 04:37), before cartservice (cpu from 04:38)"),
    ]
    assert wrong_origins(counted + not_counted, services, "cartservice") == counted


def test_questions_rotate_through_neutral_phrasings_in_both_languages() -> None:
    day = read_day(OB)
    turns = len(rca_words().questions)
    fault = day.faults[0]
    asked = [question_for(fault, index) for index in range(turns)]
    assert len(set(asked)) == turns and question_for(fault, turns) == asked[0], "each in turn, then again"
    assert all("04:27" in q and "2022-08-22" in q for q in asked)
    assert {q.isascii() for q in asked} == {True, False}, "English and Chinese"
    for question in asked:
        assert not services_named(question, day.services), "a question names no service"


def test_a_question_without_its_time_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rca.yaml"
    bundled = (Path(rcaeval.__file__).parent / "rca.yaml").read_text()
    path.write_text(bundled.replace("{time} UTC on {day}", "now"))
    with pytest.raises(WordFileError, match="questions"):
        read_words(path, RcaWords)


# -- the frame -------------------------------------------------------------------------------


def _named_first(first: dict[str, str]) -> rca.Answerer:
    def answer(day: NezhaDay, faults: list[Fault], progress: rca.Progress) -> list[CaseScore]:
        progress(f"answering {len(faults)}")
        return [score(f, [first.get(f.id, "frontend")], seconds=0.5, question="q") for f in faults]

    return answer


def test_the_bench_reports_veridiag_beside_the_baseline_per_system_and_fault_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = fake_venv(tmp_path / "venv", tmp_path)
    heard: list[str] = []
    right = {"onlineboutique-2022-08-22#2": "cartservice", "trainticket-2023-01-29#2": "ts-contacts-service"}
    report = rca.run(DAYS, answerer=_named_first(right), venv=venv, progress=heard.append)
    assert report.days == ["onlineboutique-2022-08-22", "trainticket-2023-01-29"] and report.cases == 5
    assert (report.top1, report.top3, report.wrong_origin_confirmed, report.seconds_per_case) == (0.4, 0.4, 0, 0.5)
    assert report.baseline == "baro" and report.baseline_top1 is not None
    assert report.baseline_top1 == report.baselines["baro"].top1 and set(report.baselines) == {"baro", "nsigma"}
    assert report.by_system["trainticket"].cases == 2 and report.by_system["trainticket"].top1 == 0.5
    assert report.by_fault_type["cpu_contention"].top1 == 0.667, "cartservice and ts-contacts-service: 2 of 3"
    assert report.shown.cases == 4
    assert report.venv is not None and report.venv.seconds == 33.6
    assert report.cases_detail[1].baselines["baro"][0] == "cartservice"
    assert any("baseline" in line for line in heard) and any("answering" in line for line in heard)
    document = report.model_dump(mode="json")
    for key in ("top1", "top3", "wrong_origin_confirmed", "baseline_top1", "seconds_per_case"):
        assert key in document and key in document["by_system"]["onlineboutique"]
        assert key in document["by_fault_type"]["cpu_contention"]


def test_a_side_that_cannot_run_is_not_measured_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rcaeval.PYTHON_VARIABLE, str(tmp_path / "python3.12"))

    def broken(day: NezhaDay, faults: list[Fault], progress: rca.Progress) -> list[CaseScore]:
        raise RuntimeError("the day could not be imported")

    report = rca.run(DAYS, answerer=broken, venv=tmp_path / "none", quick=True)
    assert report.baseline_error is not None and "VERIDIAG_RCAEVAL_PYTHON" in report.baseline_error
    assert report.veridiag_error == "RuntimeError: the day could not be imported"
    assert (report.top1, report.baseline_top1, report.by_system["onlineboutique"].top1) == (None, None, None)
    assert report.cases == 5 and report.quick


def test_rca_is_a_registered_benchmark() -> None:
    assert "rca" in BENCHMARKS


@pytest.mark.slow
def test_the_real_baseline_ranks_the_cpu_culprit_first_on_the_fixture() -> None:
    """RCAEval itself, when its environment is built (``veridiag bench --only rca`` builds it)."""
    folder = rcaeval.venv_folder()
    if not (folder / "veridiag-baseline.json").exists():
        pytest.skip(f"the RCAEval environment is not built at {folder} (veridiag bench --only rca builds it)")
    found = rcaeval.run_day(rcaeval.ensure_venv(folder), read_day(OB))
    assert found.versions["rcaeval"] == "1.8.1" and found.versions["python"].startswith("3.12")
    assert found.cases[1].methods["baro"].services[0] == "cartservice"


@pytest.mark.slow
def test_veridiag_answers_each_fault_of_a_day_through_the_real_pipeline() -> None:
    day = read_day(OB)
    heard: list[str] = []
    cases = veridiag_answers(day, day.faults, heard.append)
    assert [case.fault_id for case in cases] == [fault.id for fault in day.faults]
    for index, case in enumerate(cases):
        assert case.error is None and case.seconds is not None and case.seconds > 0
        assert case.question == question_for(day.faults[index], index)
        assert set(case.named) <= set(day.services)
    cpu = cases[1]
    assert "cartservice" in cpu.named, "cartservice's CPU went from 6 % to 88 % at 04:37: an answer names it"
    assert any("importing" in line for line in heard) and any("3/3" in line for line in heard)


def _survey(output: str, status: str = "ok") -> InvocationRecord:
    return InvocationRecord(
        id=1, session_id="s-1", tool_name="rank_suspects", status=status, output=output, started_at=datetime.now(UTC)
    )


def test_a_decided_answer_is_read_from_the_last_survey_and_scored_against_the_culprit() -> None:
    """The answer follows the last survey (the focus may run it again): its verdict line says
    which service stands out, or that none does; a decided answer on the wrong service counts."""
    standing = "examined\nverdict: cartservice stands out (score 0.61; next frontend 0.20)\n"
    none = "examined\nverdict: no service stands out: frontend changed most (score 0.40), but the first two are close\n"
    assert decided_service([_survey(none), _survey(standing)]) == "cartservice"
    assert decided_service([_survey(standing), _survey(none)]) is None
    assert decided_service([_survey(standing, status="error")]) is None
    assert decided_service([]) is None
    fault = _fault(datetime(2022, 8, 22, 4, 36, tzinfo=UTC), 1, culprit="cartservice")
    right = score(fault, ["cartservice"], decided="cartservice")
    wrong = score(fault, ["frontend", "cartservice"], decided="frontend")
    unsure = score(fault, ["cartservice"])
    assert (right.decided_right, wrong.decided_right, unsure.decided_right) == (True, False, False)
    counted = tally([right, wrong, unsure])
    assert (counted.decided, counted.decided_right) == (2, 1)
