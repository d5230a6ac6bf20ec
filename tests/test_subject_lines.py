"""Numbers, times and codes belong to their subject's line (issue 27 D3): a claim about one order
that borrows the value of another order's line is not confirmed by having quoted both lines."""

from __future__ import annotations

from hypothesis import assume, example, given
from hypothesis import strategies as st

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.contracts import InMemoryInvocations
from veridiag.gatekeeper import Gatekeeper
from veridiag.text.entities import extract_entities

_GATEKEEPER = Gatekeeper()

_SUBJECTS = st.sampled_from(
    [
        ("订单{id}", "order={id}", st.integers(10000, 99999).map(str)),
        ("request {id}", "request_id={id}", st.integers(100, 99999).map(lambda n: f"req-{n}")),
        ("来自 {id} 的请求", "client={id}", st.tuples(*[st.integers(1, 254)] * 4).map(lambda t: ".".join(map(str, t)))),
        (
            "主机 {id} 上的请求",
            "host={id}",
            st.tuples(st.sampled_from(["dn", "tbird-admin", "node-"]), st.integers(1, 999)).map(
                lambda t: f"{t[0]}{t[1]}"
            ),
        ),
    ]
)
_FACTS = st.sampled_from(
    [
        ("等待 {v}ms", "wait={v}ms"),
        ("took {v} ms", "cost={v}ms"),
        ("耗时 {v}ms", "elapsed={v}ms"),
    ]
)


def _outcome(text: str, lines: list[str], service: str | None = None) -> str:
    """The claim text's grounding outcome; ``service``: the call's service= argument."""
    output = "\n".join(lines)
    store = InMemoryInvocations([invocation(394, output=output, arguments={"service": service} if service else {})])
    report = _GATEKEEPER.validate(
        v2([claim(text=text, bindings=[binding([394], line) for line in lines])]),
        session_id=SESSION,
        invocations=store,
    )
    (check,) = [
        c
        for t in report.claim_traces
        for c in t.checks
        if c.rule_id == "claim.entity_grounding" and c.target.endswith("claim_text")
    ]
    return check.outcome


@given(_SUBJECTS, _FACTS, st.data())
def test_a_value_from_another_subjects_line_is_not_confirmed(
    subject: tuple[str, str, st.SearchStrategy[str]], fact: tuple[str, str], data: st.DataObject
) -> None:
    said, field, ids = subject
    own_value, other_value = data.draw(st.integers(100, 9999)), data.draw(st.integers(100, 9999))
    own_line_first = data.draw(st.booleans())
    mine, other = data.draw(ids), data.draw(ids)
    assume(mine != other and own_value != other_value and str(own_value) not in str(other_value))
    assume(str(other_value) not in str(own_value))
    claim_words, line_words = fact
    own = f"2026-07-07T10:01:02Z WARN pay {field.format(id=mine)} {line_words.format(v=own_value)}"
    sibling = f"2026-07-07T10:01:03Z WARN pay {field.format(id=other)} {line_words.format(v=other_value)}"
    lines = [own, sibling] if own_line_first else [sibling, own]
    assert extract_entities(said.format(id=mine)), said  # the subject is read as a fact
    honest = f"{said.format(id=mine)} {claim_words.format(v=own_value)}"
    swapped = f"{said.format(id=mine)} {claim_words.format(v=other_value)}"
    assert _outcome(honest, lines) == "pass"
    assert _outcome(swapped, lines) != "pass"


def test_a_value_on_a_line_naming_no_subject_is_the_claims() -> None:
    lines = [
        "2026-07-07T10:01:02Z WARN pay order=88121 payment timed out",
        "2026-07-07T10:01:02Z WARN pay upstream wait=2950ms",
    ]
    assert _outcome("订单88121 等待 2950ms", lines) == "pass"


# --- the line's own service wins over the call's arguments; names compared as a reader sees them ------

_SERVICE = st.builds(
    "{}-{}".format,
    st.sampled_from(["payment", "order", "inventory", "ts-food", "billing", "user"]),
    st.sampled_from(["service", "api", "db", "gateway"]),
)
#: Ways of writing a name that a reader takes for it: a Cyrillic look-alike, full width, a zero-width space.
_SPELLINGS = st.sampled_from(
    [
        lambda name: name,
        lambda name: name.replace("e", "\u0435", 1),
        lambda name: name.replace("a", "\u0430", 1),
        lambda name: name.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)}),
        lambda name: name[:2] + "\u200b" + name[2:],
    ]
)


@given(_SERVICE, _SERVICE, _SPELLINGS, st.integers(1000, 9999), st.sampled_from(["ERR_TIMEOUT", "ERR_DB_LOCK"]))
def test_a_lines_own_service_wins_over_the_calls_argument(
    asked: str, named: str, spelled: object, value: int, code: str
) -> None:
    """Called with service=A, a line naming B states B's facts, not A's: a claim about A quoting it
    is not confirmed; a claim about B, or about A quoting A's own line (in any spelling a reader
    takes for A's name), is."""
    assume(asked != named)
    assert callable(spelled)
    line = f"2026-07-07T10:01:02Z ERROR {named} [exec-7] {code} cost={value}ms"
    own = line.replace(named, asked)
    said = "{} 在 10:01 出现 {}，耗时 {}ms"
    assert _outcome(said.format(spelled(asked), code, value), [line], asked) == "warn"
    assert _outcome(said.format(spelled(named), code, value), [line], asked) == "pass"
    assert _outcome(said.format(spelled(asked), code, value), [own], asked) == "pass"
    # a line naming no service is the asked service's
    bare = line.replace(f"{named} ", "")
    assert _outcome(said.format(spelled(asked), code, value), [bare], asked) == "pass"


@given(_SERVICE, _SERVICE, st.integers(1, 50), st.integers(1, 59))
# "37 … failures" is a count (red46): the pattern's count is its example's service's too
@example("payment-service", "payment-api", 1, 1)
def test_the_window_asked_about_is_the_claims_though_a_line_naming_another_service_rounds_to_it(
    asked: str, upstream: str, minutes: int, second: int
) -> None:
    """ "From 10:00 to 10:03 order-service logged 37 timeouts": 10:03 is the end of the window the
    call asked about, not a fact of the upstream its template names (last line 10:02:56)."""
    assume(asked != upstream)
    end = f"10:{minutes:02d}"
    last = f"2026-07-07T10:{minutes - 1:02d}:{second:02d}Z" if second >= 30 else f"2026-07-07T{end}:{second:02d}Z"
    lines = [
        f"37× ERROR 2026-07-07T10:00:04Z – {last} payment failed: ERR_PAYMENT_TIMEOUT upstream={upstream}",
        f"   e.g. 2026-07-07T10:00:04Z ERROR {asked} payment failed: ERR_PAYMENT_TIMEOUT upstream={upstream}",
    ]
    store = InMemoryInvocations(
        [
            invocation(
                394,
                output="\n".join(lines),
                arguments={"service": asked, "start": "2026-07-07T10:00:00Z", "end": f"2026-07-07T{end}:00Z"},
            )
        ]
    )
    report = _GATEKEEPER.validate(
        v2(
            [
                claim(
                    text=f"From 10:00 to {end} UTC {asked} logged 37 ERR_PAYMENT_TIMEOUT failures",
                    bindings=[binding([394], lines[0])],
                )
            ]
        ),
        session_id=SESSION,
        invocations=store,
    )
    reasons = [c.reason for t in report.claim_traces for c in t.checks if c.rule_id == "claim.entity_grounding"]
    assert not [r for r in reasons if "another subject" in r], reasons
