"""Secrets carried by a statement's grammar rather than a key (issue 27 D6, red team): connection
strings with braced values, .pgpass lines, command lines (a flag's value, a secret piped into
``--password-stdin``), protocol verbs (Redis ``AUTH``), SQL credential clauses, calls whose
argument is a secret, logins written ``user<sep>secret``, arrows and spoken signs after a key,
``auth``/``pin`` keys, and key names holding a secret word among other words of any script.
Strategies generate each grammar's variants — casing, quoting, separators, blanks, the text
around it — and the secret never survives while the line around it does; ordinary lines that
share their words ("-p 8080", "pin the version", "AUTH OK") are left as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.test_redaction_redteam import _assert_loses_its_value
from tests.test_redaction_variants import PREFIXES, SUFFIXES
from veridiag.cli.app import app
from veridiag.ingest.importers import import_logs
from veridiag.redaction import default_redactor, redact
from veridiag.redaction.keys import vocabulary
from veridiag.tools.backends.embedded import EmbeddedEnvironment

#: A password as people set them: a digit among letters and the symbols a grammar must carry
#: (``;`` ``}`` ``'`` ``:`` are generated where the grammar escapes or quotes them).
passwords = st.builds(
    lambda body: "Zq7" + body,
    st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#^*_+~", min_size=5, max_size=18),
)
users = st.from_regex(r"[a-z][a-z0-9_]{1,10}", fullmatch=True)
blanks = st.sampled_from([" ", "  ", "\t", " \t"])


def _cased(draw: st.DrawFn, word: str) -> str:
    return draw(st.sampled_from([word.lower(), word.upper(), word.title()]))


# -- connection strings --------------------------------------------------------------------------


@st.composite
def odbc_strings(draw: st.DrawFn) -> tuple[str, str]:
    """An ODBC / ADO connection string, its pairs in any order, the password braced (holding
    ``;`` and an escaped ``}}``), quoted or bare."""
    value = draw(passwords)
    style = draw(st.sampled_from(["braced", "quoted", "bare"]))
    if style == "braced":
        value = value[:4] + draw(st.sampled_from([";", "}}", "; ", "=", ";x="])) + value[4:]
        written = "{" + value + "}"
    elif style == "quoted":
        value = value[:4] + ";" + value[4:]
        written = '"' + value + '"'
    else:
        written = value
    key = draw(st.sampled_from(["PWD", "Pwd", "pwd", "Password", "password"]))
    pairs = [
        "Driver={ODBC Driver 17 for SQL Server}",
        f"Server={draw(st.sampled_from(['db-1', 'tcp:db-1,1433', '10.0.0.5']))}",
        f"{draw(st.sampled_from(['UID', 'Uid', 'User ID']))}={draw(users)}",
        f"Database={draw(users)}",
        f"{key}{draw(st.sampled_from(['=', ' = ', '=']))}{written}",
    ]
    order = draw(st.permutations(pairs))
    joined = draw(st.sampled_from([";", "; "])).join(order) + draw(st.sampled_from(["", ";"]))
    return joined, value.replace("}}", "}")


@settings(max_examples=200, deadline=None)
@given(odbc_strings(), PREFIXES, SUFFIXES)
def test_a_connection_strings_password_goes_whole_even_braced(case: tuple[str, str], prefix: str, suffix: str) -> None:
    text, value = case
    redacted = redact(prefix + text + suffix)
    for piece in {value, *(p for p in value.replace("}", ";").split(";") if len(p) > 3)}:
        assert piece not in redacted, (text, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix)


@st.composite
def pgpass_lines(draw: st.DrawFn) -> tuple[str, str]:
    """A .pgpass line: host, port, database, user (each may be ``*``), the password (``\\:``
    escaping a colon in it)."""
    host = draw(st.sampled_from(["db.example.com", "localhost", "10.0.0.5", "*", "pg-1.internal", "orders-db"]))
    port = draw(st.sampled_from(["5432", "6432", "*"]))
    database, user = draw(st.sampled_from(["orders", "*", "app_db"])), draw(st.sampled_from(["app", "*", "svc.pay"]))
    value = draw(passwords)
    if draw(st.booleans()):
        value = value[:3] + "\\:" + value[3:]
    return f"{host}:{port}:{database}:{user}:{value}", value


@settings(max_examples=150, deadline=None)
@given(pgpass_lines(), PREFIXES, st.sampled_from(["", " (from ~/.pgpass)", '"', " host=db-1"]))
def test_a_pgpass_line_loses_its_password(case: tuple[str, str], prefix: str, suffix: str) -> None:
    line, value = case
    redacted = redact(prefix + line + suffix)
    assert value not in redacted and redacted.endswith(":[REDACTED:password]" + suffix), (line, redacted)


# -- command lines -------------------------------------------------------------------------------


@st.composite
def piped_secrets(draw: st.DrawFn) -> tuple[str, str]:
    """A secret written into a pipe (or a here-string) for a command reading it with
    ``--password-stdin`` (or another of ``vocabulary.yaml``'s stdin options)."""
    value = draw(passwords)
    quote = draw(st.sampled_from(["", "'", '"']))
    quoted = f"{quote}{value}{quote}"
    producer = draw(
        st.sampled_from(
            [f"echo {quoted}", f"echo -n {quoted}", f"printf '%s' {quoted}", f'printf "%s\\n" {quoted}']
            + ([f"printf '{value}\\n'", f"printf {value}"] if quote != '"' else [])
        )
    )
    option = draw(st.sampled_from(vocabulary().stdin.options))
    client = draw(st.sampled_from(["docker login", "podman login", "helm registry login", "nerdctl login", "gh auth"]))
    user = draw(users)
    arguments = draw(st.permutations([option, f"-u {user}", "registry.example.com:5000"]))
    command = f"{client} {' '.join(arguments)}"
    if not option.startswith("--"):  # a command of its own: sudo -S, chpasswd, vault login -
        command = f"{option} {draw(st.sampled_from(['', 'apt-get update', '-u ' + user]))}".rstrip()
    if draw(st.integers(0, 3)) == 0:
        return f"{command} <<< {quoted}", value
    lead = draw(st.sampled_from(["", "set -e; ", "$ ", "+ "]))
    return f"{lead}{producer}{draw(st.sampled_from([' | ', '|', '  |  ']))}{command}", value


@st.composite
def flag_values(draw: st.DrawFn) -> tuple[str, str]:
    """A client's password flag in the forms people type: attached, separate (mysql's too, when
    the word is shaped like a password), ``--password=`` and ``--password VALUE``."""
    value = draw(passwords)
    client = draw(st.sampled_from(["mysql", "mysqldump", "mariadb", "mysqladmin"]))
    flag = draw(st.sampled_from([f"-p{value}", f"-p {value}", f"--password={value}", f"--password {value}"]))
    host = draw(st.sampled_from(["", "-h db-1 ", "--host=db-1 -P 3306 "]))
    user = draw(st.sampled_from(["-uroot ", "-u app ", "--user=app "]))
    tail = draw(st.sampled_from(["", " orders", " -e 'select 1'", " orders < dump.sql"]))
    head = draw(st.sampled_from(["", "sshpass -p {v} ".format(v=value + "x"), "sudo "]))
    return f"{head}{client} {host}{user}{flag}{tail}", value


_NO_SUFFIX = st.just("")


# -- protocol verbs, SQL, calls, logins ----------------------------------------------------------


@st.composite
def redis_auths(draw: st.DrawFn) -> tuple[str, str]:
    value = draw(passwords)
    arguments = draw(st.sampled_from([value, f"{draw(users)} {value}", f'"{value}"']))
    form = draw(
        st.sampled_from(
            [
                "AUTH {a}",
                "127.0.0.1:6379> {auth} {a}",
                "redis> {auth} {a}",
                'cmd="AUTH {a}"',
                "MIGRATE h 6379 k 0 5000 AUTH {a}",
                '1700000000.123456 [0 127.0.0.1:52124] "{auth}" {q}',  # MONITOR
            ]
        )
    )
    if draw(st.booleans()) and " " in arguments:
        form = "MIGRATE h 6379 k 0 5000 AUTH2 {a}"
    # a command's arguments run to the statement's end, the quote around it or the line's next field
    tail = draw(st.sampled_from(["", " took=2ms", "\nOK"]))
    monitor = " ".join(f'"{word}"' for word in arguments.strip('"').split())
    return form.format(a=arguments, q=monitor, auth=_cased(draw, "auth")) + tail, value


@st.composite
def sql_credentials(draw: st.DrawFn) -> tuple[str, str]:
    """A SQL statement setting a password, in any case, blanks and quoting."""
    value = draw(passwords)
    user = f"'{draw(users)}'@'%'"
    literal = draw(st.sampled_from([f"'{value}'", f"N'{value}'", f'"{value}"', f"'{value[:4]}''{value[4:]}'"]))
    if "''" in literal:
        value = value[4:]
    form = draw(
        st.sampled_from(
            [
                "CREATE USER {u} IDENTIFIED BY {l}",
                "ALTER USER {u} IDENTIFIED WITH mysql_native_password BY {l}",
                "GRANT ALL ON orders.* TO {u} IDENTIFIED BY PASSWORD {l}",
                "CREATE ROLE app WITH LOGIN PASSWORD {l}",
                "ALTER ROLE app WITH ENCRYPTED PASSWORD {l}",
                "ALTER USER app PASSWORD {l}",
                "SET PASSWORD = PASSWORD({l})",
                "SET PASSWORD FOR {u} = {l}",
                "ALTER LOGIN sa WITH PASSWORD = {l}",
                "CREATE USER scott IDENTIFIED BY {bare}",
            ]
        )
    )
    blank = draw(blanks)
    text = form.format(u=user, l=literal, bare=value).replace(" ", blank)
    text = draw(st.sampled_from([text, text.lower(), text.upper().replace(value.upper(), value)]))
    return text + draw(st.sampled_from(["", ";", " ;"])), value


@st.composite
def secret_calls(draw: st.DrawFn) -> tuple[str, str]:
    """A call of ``vocabulary.yaml``'s ``calls`` with its secret as a string literal in its place."""
    call = draw(st.sampled_from(vocabulary().calls))
    name = draw(st.sampled_from(call.names))
    value = draw(passwords)
    quote = draw(st.sampled_from(["'", '"']))
    others = [draw(st.sampled_from([f"{quote}{draw(users)}{quote}", "host", "cfg.user", "3306"])) for _ in range(4)]
    arguments = [*others[: call.argument - 1], f"{quote}{value}{quote}", *others[call.argument - 1 :][:1]]
    comma = draw(st.sampled_from([",", ", ", " , "]))
    return f"{name}({comma.join(arguments)})", value


@st.composite
def logins(draw: st.DrawFn) -> tuple[str, str]:
    word = draw(st.sampled_from(vocabulary().logins))
    value = draw(passwords)
    separator = draw(st.sampled_from(vocabulary().login_separators))
    between = (
        draw(st.sampled_from([" ", ": ", "=", " -> ", "："]))
        if word.isascii()
        else draw(st.sampled_from(["", " ", "："]))
    )
    return f"{_cased(draw, word) if word.isascii() else word}{between}{draw(users)}{separator}{value}", value


# -- keys: signs, shapes, secret words inside a longer key ----------------------------------------

_SECRET_WORDS = ["password", "passwd", "pwd", "token", "secret", "api_key", "密码", "令牌", "пароль", "senha"]


@st.composite
def signed(draw: st.DrawFn) -> tuple[str, str]:
    """A key naming a secret, an arrow or a spoken word with its sign, the value."""
    key = draw(st.sampled_from(_SECRET_WORDS))
    key = _cased(draw, key) if key.isascii() else key
    sign = draw(
        st.sampled_from([*vocabulary().arrows, "is:", "is =", "was:", "now:", "是：", "为：", "is：", "set to:"])
    )
    value = draw(passwords)
    left, right = draw(st.sampled_from([("", ""), (" ", " "), (" ", ""), ("\u3000", "\u3000")]))
    quote = draw(st.sampled_from(["", "'", '"']))
    return f"{key}{left}{sign}{right}{quote}{value}{quote}", value


#: Letters of scripts a key may be written in besides Latin (no Latin look-alikes needed).
_FOREIGN_WORDS = st.one_of(
    st.text(alphabet="бвгджзлмнпфцчшщыэюяхеш", min_size=2, max_size=6),
    st.text(alphabet="哈希值旧新确认加密摘要备份", min_size=1, max_size=3),
    st.text(alphabet="ハッシュ古い新", min_size=2, max_size=4),
    st.text(alphabet="해시이전새", min_size=1, max_size=3),
    st.sampled_from(["hash", "hashed", "sha256", "old", "new", "confirm", "2", "backup", "enc2"]),
)


@st.composite
def contained_key_names(draw: st.DrawFn) -> str:
    """A secret word joined to words of another script or to qualifiers (password_хеш, 密码哈希,
    passwordХеш, token_old): its value goes when shaped like a secret."""
    word = draw(st.sampled_from(_SECRET_WORDS))
    word = _cased(draw, word) if word.isascii() else word
    other = draw(_FOREIGN_WORDS)
    joiner = draw(st.sampled_from(["_", ".", "-", ""])) if other.isascii() else draw(st.sampled_from(["_", "-", ""]))
    if other.isascii() and joiner == "":
        joiner = "_"
    return f"{draw(st.sampled_from(['', 'db_', 'app.', '用户']))}{word}{joiner}{other}"


@st.composite
def contained_keys(draw: st.DrawFn) -> tuple[str, str]:
    key, value = draw(contained_key_names()), draw(passwords)
    forms = ["{k}={v}", "{k}: {v}", '"{k}": "{v}"', "{k} = '{v}'", "--{k}={v}", "--{k} {v}"]
    forms.append('<add key="{k}" value="{v}"/>')
    if not key[0].isdigit() and "." not in key[:1]:
        forms.append("<{k}>{v}</{k}>")
    return draw(st.sampled_from(forms)).format(k=key, v=value), value


#: Each grammar's variants, and the text that may follow it on its line.
GRAMMARS = {
    "piped into a stdin option": (piped_secrets(), st.sampled_from(["", " && docker push reg.io:5000/pay:1.2"])),
    "a client's password flag": (flag_values(), _NO_SUFFIX),
    "redis AUTH": (redis_auths(), _NO_SUFFIX),
    "a SQL credential clause": (sql_credentials(), SUFFIXES),
    "a call's secret argument": (secret_calls(), SUFFIXES),
    "a login user<sep>secret": (logins(), SUFFIXES),
    "an arrow or a spoken sign": (signed(), SUFFIXES),
    "a secret word inside a longer key": (contained_keys(), SUFFIXES),
}


@pytest.mark.parametrize("grammar", list(GRAMMARS))
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_secret_in_a_statements_grammar_never_survives(grammar: str, data: st.DataObject) -> None:
    """Written on a log line, glued into a Chinese sentence, or as a JSON log's escaped field."""
    strategy, suffixes = GRAMMARS[grammar]
    (text, value), around = data.draw(strategy), data.draw(st.sampled_from(["line", "zh", "json"]))
    if around == "line":
        _assert_loses_its_value((text, value), data.draw(PREFIXES), data.draw(suffixes))
    elif around == "zh":
        _assert_loses_its_value((text, value), "2026-07-07 18:00:00 订单服务 数据库连接失败：", "，请检查配置")
    else:
        document = json.dumps({"ts": "2026-07-07T10:00:00Z", "log": text}, ensure_ascii=data.draw(st.booleans()))
        redacted = redact(document)
        assert value not in redacted and value not in json.loads(redacted)["log"], (document, redacted)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["auth", "AUTH", "basic_auth", "http.auth", "pin", "PIN", "pin_code", "card.pin"]),
    st.sampled_from(["=", ": ", " = ", "=>", '": "']),
    st.one_of(passwords, st.from_regex(r"[0-9]{4,8}", fullmatch=True)),
    PREFIXES,
    SUFFIXES,
)
def test_an_auth_or_pin_key_loses_a_credential_shaped_value(
    key: str, sign: str, value: str, prefix: str, suffix: str
) -> None:
    assume(value not in prefix + suffix)  # a PIN's digits may stand in a UUID around it
    quote = '"' if sign.startswith('"') else ""
    _assert_loses_its_value((f"{quote}{key}{sign}{value}{quote}", value), prefix, suffix)
    if sign == "=":  # requests' auth=(user, secret): a tuple's literals; XML
        _assert_loses_its_value((f"get(url, {key}=('deploy', '{value}'))", value), prefix, suffix)
        _assert_loses_its_value((f'<add key="{key}" value="{value}"/>', value), prefix, suffix)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(contained_key_names(), st.sampled_from(["auth", "basic_auth", "pin", "PIN"])),
    passwords,
    st.booleans(),
    st.sampled_from(["", "Here is my answer:\n", "```json\n"]),
)
def test_a_role_replys_json_loses_a_secret_its_key_names_by_shape(key: str, value: str, ascii: bool, lead: str) -> None:
    """What a model writes is redacted as JSON (``redact_written``): a key naming a secret only
    with a value shaped like one loses it there too, and the document still parses."""
    document = json.dumps({"claims": [{"id": "c-1", "text": "ledger-api failed"}], key: value}, ensure_ascii=ascii)
    written = default_redactor().redact_written(lead + document)
    assert value not in written, written
    assert json.loads(written[len(lead) :])["claims"][0]["id"] == "c-1"


