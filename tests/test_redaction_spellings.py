"""Secrets written in spellings nobody listed (issue 27 D6, red team): a login or prose word of
several words written with any blanks between them (``log<TAB>in``, ``sign  in``, ``set<TAB>to``);
a short secret word glued after another (``authpw``, ``rootpass``, ``DBPWD``) or a bare ``pass``
given a value shaped like a secret; a release after ``auth`` or ``token`` (``AUTH v1.2.3``) is no
secret. Strategies generate the words from ``vocabulary.yaml``, the blanks, the glued heads, the
assignments and the text around."""

from __future__ import annotations

import base64
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_redaction_statements import passwords, users
from veridiag.redaction import redact
from veridiag.redaction.keys import glued_kind, key_kind, vocabulary

#: Blanks no one-space literal matches: a tab, a run, mixed.
odd_blanks = st.text(alphabet=" \t", min_size=1, max_size=4).filter(lambda b: b != " ")
prefixes = st.sampled_from(["", "2026-07-07T10:00:00Z INFO auth-svc [main] - ", "user ", "提示："])
suffixes = st.sampled_from(["", " host=db-1 took=29ms", " 耗时 2950ms"])
assignments = st.sampled_from(["=", ": ", ":", " = ", "：", "＝", "=>", '="', "='", "\t"])


def _several(words: list[str]) -> list[str]:
    return sorted({w for w in words if len(w.split()) > 1 and w.isascii()})


@st.composite
def spaced(draw: st.DrawFn, words: list[str]) -> str:
    """One of ``words`` with odd blanks at one or more of its gaps (each gap some blank)."""
    parts = draw(st.sampled_from(words)).split(" ")
    gaps = [draw(odd_blanks | st.just(" ")) for _ in parts[1:]]
    if all(g == " " for g in gaps):
        gaps[draw(st.integers(0, len(gaps) - 1))] = draw(odd_blanks)
    return parts[0] + "".join(g + p for g, p in zip(gaps, parts[1:], strict=True))


@settings(max_examples=200, deadline=None)
@given(
    spaced(_several(vocabulary().logins)),
    users,
    st.sampled_from(vocabulary().login_separators),
    passwords,
    st.tuples(prefixes, suffixes),
)
def test_a_login_word_apart_by_any_blanks_still_gives_its_secret(
    word: str, user: str, separator: str, secret: str, around: tuple[str, str]
) -> None:
    prefix, suffix = around
    line = f"{prefix}{word} {user}{separator}{secret}{suffix}"
    redacted = redact(line)
    assert secret not in redacted, (line, redacted)
    assert user in redacted and redacted.startswith(prefix) and redacted.endswith(suffix)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["password", "token", "api key", "密码", "secret"]),
    spaced(_several(vocabulary().spoken)),
    passwords.filter(lambda s: s[-1] not in "!#^*_+~"),
    prefixes,
)
def test_a_spoken_word_apart_by_any_blanks_still_gives_its_secret(
    key: str, word: str, secret: str, prefix: str
) -> None:
    line = f"{prefix}the {key} {word} {secret}"
    redacted = redact(line)
    assert secret not in redacted, (line, redacted)


#: Heads a config glues before a short secret word: a role, a service, a scope.
heads = st.from_regex(r"[a-z]{2,8}", fullmatch=True).filter(
    lambda h: not any(w.startswith(h) or w.endswith(h) for w in vocabulary().glued_words)
)
glued_tails = st.sampled_from(sorted(w for w in vocabulary().whole_words if key_kind(w) is not None))


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(heads, glued_tails),
    st.sampled_from(["lower", "upper", "camel"]),
    assignments,
    passwords,
    st.tuples(prefixes, suffixes),
)
def test_a_short_secret_word_glued_after_another_names_its_secret(
    words: tuple[str, str], case: str, sign: str, secret: str, around: tuple[str, str]
) -> None:
    (head, tail), (prefix, suffix) = words, around
    key = {"lower": head + tail, "upper": (head + tail).upper(), "camel": head + tail.title()}[case]
    quote = sign[-1] if sign[-1] in "\"'" else ""
    line = f"{prefix}{key}{sign}{secret}{quote}{suffix}"
    redacted = redact(line)
    assert secret not in redacted, (line, redacted)
    assert key in redacted and redacted.startswith(prefix) and redacted.endswith(suffix)


