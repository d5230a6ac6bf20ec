"""Things a claim names together belong together in its evidence (issue 27: "numbers, IPs, ids
and times belong to their subject's line"): a program, host and code each true, each of another
line, are no fact of one line."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.gatekeeper.rules.entity_grounding import PAIRED_OTHERWISE
from veridiag.text.entities import Corpus, TextFacts
from veridiag.text.pairs import broken_pairs
from veridiag.text.records import records

_GATEKEEPER = Gatekeeper()
_PROGRAMS = st.lists(
    st.sampled_from(["QQ.exe", "chrome.exe", "YodaoDict.exe", "FlashPlayerPlugin.exe", "spoolsv.exe", "git.exe"]),
    min_size=2,
    max_size=5,
    unique=True,
)
_HOSTS = st.sampled_from(["tcpconn4.tencent.com", "formi.baidu.com", "oimagea5.ydstatic.com", "github.com"])
_HEADED = st.booleans()


def _log(programs: list[str], host: str, code: int, coded: int, headed: bool) -> tuple[str, list[str]]:
    """One line per program; only line ``coded`` carries the status code."""
    lines = [
        f"[10.30 17:{i:02d}:10] {p} - {host}:80 error : Could not connect through proxy"
        + (f" - Proxy server cannot establish a connection with the target, status code {code}" if i == coded else "")
        for i, p in enumerate(programs)
    ]
    if headed:  # a log query's templates, each with its example, under one heading
        body = "\n".join(f"  1× INFO 2016-10-30T17:{i:02d}:10Z <*>\n     e.g. {ln}" for i, ln in enumerate(lines))
        return f"matched {len(lines)} lines\ntemplates:\n{body}", lines
    return "\n".join(lines), lines


def _broken(text: str, output: str) -> bool:
    return bool(broken_pairs(text, [output], lambda e, c: c.contains(e), TextFacts))


@given(_PROGRAMS, _HOSTS, st.sampled_from([403, 407, 502]), st.data(), _HEADED)
def test_a_code_named_with_another_lines_program_is_a_broken_pair(
    programs: list[str], host: str, code: int, data: st.DataObject, headed: bool
) -> None:
    """ "status code 403 那条是 QQ.exe 报的" where 403 is FlashPlayerPlugin's line: broken; the
    program whose line holds it: not, under a templates heading or not."""
    coded = data.draw(st.integers(0, len(programs) - 1))
    other = data.draw(st.integers(0, len(programs) - 1))
    assume(other != coded)
    output, _ = _log(programs, host, code, coded, headed)
    assert not _broken(f"status code {code} 那条是 {programs[coded]} 报的", output)
    assert _broken(f"status code {code} 那条是 {programs[other]} 报的", output)
    assert _broken(f"The HTTP {code} came from {programs[other]}.", output)


@given(_PROGRAMS, _HOSTS, st.sampled_from([403, 502]), st.data())
def test_the_gatekeeper_confirms_a_broken_pair_at_most_as_an_inference(
    programs: list[str], host: str, code: int, data: st.DataObject
) -> None:
    coded = data.draw(st.integers(0, len(programs) - 1))
    other = data.draw(st.integers(0, len(programs) - 1))
    assume(other != coded)
    output, lines = _log(programs, host, code, coded, headed=False)
    store = InMemoryInvocations([invocation(321, output=output)])

    def reasons(text: str, *quoted: str) -> list[str]:
        bindings = [binding([321], line) for line in quoted]
        report = _GATEKEEPER.validate(v2([claim(text=text, bindings=bindings)]), session_id=SESSION, invocations=store)
        return [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.entity_grounding"]

    # both lines quoted: every fact is in the claim's own excerpts, only the pairing is wrong
    swapped = reasons(f"status code {code} 那条是 {programs[other]} 报的", lines[other], lines[coded])
    assert any(r.startswith(PAIRED_OTHERWISE) for r in swapped), swapped
    honest = reasons(f"status code {code} 那条是 {programs[coded]} 报的", lines[coded])
    assert not any(PAIRED_OTHERWISE in r for r in honest), honest


@given(st.sampled_from(["CHG-4471", "CHG-102", "REL-7788"]), st.sampled_from(["ecb-backup", "db-replica2"]))
def test_a_chain_of_things_each_on_its_own_line_breaks_nothing(change: str, target: str) -> None:
    """ "CHG-4471 left ecb-backup with no weight, so ecb-mirror timed out": each line names only
    things the claim also names, or none of the other's kind."""
    output = f"{target} weight 0 (was 50) by change {change}\nprovider feed latency high: ecb-mirror p99=2710ms"
    assert not _broken(f"{change} left {target} with no weight, so when ecb-mirror slowed lookups timed out", output)


def test_a_heading_is_a_record_of_its_own() -> None:
    """Under "templates:" each pattern and its example is a record, not the whole list one."""
    output, _ = _log(["QQ.exe", "chrome.exe"], "github.com", 403, 1, headed=True)
    split = list(records(output))
    assert "templates:" in split
    assert not any("QQ.exe" in r and "chrome.exe" in r for r in split)
    assert all(Corpus([r]).contains(e) for r in split if "403" in r for e in TextFacts("status code 403").entities())


@given(
    st.integers(100, 99999),
    st.sampled_from(["E-9999", "ERR_DB_AUTH"]),
    st.sampled_from(
        [
            "订单{o}超时是因为数据库密码过期（{c}）",
            "order {o} timed out after the database password expired ({c})",
            "数据库密码过期（{c}）导致订单{o}超时",
            "{c} came first; order {o} timed out later",
        ]
    ),
)
def test_things_of_two_linked_events_are_no_pair(order: int, code: str, form: str) -> None:
    """A cause and its effect, each of its own line: the claim links two events, it does not say
    one line names both (the link itself is a hypothesis: root_cause_support's)."""
    output = (
        f"2026-07-07T10:00:30Z ERROR payment-service - database password expired ({code})\n"
        f"2026-07-07T10:01:02Z ERROR payment-service - order={order} ERR_TIMEOUT request timeout cost=5300ms"
    )
    assert not _broken(form.format(o=order, c=code), output)
