"""Secrets found by how they are written, not by a list of wordings (issue 27 D6, round 2):
strategies generate keys broken by blanks, full-width spaces, dashes, dots and invisible
characters; the secret options of every command-line client ``vocabulary.yaml`` names, in each
form it takes; YAML tags and block scalars; URL encoding. The value never survives, ordinary
log text (ports, prose about passwords) is unchanged, and a secret a model copies into its
claims or answer reaches no stored or shown text."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import binding, claim, v2
from tests.test_known_gaps import evidence
from veridiag.agents import scripted_roles
from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
from veridiag.pipeline.audit import audit_chain
from veridiag.redaction import redact
from veridiag.redaction.keys import vocabulary
from veridiag.store import SessionStore

_WORDS = sorted({w for spellings in vocabulary().kinds.values() for w in spellings if w not in vocabulary().not_alone})
#: What people and programs put inside a key's word.
_BREAKS = [" ", "\u3000", "-", "_", ".", "\u00b7", "\u30fb", "\u200b", "\u2060", "\u2010", "  "]
_ASSIGN = ["=", ": ", "：", "＝", " = ", "=", '": "', "\t:\t"]

secret_values = st.builds(
    lambda body: "Zq7" + body,
    st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!@#^*_+~", min_size=6, max_size=20),
)
PREFIXES = st.sampled_from(
    ["", "2026-07-07T10:00:00.157Z ERROR payment-service [exec-1] c.s.pay.Db - ", "2026-07-07 18:00:00 WARN 配置 "]
)
SUFFIXES = st.sampled_from(["", " host=db-1 took=2950ms", " 耗时 2950ms"])


@st.composite
def broken_keys(draw: st.DrawFn) -> str:
    """A secret word with breaks inserted at 1–3 places inside it, in any case."""
    word = draw(st.sampled_from(_WORDS)).replace(" ", "")
    if len(word) < 2:
        return word
    places = sorted(set(draw(st.lists(st.integers(1, len(word) - 1), min_size=1, max_size=3))))
    pieces, last = [], 0
    for at in places:
        pieces += [word[last:at], draw(st.sampled_from(_BREAKS))]
        last = at
    key = "".join(pieces) + word[last:]
    case = draw(st.sampled_from(["lower", "upper", "title"]))
    return key.upper() if case == "upper" else key.title() if case == "title" else key


@settings(max_examples=300, deadline=None)
@given(broken_keys(), st.sampled_from(_ASSIGN), secret_values, PREFIXES, SUFFIXES)
def test_a_key_broken_anywhere_still_names_its_secret(
    key: str, assign: str, value: str, prefix: str, suffix: str
) -> None:
    line = (
        f'{prefix}"{key}{assign}{value}"{suffix}' if assign.startswith('"') else f"{prefix}{key}{assign}{value}{suffix}"
    )
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix)
    assert redact(redacted) == redacted


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, str]:
    """A client of ``vocabulary.yaml`` called with its secret option in one of its forms,
    among ordinary options, perhaps by path, under sudo, in a pipeline or a quoted string."""
    client = draw(st.sampled_from([c for c in vocabulary().commands if c.attached or c.separate]))
    name = draw(st.sampled_from(client.names))
    value = draw(secret_values)
    forms = [f"{flag}{value}" for flag in client.attached] + [f"{flag}'{value}'" for flag in client.attached]
    forms += [f"{flag} {value}" for flag in client.separate] + [f"{flag}={value}" for flag in client.separate]
    forms += [f'{flag} "{value}"' for flag in client.separate]
    option = draw(st.sampled_from(forms))
    others = draw(st.lists(st.sampled_from(["-h db-1", "-u root", "--port 3306", "-v", "--host=cache-1"]), max_size=3))
    at = draw(st.integers(0, len(others)))
    words = [*others[:at], option, *others[at:]]
    path = draw(st.sampled_from(["", "/usr/bin/", "sudo ", "env LANG=C "]))
    command = f"{path}{name} {' '.join(words)}"
    shape = draw(st.sampled_from(["plain", "piped", "quoted", "chained"]))
    if shape == "piped":
        command = f"echo ping | {command} | grep -v x"
    elif shape == "quoted":
        command = f'cmd="{command}"'
    elif shape == "chained":
        command = f"cd /srv && {command}; ls -a /tmp"
    return command, value


@settings(max_examples=300, deadline=None)
@given(command_lines(), PREFIXES)
def test_every_clients_secret_option_loses_its_value(case: tuple[str, str], prefix: str) -> None:
    command, value = case
    redacted = redact(prefix + command)
    assert value not in redacted, (command, redacted)
    assert redacted.startswith(prefix)


@st.composite
def yaml_values(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A secret-named key's value written as a tagged YAML scalar or a block of lines."""
    key = draw(st.sampled_from(["password", "db_password", "apiKey", "token", "secret", "密码", "pass word"]))
    lines = draw(st.lists(secret_values, min_size=1, max_size=3))
    encoded = base64.b64encode("\n".join(lines).encode()).decode()
    indent = draw(st.sampled_from(["", "  ", "- "]))
    form = draw(st.sampled_from(["binary", "block", "tagged block"]))
    if form == "binary":
        return f"{indent}{key}: !!binary {encoded}\nhost: db-1", [encoded, *lines]
    indicator = draw(st.sampled_from(["|", ">", "|-", ">+", "|2"]))
    tag = "!!binary " if form == "tagged block" else ""
    body = [encoded] if tag else lines
    pad = " " * (len(indent) + 2)
    text = f"config:\n{indent}{key}: {tag}{indicator}\n" + "\n".join(pad + b for b in body) + f"\n{indent}host: db-1"
    return text, body


