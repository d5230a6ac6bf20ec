"""A secret seen once with its key is a secret wherever the same session shows it again
(issue 27 D6): strategies generate how the value is first written (``key=value``, a client's
option or argument, JSON, a question), and where it comes back bare (another tool output, the
same output's earlier line, a role's JSON reply, a record); the session's redactor replaces it
there, another session's and the shared one do not know it, and ordinary words a misread key
might have caught are never remembered."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import binding, claim, v2
from tests.test_known_gaps import evidence
from veridiag.agents import scripted_roles
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.pipeline.audit import audit_chain
from veridiag.redaction import Redactor, default_redactor
from veridiag.store import SessionStore

_UPPER, _LOWER, _DIGITS = "ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz", "23456789"

#: Values that cannot be ordinary words or ids: a run of 6+ letters and digits mixed, then
#: perhaps symbols and more.
values = st.builds(
    lambda a, b, run, rest: a + b + run + rest,
    st.sampled_from(_UPPER + _LOWER),
    st.sampled_from(_DIGITS),
    st.text(alphabet=_UPPER + _LOWER + _DIGITS, min_size=6, max_size=12),
    st.text(alphabet=_UPPER + _LOWER + _DIGITS + "!#^*_+~-.", max_size=8),
)

FIRST = [
    "2026-07-07T10:00:00Z ERROR ledger-api db login failed password={v} user=pay",
    'config loaded {{"db": {{"user": "pay", "token": "{v}"}}}}',
    "deploy-job ran: mysql -uroot -p{v} -h db-1 -e 'select 1'",
    "deploy-job ran: smbclient //fs-1/share -U svc%{v} -c ls",
    "cron: sqlplus -s ledger/{v}@db-1:1521/LEDGER @/srv/check.sql",
    "DB_PASSWORD='{v}' exported",
]
AGAIN = [
    "2026-07-07T10:05:00Z WARN ledger-api retrying connect with {v} (attempt 2)",
    "{v}",
    'stack: at Login.check("{v}") line 42',
    "2026-07-07T10:05:00Z INFO ledger-api [worker-1] invoice 1001 issued ref={v}/x",
]


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(FIRST), st.sampled_from(AGAIN), st.booleans())
def test_a_value_found_with_its_key_is_gone_wherever_the_session_shows_it(
    value: str, first: str, again: str, same_output: bool
) -> None:
    shared = Redactor()
    session = shared.for_session()
    keyed, bare = first.format(v=value), again.format(v=value)
    if same_output:  # the bare line before the keyed one, in one output
        redacted = session.redact(f"{bare}\n{keyed}")
    else:
        redacted = session.redact(keyed) + "\n" + session.redact(bare)
    assert value not in redacted, redacted
    assert shared.for_session().redact(bare) == shared.redact(bare), "no other session knows it"
    written = json.dumps({"answer": f"the job used {value} twice"})
    assert value not in session.redact_written(written)
    assert value not in json.dumps(session.redact_data({"line": bare, "lines": [bare, "ok"]}))


ORDINARY_VALUES = [
    "postgres",
    "changeme",
    "payment-service",
    "2950ms",
    "abc12",
    "db-1.internal",
    "PaymentService",
    "order-88121",
    "10.0.0.7:5432",
]


@given(st.sampled_from(ORDINARY_VALUES), st.sampled_from(["password", "token", "secret"]))
def test_an_ordinary_word_a_key_named_is_not_taken_from_later_lines(word: str, key: str) -> None:
    """A misread assignment ("password: postgres") costs its own value, never the word elsewhere."""
    session = default_redactor().for_session()
    assert word not in session.redact(f"{key}={word}")
    line = f"2026-07-07T10:05:00Z INFO {word} connected to {word} in 29ms"
    assert session.redact(line) == line


def test_a_diagnosis_remembers_its_question_for_the_roles_replies(tmp_path: Path) -> None:
    """The question carries a key and value; the Executor's claim and the Composer's answer
    repeat the value bare: neither the stored session, its audit nor the answer shows it."""
    secret = "Zq7Leaked9pw"
    executor = json.dumps(
        v2([claim("claim-1", f"The job retried with {secret}.", [binding([394], "order=123 ERR_TIMEOUT")])])
    )
    composer = json.dumps(
        {"answer_summary": "timeout", "recommended_actions": [], "user_facing_answer": f"Rotate {secret} now."}
    )
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    roles = scripted_roles(executor=executor, composer=composer)
    result = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1)).run(
        f"Why did order 123 fail? db password={secret}", on_session=evidence(store)
    )
    session = store.get_session(result.session_id)
    chain = audit_chain(store, result.session_id)
    assert session is not None and chain is not None
    shown = [result.answer, session.model_dump_json(), chain.model_dump_json()]
    assert not [text for text in shown if secret in text]
    assert "Rotate [REDACTED:password] now." in result.answer or "[REDACTED:password]" in chain.model_dump_json()