#: Values no secret has the shape of: counts, flags, words, times, paths.
plain_values = st.one_of(
    st.integers(0, 99999).map(str),
    st.sampled_from(["true", "false", "on", "off", "none", "ok", "failed", "enabled", "12:00:01", "/var/x", "ldap"]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.tuples(heads, glued_tails) | st.tuples(st.just(""), st.sampled_from(vocabulary().not_alone)),
    st.sampled_from(["=", ": ", "="]),
    plain_values,
)
def test_a_glued_or_bare_short_word_keeps_a_value_no_secret_has_the_shape_of(
    key: tuple[str, str], sign: str, value: str
) -> None:
    line = f"tests {''.join(key)}{sign}{value} fail=0"
    assert redact(line) == line


@given(st.sampled_from(sorted(vocabulary().glued_words)), passwords)
def test_an_ordinary_word_ending_in_a_secret_word_names_none(word: str, secret: str) -> None:
    assert glued_kind(word) is None and glued_kind(word.upper()) is None
    assert redact(f"{word}={secret}") == f"{word}={secret}"
    assert secret not in redact(f"{word}_pw={secret}")  # a secret word after it still names one


#: Releases as software writes them.
versions = st.builds(
    lambda v, parts, tag: v + ".".join(map(str, parts)) + tag,
    st.sampled_from(["", "v", "V"]),
    st.lists(st.integers(0, 999), min_size=2, max_size=4),
    st.sampled_from(["", "-rc1", "-beta.2", "+build.5", "-SNAPSHOT"]),
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["auth {}", "AUTH {}", '"auth {}"', "; auth {}", "redis> auth {}", "token {}", "the token is {}"]),
    versions,
    prefixes,
)
def test_a_release_after_auth_or_token_is_no_secret(form: str, version: str, prefix: str) -> None:
    line = prefix + form.format(version)
    assert redact(line) == line


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["AUTH {}", "redis> auth {}", "AUTH default {}", "the token is {}"]), passwords)
def test_a_secret_after_auth_still_goes_beside_the_release_rule(form: str, secret: str) -> None:
    redacted = redact(form.format(secret))
    assert secret not in redacted and re.search(r"\[REDACTED:[a-z-]+\]", redacted)


# -- an entry naming its setting in one field and giving its value in another -------------------

secret_names = st.builds(
    lambda head, word, style: style(head, word),
    st.sampled_from(["", "db", "redis", "app", "smtp", "my"]),
    st.sampled_from(["password", "passwd", "token", "api key", "secret", "client secret", "private key", "密码"]),
    st.sampled_from(
        [
            lambda h, w: "_".join(x for x in (h, w.replace(" ", "_")) if x).upper(),
            lambda h, w: ".".join(x for x in (h, w.replace(" ", "-")) if x),
            lambda h, w: h + "".join(p.title() for p in w.split()),
        ]
    ),
)
plain_names = st.sampled_from(["LOG_LEVEL", "region", "JAVA_OPTS", "password_min_length", "token_ttl", "PORT"])


def _field(draw: st.DrawFn, words: list[str]) -> str:
    word = draw(st.sampled_from(words))
    return draw(st.sampled_from([word, word.title(), word.upper()]))


