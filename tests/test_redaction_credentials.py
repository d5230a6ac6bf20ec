"""Credentials in a client's arguments (issue 27 D6, round 3): strategies generate, from every
``credentials`` entry of ``vocabulary.yaml``, the command lines that carry one — client (by
path, under sudo, in a pipeline), blanks or tabs between words, option form (``-U v``,
``--user=v``, ``-Uv``) or argument position, ``user<separator>secret`` with the separator,
``@`` and shell characters inside the secret, an escaped separator inside the user, quoting
(none, single, double, the secret alone), connect identifiers, text around the command, the
line's place in a multi-line output. The
secret never survives, the user and the text around do; ordinary lines that look alike (``ratio
3/4``, ``a/b@c`` paths, ``user%20name``, a client without its secret) are unchanged."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from veridiag.redaction import redact
from veridiag.redaction.keys import Credential, vocabulary

#: Every (client name, credential) pair the vocabulary declares: a new entry is generated too.
CREDENTIALS = [
    (name, credential) for client in vocabulary().commands for credential in client.credentials for name in client.names
]
_SAFE = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: What a secret may hold, by how it is quoted: separators, "@", and shell characters inside quotes.
_SECRET_CHARS = {
    "none": _SAFE + "!#%+,./:=@^_~",
    "single": _SAFE + '!#%+,./:=@^_~ ;|&()<>$"',
    "double": _SAFE + "!#%+,./:=@^_~ ;|&()<>'",
}
_AROUND = ["", "2026-07-07T10:00:00.157Z INFO deploy-job [exec-3] ran: ", "Jul  7 10:00:01 db-1 cron[4121]: CMD ("]
_AFTER = ["", " ; echo done order=88121", " | tee /tmp/out.log", " && ls -a /tmp"]
_LOG = [
    "2026-07-07T10:00:00Z INFO payment-service order=88121 paid in 29ms",
    "2026-07-07T10:00:01Z WARN db-1 ratio 3/4 of pool busy",
]


def _quoted(value: str, quoting: str) -> str:
    return {"none": value, "single": f"'{value}'", "double": f'"{value}"'}[quoting]


@st.composite
def secrets(draw: st.DrawFn, quoting: str) -> str:
    body = draw(st.text(alphabet=_SECRET_CHARS[quoting], min_size=4, max_size=18))
    return "Zq7" + body


@st.composite
def users(draw: st.DrawFn, separator: str | None) -> str:
    user = draw(st.from_regex(r"[a-z][a-z0-9_.]{0,10}", fullmatch=True))
    if separator is not None and separator != "/" and draw(st.booleans()):
        user = draw(st.sampled_from(["corp/", "CORP\\\\", ""])) + user  # a domain before the user
    if separator not in (None, "/") and draw(st.integers(0, 4)) == 0:
        user += "\\" + separator + "x"  # the separator escaped inside the user ("\\/" is JSON's "/")
    return user


@st.composite
def credential_arguments(draw: st.DrawFn, credential: Credential) -> tuple[str, str, str | None]:
    """The argument carrying ``credential``'s secret; the secret; the user (if written)."""
    quoting = draw(st.sampled_from(["none", "single", "double", "secret"]))
    secret = draw(secrets("none" if quoting == "secret" else quoting))
    if credential.separator is None:
        return _quoted(secret, "single" if quoting == "secret" else quoting), secret, None
    user = draw(users(credential.separator))
    if quoting == "secret":
        secret = draw(secrets("single"))
        written = f"{user}{credential.separator}'{secret}'"
    else:
        written = f"{user}{credential.separator}{secret}"
    if credential.until is not None and (draw(st.booleans()) or credential.until in secret):
        written += credential.until + draw(st.sampled_from(["orcl", "db-1:1521/ORCLPDB1", "//db-1/svc", "10.0.0.7"]))
    return (written if quoting == "secret" else _quoted(written, quoting)), secret, user


