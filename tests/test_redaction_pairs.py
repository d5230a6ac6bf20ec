"""Secrets whose name and value are two items, not an assignment (issue 27 D6, red team 45): a
Go ``http.Header`` as ``%v`` prints it (``map[Authorization:[Basic …]]``), a header as a pair
(``("Authorization", "Basic …")``, a HAR entry), a ``Basic`` credential wherever it stands, a
setting written as two string literals (``props.put("db.password", "…")``,
``("DB_PASSWORD", "…")``, ``config.set('db', 'password', '…')``). Each generated shape loses
its value and keeps the text around it."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_variants import PREFIXES, SUFFIXES, secret_values
from veridiag.redaction import redact
from veridiag.redaction.keys import vocabulary

_TOKENS = st.builds(
    lambda body: "Zq7" + body,
    st.text("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-._~+/", min_size=9, max_size=30),
)
_USERS = st.sampled_from(["admin", "deploy", "pay", "svc-orders", "ci@example.com"])


@st.composite
def credentials(draw: st.DrawFn) -> tuple[str, str, str]:
    """A header's scheme and credential, and what must not survive (the credential itself; for
    Basic, the password inside it too)."""
    scheme = draw(st.sampled_from(["Basic", "BASIC", "basic", "Bearer", "Token"]))
    if scheme.lower() == "basic":
        secret = draw(secret_values)
        return scheme, base64.b64encode(f"{draw(_USERS)}:{secret}".encode()).decode(), secret
    token = draw(_TOKENS)  # RFC 6750's b64token
    return scheme, token, token


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["Authorization", "authorization", "Proxy-Authorization", "AUTHORIZATION"]),
    credentials(),
    st.sampled_from(
        [
            "map[{h}:[{c}] Accept:[*/*]]",
            "header map[Accept-Encoding:[gzip] {h}:[{c}]]",
            "{h}: [{c}]",
            "{h}=[{c}]",
            "'{h}': ['{c}']",
            "{h}:({c})",
            '("{h}", "{c}")',
            "('{h}', '{c}')",
            '{{"name": "{h}", "value": "{c}"}}',
            "{h} → {c}",
            "auth_header: {c}",
            "sent {c} upstream",
        ]
    ),
    PREFIXES,
    SUFFIXES,
)
def test_a_header_credential_in_any_wrapping_loses_its_value(
    header: str, credential: tuple[str, str, str], form: str, prefix: str, suffix: str
) -> None:
    scheme, value, secret = credential
    line = prefix + form.format(h=header, c=f"{scheme} {value}") + suffix
    redacted = redact(line)
    assert value not in redacted and secret not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


_WORDS = sorted(
    {
        word.replace(" ", "_")
        for words in vocabulary().kinds.values()
        for word in words
        if word.isascii() and word not in vocabulary().not_alone and len(word) >= 3
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_WORDS),
    st.sampled_from(["{w}", "DB_{W}", "db.{w}", "spring.datasource.{w}", "app-{w}"]),
    secret_values.filter(lambda v: "'" not in v and '"' not in v and "\\" not in v),
    st.sampled_from(['"', "'"]),
    st.sampled_from(
        [
            "({k}, {v})",
            "[{k}, {v}]",
            "props.put({k}, {v});",
            "System.setProperty({k},{v})",
            "config.set('db', {k}, {v})",
            "os.environ.setdefault({k}, {v})",
            'env = [("HOST", "db-1"), ({k}, {v})]',
        ]
    ),
    PREFIXES,
)
def test_a_secret_named_by_one_literal_loses_the_next(  # noqa: PLR0917 (one argument per strategy)
    word: str, name: str, value: str, quote: str, form: str, prefix: str
) -> None:
    key = quote + name.format(w=word, W=word.upper()) + quote
    line = prefix + form.format(k=key, v=quote + value + quote)
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and key in redacted, (line, redacted)


def test_pairs_and_words_that_hold_no_secret_are_kept() -> None:
    for line in (
        "required fields: ['username', 'password', 'email']",
        'columns = ("id", "password", "created_at")',
        'props.put("password", "")',
        "basic configuration loaded",
        "Basic auth enabled for /admin",
        "map[Accept:[*/*] User-Agent:[curl/8.5.0]]",
        'WWW-Authenticate: Basic realm="orders"',
    ):
        assert redact(line) == line, line


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([w for w in _WORDS if w.isidentifier()]),
    secret_values.filter(lambda v: "]]>" not in v),
    st.sampled_from(
        [
            "<{k}><![CDATA[{v}]]></{k}>",
            '<entry key="{k}"><![CDATA[{v}]]></entry>',
            '<property name="db.{k}"><![CDATA[{v}]]></property>',
        ]
    ),
    PREFIXES,
    SUFFIXES,
)
def test_a_cdata_section_hides_no_secret(word: str, value: str, form: str, prefix: str, suffix: str) -> None:
    """XML configs and SOAP bodies wrap a value in CDATA so that it may hold ``<`` and ``&``."""
    line = prefix + form.format(k=word, v=value) + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


def test_a_bracketed_header_keeps_its_scheme_and_brackets() -> None:
    """Only the credential goes: the line still reads as Go printed it."""
    basic = base64.b64encode(b"admin:Zq7vK3mWp2Rt").decode()
    assert (
        redact(f"map[Authorization:[Basic {basic}] Accept:[*/*]]")
        == "map[Authorization:[Basic [REDACTED:basic-auth]] Accept:[*/*]]"
    )
    assert redact("Authorization: (Bearer Zq7vK3mWp2RtXy7)") == "Authorization: (Bearer [REDACTED:bearer-token])"


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["password", "token", "secret", "api_key", "apiKey", "accessToken", "clientSecret"]),
    secret_values.filter(lambda v: not set(v) & set("'\"\\")),
    st.sampled_from(['"', "'"]),
    st.sampled_from(
        [
            "conn.set{K}({v})",
            "builder.with{K}({v}).build()",
            "cfg.{k}({v})",
            "{k}.set({v})",
            "client.use{K}( {v} )",
            "props.update{K}({v});",
        ]
    ),
    PREFIXES,
)
def test_a_setter_of_a_secret_loses_its_literal(key: str, value: str, quote: str, form: str, prefix: str) -> None:
    """A setter or builder named after a secret (``setPassword("…")``, ``withToken("…")``,
    ``.password("…")``) is given one; a getter or a check (``getPassword("alice")``) is not."""
    capital = key[0].upper() + key[1:]
    line = prefix + form.format(k=key, K=capital, v=quote + value + quote)
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix), (line, redacted)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["admin", "deploy", "svc_orders", "ci.bot@example.com"]),
    secret_values,
    st.sampled_from(["sending header {b} upstream", "creds={b}", "{b}", '{{"basic": "{b}"}}']),
    PREFIXES,
    SUFFIXES,
)
def test_base64_of_a_user_and_password_is_a_credential_bare_too(
    user: str, value: str, form: str, prefix: str, suffix: str
) -> None:
    encoded = base64.b64encode(f"{user}:{value}".encode()).decode()
    line = prefix + form.format(b=encoded) + suffix
    redacted = redact(line)
    assert encoded not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


def test_calls_and_tokens_that_hold_no_credential_are_kept() -> None:
    for line in (
        'user = repo.getPassword("alice")',
        'ok = checkToken("expired")',
        "cursor=dHJhY2U6MTIzNDU2Nzg5MA page=2",  # base64 of "trace:1234567890": an id, no secret
    ):
        assert redact(line) == line, line