@st.composite
def entries(draw: st.DrawFn, names: st.SearchStrategy[str], value: str) -> tuple[str, str]:
    """An entry in JSON (or a Python / JavaScript literal) or YAML naming ``names`` and giving
    ``value``; and the name."""
    name = draw(names)
    name_field, value_field = _field(draw, vocabulary().entry_names), _field(draw, vocabulary().entry_values)
    if draw(st.booleans()):  # YAML: a list item's name line, the value line under it
        indent = draw(st.sampled_from(["", "  ", "    ", "\t"]))
        quote = draw(st.sampled_from(["", '"', "'"]))
        return f"env:\n{indent}- {name_field}: {name}\n{indent}  {value_field}: {quote}{value}{quote}\n", name
    q = draw(st.sampled_from(['"', "'"]))
    sign = draw(st.sampled_from([": ", ":", " : ", "="]))
    fields = [f"{q}{name_field}{q}{sign}{q}{name}{q}", f"{q}{value_field}{q}{sign}{q}{value}{q}"]
    if draw(st.booleans()):
        fields.reverse()
    between = draw(st.sampled_from(["", f"{q}type{q}{sign}{q}String{q}", f"{q}ttl{q}{sign}300"]))
    body = ", ".join([fields[0], *([between] if between else []), fields[1]])
    return draw(st.sampled_from(["{{{}}}", "[{{{}}}]", 'containers: {{"env": [{{{}}}]}}'])).format(body), name


@settings(max_examples=200, deadline=None)
@given(st.data(), passwords.filter(lambda s: "'" not in s and '"' not in s))
def test_an_entry_whose_name_field_names_a_secret_loses_its_value(data: st.DataObject, secret: str) -> None:
    entry, name = data.draw(entries(secret_names, secret))
    redacted = redact(entry)
    assert secret not in redacted, (entry, redacted)
    assert name in redacted


@settings(max_examples=100, deadline=None)
@given(st.data(), st.sampled_from(["debug", "us-east-1", "-Xmx512m", "8080", "12", "300s"]))
def test_an_entry_naming_no_secret_keeps_its_value(data: st.DataObject, value: str) -> None:
    entry, _ = data.draw(entries(plain_names, value))
    assert redact(entry) == entry


# -- a user, a slash, the secret's word, the secret -------------------------------------------------

short_secret_words = st.sampled_from(["pw", "pwd", "pass", "password", "passwd", "密码", "token", "secret"])


@settings(max_examples=150, deadline=None)
@given(users, short_secret_words, st.sampled_from([" ", "  ", "\t", ": ", " is "]), passwords, prefixes)
def test_a_user_slash_secret_word_then_the_secret_loses_it(
    user: str, word: str, gap: str, secret: str, prefix: str
) -> None:
    """``admin/pw S3cret``, ``user/pw admin/S3cret``: a slash between a user (or a user's word) and a
    secret's word is no path."""
    for line in (f"{prefix}{user}/{word}{gap}{secret}", f"{prefix}user/{word}{gap}{user}/{secret}"):
        redacted = redact(line)
        assert secret not in redacted, (line, redacted)


@given(
    st.sampled_from(["/etc/", "/usr/bin/", "usr/bin/", "~/.config/", "./", "C:\\tools\\", "/home/app/.secrets/"]),
    short_secret_words.filter(str.isascii),
    users,
)
def test_a_file_named_after_a_secret_word_keeps_its_argument(directory: str, word: str, user: str) -> None:
    line = f"exec {directory}{word} {user}1234"
    assert redact(line) == line


# -- URLs --------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["session", "sessionid", "sid", "JSESSIONID", "PHPSESSID", "jwt", "otp", "client_assertion"]),
    passwords.filter(lambda s: not set(s) & set("#+")),
    st.sampled_from(["https://shop.example/cart?{}={}", "GET /api/v1/me?lang=en&{}={} HTTP/1.1", "/cb?state=x&{}={}"]),
)
def test_a_session_or_assertion_in_a_url_is_a_credential(name: str, secret: str, form: str) -> None:
    line = form.format(name, secret)
    redacted = redact(line)
    assert secret not in redacted and name in redacted, (line, redacted)