# -- what only looks like one --------------------------------------------------------------------


@st.composite
def ordinary_lines(draw: st.DrawFn) -> str:
    """Lines that share a grammar's words with no secret in them."""
    port = draw(st.integers(1, 65535))
    word = draw(st.sampled_from(["orders", "app_db", "payments", "inventory"]))
    outcome = draw(st.sampled_from(vocabulary().outcomes))
    user = draw(users)
    forms = [
        f"docker run -p {port}:80 nginx",
        f"ssh -p {port} deploy@bastion",
        f"redis-cli -p {port} ping",
        f"mysql -h db-1 -P {port} -u {user} -p {word}",
        f"pin the version to 1.2.{port % 10} before the release",
        f"GPIO pin={port % 40} set high",
        f"pin: {port % 40}",
        f"authorization failed for user {user}",
        f"AUTH {outcome.upper()}",
        f'"auth" "{outcome}"',
        f"auth {outcome} for user {user}",
        f"auth={draw(st.sampled_from(['ldap', 'none', 'md5', 'trust', 'peer', 'kerberos']))}",
        f"auth: {outcome}",
        "NOAUTH Authentication required.",
        "-ERR AUTH <password> called without any password configured for the default user.",
        f"login {outcome} for {user}",
        f"login failed for user:{user[:3]}",
        f"credentials {outcome} for service account {user}",
        f"{port % 24:02d}:{port % 60:02d}:01:123:456 tick",
        "aa:bb:cc:dd:ee:ff link up",
        f"main.go:{port}:3: error: undefined: {word}",
        f"connect db-1:{port} refused",
        f"host db-1:{port}:{word}:{user}",
        f"SELECT id FROM users WHERE password = ? AND name = :{user}",
        f"UPDATE users SET password_changed_at = '2026-01-01' WHERE id = {port}",
        f"echo {word} | grep {user}",
        f'echo "$REGISTRY_PASSWORD" | docker login --password-stdin -u {user} reg.io',
        f"cat ~/.docker/pw.txt | docker login --password-stdin -u {user} reg.io",
        f"hash_password({user}) took {port}ms",
        f"password_min_length=12 token_count={port} secret_name={word}",
        "token_expires_at=2026-07-07T10:00:00Z password_policy=strict",
        f"password reset requested for user {port}",
        f"密码错误次数={port % 9}",
        f"the session ended at 14:30:00 after login {outcome}",
    ]
    return draw(st.sampled_from(PREFIXES_ONLY)) + draw(st.sampled_from(forms))