@st.composite
def credential_lines(draw: st.DrawFn) -> tuple[str, str, str | None, str, str]:
    """A command line with a credential somewhere in a log output; the secret, the user, and
    the text that must stay before and after it."""
    name, credential = draw(st.sampled_from(CREDENTIALS))
    argument, secret, user = draw(credential_arguments(credential))
    flags = draw(st.lists(st.sampled_from(["-s", "-v", "-L"]), max_size=2))
    words: list[str]
    if credential.options:
        option = draw(st.sampled_from(credential.options))
        forms = [f"{option} {argument}", f"{option}={argument}"]
        if len(option) == 2 and option.startswith("-"):
            forms.append(f"{option}{argument}")
        words = [*flags, draw(st.sampled_from(forms)), "//fs-1/share"]
    elif credential.argument == "named":
        key = draw(st.sampled_from(["password", "aws_secret_access_key", "db.password", "api_token"]))
        words = [*flags, key, argument]
    elif credential.argument == "any":
        words = [*flags, argument, draw(st.sampled_from(["", "@/srv/sql/check.sql", "nocatalog"]))]
    else:
        count = credential.argument - 1 if isinstance(credential.argument, int) else draw(st.integers(0, 2))
        words = [*flags, *(f"arg{i}" for i in range(count)), argument]
    if credential.when:
        flag = draw(st.sampled_from(credential.when))
        words.insert(0, draw(st.sampled_from([flag, flag + "c", "-n" + flag[1:]])))
    path = draw(st.sampled_from(["", "/usr/bin/", "sudo ", "$ORACLE_HOME/bin/"]))
    before = draw(st.sampled_from(_AROUND))
    after = draw(st.sampled_from(_AFTER))
    blank = draw(st.sampled_from([" ", " ", "\t", "  "]))
    line = f"{before}{path}{name}{blank}{blank.join(w for w in words if w)}{after}"
    lines = draw(st.lists(st.sampled_from(_LOG), max_size=2))
    at = draw(st.integers(0, len(lines)))
    text = "\n".join([*lines[:at], line, *lines[at:]])
    return text, secret, user, before, after


@settings(max_examples=400, deadline=None)
@given(credential_lines())
# the token rule stops before the ":" the grammar's secret ends with: the user still stays
@example(("sqlplus a0123/Zq745689ABCDEFGHJ:", "Zq745689ABCDEFGHJ:", "a0123", "", ""))
def test_a_credential_in_a_clients_arguments_never_survives(case: tuple[str, str, str | None, str, str]) -> None:
    text, secret, user, before, after = case
    redacted = redact(text)
    assert secret not in redacted, (text, redacted)
    assert user is None or user.split("\\")[0] in redacted, (text, redacted)
    line = next(line for line in redacted.split("\n") if "[REDACTED:" in line)
    assert line.startswith(before) and line.endswith(after), (text, redacted)
    assert redact(redacted) == redacted


@given(
    st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
    secrets("none").filter(lambda s: not set(s) & set("/:")),
    st.sampled_from(["thin", "oci", "oci8"]),
    st.sampled_from(["db-1:1521:ORCL", "//db-1.internal:1521/pay", "(DESCRIPTION=(ADDRESS=(HOST=db-1)))"]),
)
def test_an_oracle_jdbc_url_loses_its_password(user: str, secret: str, driver: str, target: str) -> None:
    line = f"HikariPool-1 - url=jdbc:oracle:{driver}:{user}/{secret}@{target} connection refused"
    redacted = redact(line)
    assert secret not in redacted and redacted.endswith(f"@{target} connection refused"), redacted
    assert f"{user}/[REDACTED:password]@" in redacted or "[REDACTED:high-entropy]@" in redacted  # user/secret: base64


_WORD = st.from_regex(r"[a-z][a-z0-9_]{1,10}", fullmatch=True)
_ORDINARY = st.one_of(
    st.builds("ratio {}/{} of the pool busy".format, st.integers(0, 99), st.integers(1, 99)),
    st.builds("read /srv/{}/{}@{} ok".format, _WORD, _WORD, _WORD),
    st.builds("npm i @{}/{}@1.2.{}".format, _WORD, _WORD, st.integers(0, 9)),
    st.builds("GET /users/{}%20{} 200".format, _WORD, _WORD),
    st.builds("lftp -u {} {}.example.com".format, _WORD, _WORD),
    st.builds("lftp -u {}, {}.example.com".format, _WORD, _WORD),
    st.builds("smbclient -U {} //fs-1/{}".format, _WORD, _WORD),
    st.builds("smbclient -N //fs-1/{} -c 'ls {}/{}'".format, _WORD, _WORD, _WORD),
    st.sampled_from(["sqlplus / as sysdba", "sqlplus /nolog", "rman target / nocatalog", "SQL> conn / as sysdba"]),
    st.builds("sqlplus -s @{}/{}.sql".format, _WORD, _WORD),
    st.builds("expdp parfile=/u01/{}/{}.par".format, _WORD, _WORD),
    st.builds("htpasswd -n {}".format, _WORD),
    st.builds("htpasswd -D /etc/nginx/.htpasswd {}".format, _WORD),
    st.builds("rabbitmqctl add_user {}".format, _WORD),
    st.builds("vault login -method={} username={}".format, st.sampled_from(["oidc", "userpass", "ldap"]), _WORD),
    st.builds("rman backup {}/{} pieces done".format, st.integers(0, 9), st.integers(1, 9)),
    st.builds("psexec.py -h; {} {}:{}".format, _WORD, _WORD, st.integers(1, 65535)),
)


@given(_ORDINARY)
def test_lines_that_only_look_like_credentials_are_unchanged(line: str) -> None:
    assert redact(line) == line