@given(st.sampled_from(["sid", "session", "otp"]), st.sampled_from(["3", "en", "1", "abc"]))
def test_a_url_parameter_not_shaped_like_a_secret_stays(name: str, value: str) -> None:
    line = f"GET /page?{name}={value}&lang=en"
    assert redact(line) == line


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["smtp", "smtps", "imap", "ftp", "amqp", "mongodb+srv", "redis"]),
    users,
    st.sampled_from(["example.com", "corp.local", "mail.example.org"]),
    passwords.filter(lambda s: not set(s) & set("#/?@")),
)
def test_a_url_whose_user_holds_an_at_sign_loses_its_secret(scheme: str, user: str, domain: str, secret: str) -> None:
    line = f"connect {scheme}://{user}@{domain}:{secret}@mail.{domain}:587/inbox"
    redacted = redact(line)
    assert secret not in redacted and f"{user}@{domain}" in redacted, (line, redacted)


# -- a row's cells, base64 without digits ----------------------------------------------------------

cell_keys = st.sampled_from(
    ["password", "db_password", "DB_PASS", "apiKey", "client_secret", "token", "密码", "Passwort"]
)


@settings(max_examples=150, deadline=None)
@given(cell_keys, passwords.filter(lambda s: not set(s) & set(",|;")), st.sampled_from([",", ";", "|", " | ", ", "]))
def test_a_key_cell_gives_the_next_cell_its_secret(key: str, secret: str, sign: str) -> None:
    """CSV, a Markdown or psql table: a row's key cell and its value cell (``2026-07-07,password,…,ok``)."""
    cells = ["2026-07-07", key, secret, "ok"]
    line = sign.join(cells) if sign.strip() != "|" else f"{sign.strip()} {' | '.join(cells)} |"
    redacted = redact(line)
    assert secret not in redacted, (line, redacted)
    assert key in redacted and "ok" in redacted


@given(
    st.sampled_from(["wrong password, {} locked", "refresh token; {} retries", "bad secret | {} seen"]),
    st.from_regex(r"[a-z]{3,8}[0-9]{3,5}", fullmatch=True),
)
def test_prose_after_a_secret_word_and_a_comma_is_no_cell(form: str, word: str) -> None:
    line = form.format(word)
    assert redact(line) == line


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["apiKey", "password", "token", "client_secret", "privateKey"]),
    st.builds(
        "Zq{}".format, st.text(alphabet="abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ", min_size=6, max_size=14)
    ),
    st.sampled_from(["state={}", "payload: {}", "x-config {}"]),
    st.booleans(),
)
def test_base64_of_text_without_a_digit_is_still_decoded(key: str, secret: str, form: str, urlsafe: bool) -> None:
    """The secret (letters only) and its base64 may hold no digit: ``{"apiKey": "Zq…"}`` encodes as
    ``eyJhcGlLZXki…``."""
    raw = json.dumps({key: secret}).encode()
    token = base64.urlsafe_b64encode(raw).decode().rstrip("=") if urlsafe else base64.b64encode(raw).decode()
    line = form.format(token)
    assert token not in redact(line)


@given(st.from_regex(r"(?:[A-Z][a-z]{2,9}){2,5}", fullmatch=True))
def test_a_class_name_is_no_base64(name: str) -> None:
    line = f"at com.shop.{name}.run(Api.java:42)"
    assert redact(line) == line


# -- a service's token prefix; a webhook's path ----------------------------------------------------

token_bodies = st.builds(
    lambda head, digit, tail: head + digit + tail,
    st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ_-", min_size=8, max_size=30),
    st.sampled_from("0123456789"),
    st.text(alphabet="abcdef0123456789ABCDEF", min_size=8, max_size=40),
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(vocabulary().token_prefixes), token_bodies, prefixes, st.sampled_from(["", " ok", '"}', ","]))
def test_a_token_written_with_its_services_prefix_goes_whatever_its_key(
    prefix: str, body: str, before: str, after: str
) -> None:
    token = prefix + body
    line = f"{before}using {token}{after}"
    redacted = redact(line)
    assert body not in redacted, (line, redacted)
    assert redacted.startswith(before) and redacted.endswith(after)