@settings(max_examples=200, deadline=None)
@given(yaml_values())
def test_yaml_tags_and_blocks_lose_their_values(case: tuple[str, list[str]]) -> None:
    text, hidden = case
    redacted = redact(text)
    assert not [h for h in hidden if h in redacted], (text, redacted)
    assert redacted.endswith("host: db-1")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["passwd", "password", "pwd", "token", "api_key", "密码"]), secret_values, st.integers(1, 2))
def test_url_encoded_values_end_at_the_encoded_ampersand(key: str, value: str, times: int) -> None:
    body = f"user=alice&{key}={value}&next=1"
    for _ in range(times):
        body = quote(body, safe="")
    redacted = redact(f"POST /login body={body}")
    assert quote(value, safe="") not in redacted and value not in redacted, redacted
    assert "alice" in redacted and "next" in redacted


_ORDINARY = st.one_of(
    st.builds("ssh -p {} deploy@db-1".format, st.integers(1, 65535)),
    st.builds("docker run -p {0}:{0} nginx".format, st.integers(1, 65535)),
    st.builds("listening on -p {} --port {}".format, st.integers(1, 65535), st.integers(1, 65535)),
    st.builds("mysql -u root -p {} < dump.sql".format, st.sampled_from(["orders", "billing", "mydb"])),
    st.builds("redis-cli -h cache-1 -p {} ping".format, st.integers(1, 65535)),
    st.builds("gzip -p {} access.log".format, st.integers(1, 16)),
    st.builds("password reset requested for user {}".format, st.sampled_from(["alice", "bob", "张三"])),
    st.builds("pass={} fail={} skip=0".format, st.integers(0, 99), st.integers(0, 9)),
    st.builds("密码错误 用户 {} 第 {} 次".format, st.sampled_from(["alice", "张三"]), st.integers(1, 9)),
    st.builds("token expired for session {}, re-login".format, st.integers(1, 10**6)),
    st.builds("compass heading: {} deg, bypass mode: on".format, st.integers(0, 359)),
    st.builds("sort key: ts, cache key: order:{}".format, st.integers(1, 10**6)),
)


@given(_ORDINARY)
def test_ordinary_log_text_is_unchanged(line: str) -> None:
    assert redact(line) == line


def test_a_secret_a_model_copies_into_its_output_reaches_no_reader(tmp_path: Path) -> None:
    """The Executor's claim text, excerpt and hypothesis, the verifier's detail and the
    Composer's answer each carry a secret: the stored session, its audit and the answer hold
    none, and the Executor's document still parses (its claims are checked)."""
    secret = "Zq7Leaked!pw"
    leaky = claim(
        "claim-1",
        f"The job ran mysql -p{secret} and redis-cli -a {secret} before order 123 timed out.",
        [binding([394], "order=123 ERR_TIMEOUT request timeout cost=5300ms")],
    )
    executor = json.dumps(
        v2([leaky], hypotheses=[{"hypothesis": f"密　码：{secret} 过期", "evidence_needed": ["pass word=" + secret]}]),
        ensure_ascii=False,
    )
    verifier = json.dumps(
        {
            "verdict": "PASS",
            "groundedness_score": 0.9,
            "rationale": f"PGPASSWORD={secret} psql is in the claim",
            "claim_checks": [
                {"claim_id": "claim-1", "verification": "direct_observation", "detail": f"passwd={secret}"}
            ],
        }
    )
    composer = json.dumps(
        {"answer_summary": "timeout", "recommended_actions": [], "user_facing_answer": f"Rotate passwd={secret}."}
    )
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")

    roles = scripted_roles(executor=executor, verifier=verifier, composer=composer)
    result = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1)).run(
        "Why did order 123 fail?", on_session=evidence(store)
    )
    session = store.get_session(result.session_id)
    chain = audit_chain(store, result.session_id)
    assert session is not None and chain is not None
    shown = [result.answer, session.model_dump_json(), chain.model_dump_json(), json.dumps(result.self_evaluation)]
    assert not [text[text.find(secret) - 120 : text.find(secret) + 20] for text in shown if secret in text]
    assert "mysql -p[REDACTED:password]" in chain.model_dump_json()
    assert (
        result.record is not None and result.record.verifier_evaluation.executor_output_parse_status.status == "valid"
    )
