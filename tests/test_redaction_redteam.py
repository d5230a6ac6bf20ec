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


def _assert_loses_its_value(case: tuple[str, str], prefix: str, suffix: str) -> None:
    """The secret of ``case`` (text, value) between ``prefix`` and ``suffix``: its value gone, the
    line around it as written."""
    text, value = case
    line = prefix + text + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


def _reference(char: str, how: str) -> str:
    """``char`` as an HTML character reference: decimal, hex, or its name where it has one."""
    names = {"=": "&equals;", ":": "&colon;", '"': "&quot;", "&": "&amp;"}
    if how == "name" and char in names:
        return names[char]
    return f"&#x{ord(char):x};" if how == "hex" else f"&#{ord(char)};"


@st.composite
def referenced(draw: st.DrawFn) -> tuple[str, str]:
    """A ``key=value`` line whose key or assignment has characters written as HTML references,
    once or twice encoded (``&amp;#112;``), with blanks of other scripts around the sign."""
    key = draw(st.sampled_from(["password", "db_password", "api_key", "token", "client_secret", "密码"]))
    value = draw(secret_values)
    sign = draw(st.sampled_from(["=", ":", "＝", "："]))
    blank = draw(st.sampled_from(["", " ", "\u3000", "\t"]))
    pair = f"{key}{blank}{sign}{blank}"
    spots = draw(st.lists(st.integers(0, len(pair) - 1), min_size=0, max_size=3, unique=True))
    how = draw(st.sampled_from(["dec", "hex", "name"]))
    twice = draw(st.booleans())
    written = "".join(
        (_reference(c, how).replace("&", "&amp;", 1) if twice else _reference(c, how))
        if i in spots and c.strip()
        else c
        for i, c in enumerate(pair)
    )
    return written + value, value


@settings(max_examples=200, deadline=None)
@given(referenced(), PREFIXES, SUFFIXES)
def test_a_key_written_with_html_references_or_wide_blanks_still_names_its_secret(
    case: tuple[str, str], prefix: str, suffix: str
) -> None:
    _assert_loses_its_value(case, prefix, suffix)


@st.composite
def spoken(draw: st.DrawFn) -> tuple[str, str]:
    """A secret named in prose, without an assignment sign: "the password is …", 密码是…,
    "token set to …", "apikey …", in any case, quoted or bracketed or bare."""
    key = draw(st.sampled_from(["password", "Password", "PASSWORD", "passwd", "apikey", "secret-key", "access_token"]))
    zh = draw(st.sampled_from(["密码", "口令", "令牌", "支付密码", "密钥"]))
    latin = draw(st.sampled_from([" ", "  ", "\t", " is ", " was ", " set to ", " is now ", " changed to ", "\u3000"]))
    han = draw(st.sampled_from(["是", "为", "為", " ", "为 ", "设置为", "重置为", "\u3000"]))
    key, between = draw(st.sampled_from([(key, latin), (zh, han)]))
    value = draw(secret_values).rstrip("_+~!@#$^*")  # what ends a word in prose is no part of it
    opened, closed = draw(st.sampled_from([("", ""), ('"', '"'), ("'", "'"), ("(", ")"), ("`", "`")]))
    lead = draw(st.sampled_from(["", "the ", "new ", "用户 alice 的", "reset: "]))
    tail = draw(st.sampled_from(["", ".", ",", "，请勿外传", " for user alice", " 已下发"]))
    return f"{lead}{key}{between}{opened}{value}{closed}{tail}", value


@settings(max_examples=200, deadline=None)
@given(spoken(), PREFIXES, SUFFIXES)
def test_a_secret_named_in_prose_loses_its_value(case: tuple[str, str], prefix: str, suffix: str) -> None:
    _assert_loses_its_value(case, prefix, suffix)


@given(
    st.sampled_from(["password", "token", "密码", "secret", "apikey"]),
    st.sampled_from([" ", " is ", "是", " was "]),
    st.from_regex(r"[a-z]{3,12}|[0-9]{1,5}|[\u4e00-\u9fa5]{1,4}", fullmatch=True),
)
def test_a_word_or_a_small_count_after_a_secret_name_stays(key: str, between: str, word: str) -> None:
    """Fail closed only where the word is shaped like a secret: "password expired", "token 100",
    密码错误 read as written."""
    line = f"WARN auth {key}{between}{word} for user=alice"
    assert redact(line) == line