@given(
    st.sampled_from(vocabulary().token_prefixes),
    st.from_regex(r"[a-z]+(?:_[a-z]+){3,5}", fullmatch=True),
)
def test_a_word_starting_like_a_prefix_without_a_digit_stays(prefix: str, words: str) -> None:
    """A name that starts like a prefix (``pscale_tkn_rotation_job``): no digit, no token."""
    line = f"run {prefix}{words} now"
    assert redact(line) == line


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(vocabulary().path_keys),
    st.sampled_from(["https://open.feishu.cn/open-apis/bot/v2", "https://chat.example.com/api", "POST /v1"]),
    st.uuids().map(str) | token_bodies,
)
def test_a_webhooks_path_after_its_word_is_a_credential(word: str, base: str, secret: str) -> None:
    line = f"deliver to {base}/{word}/{secret} failed: 429"
    redacted = redact(line)
    assert secret not in redacted and redacted.endswith("failed: 429"), (line, redacted)


@given(
    st.sampled_from(vocabulary().path_keys),
    st.sampled_from(["github", "getting-started", "12345", "list", "payment-service"]),
)
def test_a_path_segment_no_secret_is_shaped_like_stays(word: str, segment: str) -> None:
    line = f"GET /api/{word}/{segment} 200"
    assert redact(line) == line


# -- a JWT cut into lines ---------------------------------------------------------------------------


@st.composite
def jwts(draw: st.DrawFn) -> str:
    """A JWT: base64url JSON header and payload, a random signature."""

    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    header = {"alg": draw(st.sampled_from(["HS256", "RS256", "ES256"])), "typ": "JWT"}
    payload = {"sub": draw(users), "iat": draw(st.integers(10**9, 2 * 10**9))}
    signature = base64.urlsafe_b64encode(draw(st.binary(min_size=32, max_size=64))).decode().rstrip("=")
    return f"{part(header)}.{part(payload)}.{signature}"


@settings(max_examples=150, deadline=None)
@given(jwts(), st.integers(16, 80), st.sampled_from(["\n", "\n  ", "\\\n", "\r\n", "\n\t"]))
def test_a_jwt_cut_into_lines_loses_every_piece(token: str, width: int, wrap: str) -> None:
    pieces = [token[i : i + width] for i in range(0, len(token), width)]
    text = "Authorization token:" + wrap + wrap.join(pieces) + "\nnext line ok"
    redacted = redact(text)
    assert not [p for p in pieces if len(p) > 3 and p in redacted], redacted
    assert redacted.count("\n") == text.count("\n") and redacted.endswith("next line ok")


# -- whose secret it is, between its name and its value -------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["password", "Password", "token", "API key", "secret", "passphrase"]),
    st.tuples(st.sampled_from(["for {}", "for user {}", "for '{}'", "for account {}"]), users),
    st.sampled_from([": ", ":", " = ", " is ", "："]),
    passwords.filter(lambda s: s[-1] not in "!#^*_+~"),
    prefixes,
)
def test_a_secret_named_for_its_account_loses_its_value(
    key: str, whose: tuple[str, str], sign: str, secret: str, prefix: str
) -> None:
    account, user = whose
    line = f"{prefix}Enter {key} {account.format(user)}{sign}{secret}"
    redacted = redact(line)
    assert secret not in redacted, (line, redacted)


@given(
    st.sampled_from(
        ["password for {} expired", "token for {} issued", "password for {}: changed", "secret for {}: 12"]
    ),
    users,
)
def test_a_report_about_an_accounts_secret_keeps_its_words(form: str, user: str) -> None:
    line = form.format(user)
    assert redact(line) == line