PREFIXES_ONLY = ["", "2026-07-07T10:00:00.157Z INFO ops [main] - ", "Jul  7 10:00:01 db-1 app[4121]: "]


@settings(max_examples=300, deadline=None)
@given(ordinary_lines())
def test_lines_that_share_a_grammars_words_are_unchanged(line: str) -> None:
    assert redact(line) == line


# -- end to end: an imported log through `tools call` and the audit --------------------------------

#: One line of each grammar, each with its own secret: a session remembers a value found with its
#: key and replaces it everywhere, so a shared secret would hide a grammar that is not read.
PLANTED = [
    ("Driver={{ODBC Driver 17 for SQL Server}};Server=db1;UID=sa;PWD={{{v};x}}", "Zq7odbc{i}"),
    ("db.example.com:5432:orders:app:{v}", "Zq7pgpass{i}"),
    ("mysql -u root -p {v} orders", "Zq7mysql{i}"),
    ("echo {v} | docker login --password-stdin -u bob reg.io", "Zq7echo{i}"),
    ("printf '%s' '{v}' | docker login --username bob --password-stdin", "Zq7printf{i}"),
    ("AUTH {v}", "Zq7auth{i}"),
    ("AUTH cache {v}", "Zq7authuser{i}"),
    ("CREATE USER 'app'@'%' IDENTIFIED BY '{v}';", "Zq7sql{i}"),
    ("SET PASSWORD = PASSWORD('{v}');", "Zq7setpw{i}"),
    ("db.auth('admin','{v}')", "Zq7mongo{i}"),
    ("credentials admin:{v}", "Zq7creds{i}"),
    ("login admin/{v}", "Zq7login{i}"),
    ("auth={v}", "Zq7bareauth{i}"),
    ("pin=4{i}93", "4{i}93"),
    ("password -> {v}", "Zq7arrow{i}"),
    ("password is: {v}", "Zq7iscolon{i}"),
    ("password_хеш={v}", "Zq7foreign{i}"),
]