@st.composite
def cookie_headers(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """A Cookie or Set-Cookie header as HTTP logs, proxies and JSON dumps write it: cookies of any
    name, attributes between them; what must go and what must stay."""
    header = draw(st.sampled_from(["Cookie: ", "cookie: ", "Set-Cookie: ", "SET-COOKIE:", '"cookie": "', "cookie="]))
    names = draw(st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,15}", fullmatch=True), min_size=1, max_size=4))
    values = [draw(secret_values).replace("+", "") for _ in names]
    attributes = draw(st.lists(st.sampled_from(["Path=/", "HttpOnly", "Secure", "SameSite=Lax", "Max-Age=3600"])))
    items = [f"{n}={v}" for n, v in zip(names, values, strict=True)] + attributes
    items = draw(st.permutations(items))
    joined = draw(st.sampled_from(["; ", ";", ", "])).join(items)
    closing = '"' if header.endswith('"') else ""
    return header + joined + closing, values, attributes


@settings(max_examples=150, deadline=None)
@given(cookie_headers(), PREFIXES, SUFFIXES)
def test_every_cookie_of_a_cookie_header_goes_and_its_attributes_stay(
    case: tuple[str, list[str], list[str]], prefix: str, suffix: str
) -> None:
    text, values, attributes = case
    line = prefix + text + suffix
    redacted = redact(line)
    assert not [v for v in values if v in redacted], (line, redacted)
    assert all(a in redacted for a in attributes), (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(suffix), (line, redacted)


_XML_KEYS = st.sampled_from(
    [
        "password",
        "Password",
        "db.password",
        "DbPassword",
        "api_key",
        "apiKey",
        "client-secret",
        "token",
        "密码",
        "secretKey",
    ]
)


@st.composite
def xml_secrets(draw: st.DrawFn) -> tuple[str, str]:
    """A secret in XML or HTML: an element named by the key, an attribute named by it, or an
    entry whose key/name attribute names it (.NET appSettings, Spring, properties XML, forms)."""
    key, value = draw(_XML_KEYS), draw(secret_values).replace("<", "").replace("&", "")
    quote = draw(st.sampled_from(['"', "'"]))
    pad = draw(st.sampled_from(["", " ", "  "]))
    form = draw(st.sampled_from(["element", "attribute", "keyed-value", "keyed-text", "input"]))
    if form == "element":
        text = f"<{key}>{pad}{value}{pad}</{key}>"
    elif form == "attribute":
        text = f"<user name={quote}pay{quote} {key}={quote}{value}{quote}/>"
    elif form == "keyed-value":
        name = draw(st.sampled_from(["key", "name"]))
        first, second = f"{name}={quote}{key}{quote}", f"value={quote}{value}{quote}"
        pair = f"{first} {second}" if draw(st.booleans()) else f"{second} {first}"
        text = f"<{draw(st.sampled_from(['add', 'property', 'param', 'entry']))} {pair}{pad}/>"
    elif form == "keyed-text":
        text = f"<entry key={quote}{key}{quote}>{value}</entry>"
    else:
        text = f"<input type={quote}password{quote} name={quote}pw{quote} value={quote}{value}{quote}>"
    return text, value


@settings(max_examples=150, deadline=None)
@given(xml_secrets(), PREFIXES, SUFFIXES)
def test_a_secret_in_xml_loses_its_value(case: tuple[str, str], prefix: str, suffix: str) -> None:
    _assert_loses_its_value(case, prefix, suffix)


@st.composite
def query_credentials(draw: st.DrawFn) -> tuple[str, str]:
    """A credential in a URL's query or a form body under a name that says no secret: a chat
    webhook's key or signature (WeCom, DingTalk, Feishu), a signed URL's signature, an OAuth code."""
    name = draw(
        st.sampled_from(
            ["key", "KEY", "sign", "sig", "signature", "X-Amz-Signature", "X-Goog-Signature", "code", "ticket"]
        )
    )
    value = draw(secret_values).replace("&", "").replace("#", "")
    base = draw(
        st.sampled_from(
            [
                "https://qyapi.weixin.qq.com/cgi-bin/webhook/send",
                "https://oapi.dingtalk.com/robot/send",
                "https://bucket.s3.amazonaws.com/report.csv",
                "http://10.0.0.7:8080/oauth/callback",
                "/api/v1/hook",
            ]
        )
    )
    before = draw(st.sampled_from(["", "timestamp=1751882400000&", "a=1&b=x&"]))
    after = draw(st.sampled_from(["", "&timestamp=1751882400000", "#top"]))
    return f"{base}?{before}{name}={value}{after}", value


@settings(max_examples=150, deadline=None)
@given(query_credentials(), PREFIXES, SUFFIXES)
def test_a_credential_in_a_query_parameter_loses_its_value(case: tuple[str, str], prefix: str, suffix: str) -> None:
    text, value = case
    line = prefix + f"POST {text} failed" + suffix
    redacted = redact(line)
    assert value not in redacted, (line, redacted)
    assert redacted.startswith(prefix) and redacted.endswith(" failed" + suffix), (line, redacted)


@given(st.sampled_from(["code", "sign", "key", "ticket"]), st.integers(0, 99999))
def test_a_short_number_in_a_query_parameter_stays(name: str, number: int) -> None:
    line = f"GET /status?{name}={number}&page=2 200"
    assert redact(line) == line


@given(
    st.sampled_from(["requirepass {v}", "masterauth {v}", "pw={v}", "db_pw: {v}", "CONFIG SET requirepass {v}"]),
    secret_values,
)
def test_a_redis_or_short_password_directive_loses_its_value(form: str, value: str) -> None:
    line = "redis.conf: " + form.format(v=value)
    assert value not in redact(line), redact(line)


@st.composite
def split_values(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A value written over two lines: a YAML plain scalar on the line below its key (at any depth,
    siblings after it), or a value cut by a backslash continuation (shell, .properties)."""
    key = draw(st.sampled_from(["password", "db_password", "apiKey", "client-secret", "token", "密码"]))
    value = draw(secret_values).replace("\\", "")
    if draw(st.booleans()):
        depth = draw(st.integers(0, 2))
        pad = "  " * depth
        inner = pad + draw(st.sampled_from(["  ", "    ", "\t"]))
        parents = "".join("  " * i + f"level{i}:\n" for i in range(depth))
        text = f"{parents}{pad}{key}:\n{inner}{value}\n{pad}host: db-1"
        return text, [value]
    cut = draw(st.integers(1, len(value) - 1))
    head, tail = value[:cut], value[cut:]
    lead = draw(st.sampled_from(["", "  ", "\t"]))
    form = draw(st.sampled_from(["{k}={h}\\\n{l}{t}", "export {k}={h}\\\n{l}{t} && run", "{k}: {h}\\\n{l}{t}"]))
    return form.format(k=key, h=head, l=lead, t=tail), [head, tail] if len(tail) > 3 else [head]


@settings(max_examples=150, deadline=None)
@given(split_values())
def test_a_value_written_over_two_lines_loses_both_parts(case: tuple[str, list[str]]) -> None:
    text, parts = case
    redacted = redact(text)
    assert not [p for p in parts if len(p) > 3 and p in redacted], (text, redacted)
    assert redacted.count("\n") == text.count("\n"), (text, redacted)


@given(
    st.sampled_from(["password", "secrets", "token", "credentials"]),
    st.sampled_from(["  user: app\n  ttl: 30", "- vault\n- env", "  # rotated monthly\n  ttl: 30"]),
)
def test_a_key_opening_a_mapping_or_a_sentence_ending_in_a_colon_keeps_what_follows(key: str, below: str) -> None:
    nested = f"{key}:\n{below}"
    sentence = f"ERROR invalid {key}:\n\tat com.shop.Auth.check(Auth.java:42)"
    assert redact(nested) == nested and redact(sentence) == sentence
