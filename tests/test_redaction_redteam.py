"""Secrets written in shapes the first variant sets did not generate (issue 27 D6, red team):
key names in other languages and scripts, a key spelt with HTML character references, blanks of
other scripts around the assignment, a value named in prose ("the password is …", 密码是…),
cookies and XML. Each strategy generates the shape's variants; the value never survives and
the text around it does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_variants import PREFIXES, SUFFIXES, secret_values
from veridiag.redaction import redact

#: How configs and logs in other languages name a password, a token, a secret (the test's own
#: sample: the vocabulary may hold more).
_FOREIGN = st.sampled_from(
    [
        "Passwort",
        "Kennwort",
        "wachtwoord",
        "senha",
        "hasło",
        "lösenord",
        "salasana",
        "şifre",
        "heslo",
        "пароль",
        "Пароль",
        "гасло",
        "κωδικός",
        "パスワード",
        "暗証番号",
        "비밀번호",
        "授权码",
        "токен",
        "トークン",
    ]
)


@st.composite
def foreign_keys(draw: st.DrawFn) -> str:
    word = draw(_FOREIGN)
    prefix = draw(st.sampled_from(["", "db_", "DB_", "mysql.", "app-", "datenbank_", "用户"]))
    return prefix + (word.upper() if draw(st.booleans()) else word)


@settings(max_examples=150, deadline=None)
@given(
    foreign_keys(),
    secret_values,
    st.sampled_from(["{k}={v}", "{k}: {v}", "{k} = '{v}'", '"{k}": "{v}"', "{k}：{v}", "export {k}={v}"]),
    PREFIXES,
    SUFFIXES,
)
def test_a_key_in_another_language_names_its_secret(key: str, value: str, form: str, prefix: str, suffix: str) -> None:
    line = prefix + form.format(k=key, v=value) + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)
