"""Secrets written in spellings nobody listed (issue 27 D6, red team): a login or prose word of
several words written with any blanks between them (``log<TAB>in``, ``sign  in``, ``set<TAB>to``);
a short secret word glued after another (``authpw``, ``rootpass``, ``DBPWD``) or a bare ``pass``
given a value shaped like a secret; a release after ``auth`` or ``token`` (``AUTH v1.2.3``) is no
secret. Strategies generate the words from ``vocabulary.yaml``, the blanks, the glued heads, the
assignments and the text around."""

from __future__ import annotations

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