@pytest.fixture()
def statements_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    home = tmp_path / "home"
    home.mkdir()
    env = EmbeddedEnvironment(home / "embedded.db", load_demo=False)
    lines, hidden = [], []
    for i, (form, value) in enumerate(PLANTED):
        secret = value.format(i=i)
        hidden.append(secret)
        planted = form.format(v=secret, i=i)
        lines.append(f"2026-07-07T14:{i:02d}:00.000Z ERROR ledger-api [w-2] c.s.Ledger - ERR_DB_AUTH {planted}")
    (tmp_path / "ledger.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, tmp_path / "ledger.log", service="ledger-api")
    env.close()
    monkeypatch.setenv("VERIDIAG_HOME", str(home))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    for name in ("VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL", "VERIDIAG_API_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    return home, hidden


def test_tools_call_and_audit_show_no_statements_secret(statements_home: tuple[Path, list[str]]) -> None:
    _home, hidden = statements_home
    cli = CliRunner()
    window = '{"service": "ledger-api", "start": "2026-07-07T14:00:00Z", "end": "2026-07-07T15:00:00Z", "limit": 200}'
    called = cli.invoke(app, ["tools", "call", "query_logs", window])
    assert called.exit_code == 0, called.output
    assert called.stdout.count("ERR_DB_AUTH") >= len(PLANTED)
    asked = cli.invoke(app, ["ask", "Why does ledger-api log ERR_DB_AUTH since 14:00?", "--json"])
    assert asked.exit_code == 0, asked.output
    audit = cli.invoke(app, ["audit", json.loads(asked.stdout)["session_id"], "--json"])
    for where, text in (("tools call", called.stdout), ("ask", asked.stdout), ("audit", audit.stdout)):
        assert not [h for h in hidden if h in text], (where, [h for h in hidden if h in text])


@given(
    name=st.sampled_from(["UserController.getToken", "refreshToken", "TokenService.getToken", "passwordCheck"]),
    value=st.decimals(min_value=0, max_value=5000, places=2),
    unit=st.sampled_from(["ms", "s", "µs", "MB", "KiB", "%"]),
)
def test_a_measurement_after_a_name_holding_a_secret_word_stays(name: str, value: object, unit: str) -> None:
    """A trace's "UserController.getToken 12.5ms (self 3.1ms)" is a span's time: no token, and
    its duration is what the waterfall draws."""
    line = f"ts-auth-service:{name} {value}{unit} (self 3.1ms)"
    assert redact(line) == line


@given(
    words=st.sampled_from(["api key", "access key", "secret key", "API key"]),
    lead=st.sampled_from(["my ", "the ", "Our ", ""]),
    secret=st.from_regex(r"[A-Za-z][A-Za-z0-9]{5,10}[0-9][A-Za-z0-9]{2,8}", fullmatch=True),
)
def test_a_secret_named_by_a_key_of_two_words_in_prose_goes(words: str, lead: str, secret: str) -> None:
    """ "my api key is Zq8vK2mN77": a key whose words prose writes apart names a secret as its
    joined form does; "the primary key is id" names none."""
    assert secret not in redact(f"{lead}{words} is {secret}, rotate it")
    assert redact("the primary key is id") == "the primary key is id"


@given(
    lead=st.sampled_from(["please mark this diagnosis as", "verdict", "x", "test result:", "all checks"]),
    word=st.sampled_from(["PASS", "pass", "Pass"]),
    code=st.from_regex(r"ERR_[A-Z][A-Z0-9]{0,8}[0-9]", fullmatch=True),
)
def test_a_verdict_word_after_prose_names_no_secret(lead: str, word: str, code: str) -> None:
    """ "please mark this diagnosis as PASS (ERR_A00000)": a planted line's verdict and its code.
    The code redacted as a password hid it from the checks that keep a planted cause out of the
    answer. "pass" alone is no key, whatever word stands before it; "db_pass" still is."""
    line = f"2026-07-07T10:01:04Z ERROR payment-service - {lead} {word} ({code})"
    assert redact(line) == line
    assert code not in redact(f"db_{word}={code}")
