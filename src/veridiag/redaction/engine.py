"""The rules and the ``Redactor``: every string a tool returns is redacted by ``ToolRunner``
before it is stored, shown to a model or read by the offline engine, and every other entry
(alerts, questions, eval fixtures) passes the same redactor.

Each secret becomes ``[REDACTED:<kind>]`` while the key, header or URL around it stays
(``password=[REDACTED:password]``, ``Authorization: Bearer [REDACTED:bearer-token]``), so a
line still says what it said. Redaction is a function of the string alone and every rule is
line-local (only a PEM block spans lines, and a block lives inside one record), so a record's
``line`` redacted on its own equals that line of the redacted output: excerpts taken from
records are still found verbatim.

Where the patterns come from. detect-secrets (Yelp) is the maintained source, but its scan
API cannot serve here: ``scan_line`` took 740 ms per 64 KB of demo log and reported 6 326
"secrets" in a log holding none, and it gives values, not the positions a replacement needs.
So its parts are reused through a small layer with spans: the compiled ``denylist`` regexes
of its token-format plugins (AWS, GitHub, GitLab, Slack, Stripe, SendGrid, OpenAI, PyPI,
Square), its keyword list (``keys.py``), its KeywordDetector on the lines holding one of its
words, its Base64 and Hex high-entropy detectors' charset, entropy and limits — guarded for
logs: a base64 token needs both cases and digits and no identifier key (``trace_id=``), a hex
one a signature key (``sig=``, ``hmac:``) — and its JWT validity check. Left out: its plugins
without a literal prefix (Twilio, Telegram, Discord, …: slow or noisy on logs) and public IPs
(evidence). Own rules add what it lacks: whole PEM blocks, JWT signatures, ``github_pat_``,
GCP ``AIza`` keys, Azure keys and SAS signatures, URL userinfo, ``Authorization`` headers,
``curl -u user:pw`` and secret-named options, ``sk-proj-`` keys, base64 values whose text
holds a secret, ``key=value`` / ``key: value`` / JSON assignments whose key ``keys.key_kind``
names a secret (or ``keys.shaped_kind`` / ``keys.contained_kind`` with a value shaped like one),
statements whose grammar carries a secret (``.pgpass`` lines, protocol verbs, logins, calls, SQL
clauses, secrets piped into a stdin reader: their words are ``vocabulary.yaml``'s), and the
patterns of ``redaction.patterns``.

Encodings. Each line holding a %-escape, an escape or a character that reads as another is
also read decoded (``values.py``: URL, JSON escapes, invisible and look-alike characters,
again on their own output) and a find there replaces the stored characters it came from:
``password%3D…``, ``\\"password\\":\\"…\\"``, ``pass\\u200bword=`` lose their values.

Speed: case-insensitive rules are written in lower case and run on the lower-cased string
(``(?i)`` loses the literal-prefix search: 1.9 ms instead of 0.3 ms per 64 KB), keys are
found by ``str.find`` of their last word, and a short string is first tested against all
the rules' literals at once. ``tests/test_redaction.py`` and ``tests/test_redaction_variants.py``
print the 64 KB figures.

The same boundary replaces bidi embedding, override and isolate characters with a marker
(``[REDACTED:bidi-control]``): text that displays in another order than it is stored would
show a reader what no check read.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache, lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, cast, get_args, get_origin

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from pydantic import BaseModel

from veridiag.redaction.keys import (
    MARKS,
    Credential,
    contained_kind,
    glued_kind,
    hex_key,
    identifier_key,
    key_entries,
    key_kind,
    key_words,
    shaped_entries,
    shaped_kind,
    vocabulary,
)
from veridiag.redaction.values import (
    TRIGGER,
    View,
    base64_text,
    blanks_only,
    decoded_texts,
    decoded_views,
    needs_decoding,
)
from veridiag.text.cjk import HAN

if TYPE_CHECKING:
    from veridiag.config import Settings

__all__ = ["MARKER_PATTERN", "Redaction", "Redactor", "SessionRedactor", "build_redactor", "default_redactor"]

T = TypeVar("T")

#: A JSON string literal on one line.
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
#: Between a JSON object's key and its value.
_JSON_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
#: What a redacted secret looks like; text already holding one is never redacted again.
MARKER_PATTERN = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
_MARKER_LITERAL = "[redacted:"
_SCALARS = frozenset({bool, int, float, datetime, date, timedelta})
#: Strings up to this length are gated by one search for every rule's literals.
_SHORT = 4096
#: Strings up to this length are kept redacted (a few MB at most); longer ones, a handful.
_CACHED = 1024


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _is_word(char: str) -> bool:
    """A letter, digit or ``_``, or a mark combining with one (the vowel signs of पासवर्ड, รหัสผ่าน)."""
    return char.isalnum() or char == "_" or (not char.isascii() and unicodedata.category(char)[0] == "M")


@dataclass(frozen=True)
class _Rule:
    """One pattern and the group holding the secret.

    ``literals`` (lower case): every match contains one of them; they gate short strings.
    ``prefilter``: the pattern has no literal prefix of its own, so on a long string the
    literals are looked for first (a literal-prefixed regex finds its prefix as fast).
    ``requires``: every match holds one of these (as written in the lower-cased string), though
    the pattern does not start with it: a long string holding none is not searched at all."""

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    literals: tuple[str, ...] = ()
    prefilter: bool = False
    requires: tuple[str, ...] = ()
    #: Written in lower case, run on the lower-cased string.
    lower: bool = False
    #: The match must start a word (checked here: a leading ``\b`` costs the prefix search).
    word_start: bool = False
    #: Decides the kind of a match from its context, or rejects it (``None``).
    classify: Callable[[re.Match[str], str], str | None] | None = None
    #: Token formats: a match stopping inside a longer token is extended over it (no tail left).
    extend: bool = False
    #: A bare value: it ends at punctuation outside ASCII (``_bare_end``: "…S3cret，请检查").
    bare: bool = False

    def matches(self, subject: str, low: str) -> Iterator[re.Match[str]]:
        """The pattern's matches in ``subject`` (``low`` itself, or ``text`` lower-cased)."""
        return self.pattern.finditer(subject)

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        subject = low if self.lower else text
        for found in self.matches(subject, low):
            start, end = found.span(self.group)
            if end <= start:
                continue
            if self.word_start and found.start() > 0 and _is_word(subject[found.start() - 1]):
                continue
            kind = self.kind if self.classify is None else self.classify(found, text)
            if kind is None:
                continue
            if self.extend:
                while end < len(text) and text[end].isascii() and _is_word(text[end]):
                    end += 1
            if self.bare:
                end = _bare_end(text, start, end)
            if end > start:
                yield start, end, kind


# -- formats ---------------------------------------------------------------------------------

#: Blanks around an assignment: a full-width one too ("password　＝　…"); never a line break,
#: so rules stay line-local.
_ARROWS = "|".join(re.escape(a) for a in sorted(vocabulary().arrows, key=len, reverse=True))
_SEP = r"[ \t\u3000]*(?::=|==|" + _ARROWS + r"|[:=：＝])[ \t\u3000]*"

_PEM_HEAD = r"----(?:- ?|-? )BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_PEM_END = r"-{4,5} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
#: The body goes, the BEGIN and END lines stay; ``\n`` escapes cover keys inside JSON strings.
_PEM = _Rule(
    "private-key",
    re.compile(_PEM_HEAD + r"(?P<body>[\s\S]{1,20000}?)" + _PEM_END),
    group="body",
    literals=("private key",),
)
# A block cut short (no END in the output): the lines after the header that are all base64
# (or an encrypted key's Proc-Type / DEK-Info line).
_PEM_CUT = _Rule(
    "private-key",
    re.compile(
        _PEM_HEAD
        + r"(?![\s\S]{0,20000}?"
        + _PEM_END
        + r")(?P<body>(?:(?:\r?\n|\\r|\\n|[ \t])+"
        + r"(?:[A-Za-z0-9+/]{16,}={0,2}|(?:Proc-Type|DEK-Info):[^\n\\\"]*)(?![^\s\\\"',]))+)"
    ),
    group="body",
    literals=("private key",),
)

_SCHEMES = r"bearer|basic|token|digest|negotiate|ntlm|aws4-hmac-sha256|apikey"
_SCHEME_KINDS = {"bearer": "bearer-token", "basic": "basic-auth", "token": "token"}


def _header_kind(found: re.Match[str], _text: str) -> str | None:
    return _SCHEME_KINDS.get(found.group("scheme") or "", "authorization")


_AUTHORIZATION = _Rule(
    "authorization",
    re.compile(
        # a bracket or parenthesis may open the value: Go's http.Header ("map[Authorization:[Basic …]]")
        r"authorization[\"']?[ \t]*[:=][ \t]*(?:[\[(][ \t]*)?[\"']?"
        rf"(?:(?P<scheme>{_SCHEMES})[ \t]+)?"
        # never the scheme word itself: once its token is a marker, "Bearer" is no value; nor the
        # bracket around it ("[Basic", the "]" after it)
        rf"(?P<value>(?!\[redacted:|[\[(]|(?:{_SCHEMES})[ \t])[^\s\"',;\])]+(?:[ \t]*,[ \t]*[a-z]+=[^\s\"',;\])]+)*)"
    ),
    group="value",
    literals=("authorization",),
    lower=True,
    word_start=True,
    classify=_header_kind,
)


#: A cookie's attributes (RFC 6265 and the browsers' additions): their values are no secret.
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority", "partitioned", "version"}
)
_COOKIE_PAIR = re.compile(
    r"(?P<name>[^\s=;,\"'\\]+)[ \t]*=[ \t]*(?P<value>[^\s;,\"'\\]+)|(?P<flag>[A-Za-z-]+)(?=[\s;,\"']|$)"
)
_COOKIE_NEXT = re.compile(r"[ \t]*[;,][ \t]*")
#: A header's value without a name (``cookie=Zq8…``) is the cookie itself when shaped like one.
_COOKIE_BARE = re.compile(r"[^\s;,\"'\\]*[0-9][^\s;,\"'\\]*|[^\s;,\"'\\]{16,}")


def _no_cookie(value: str) -> bool:
    """A placeholder, or a secret already replaced."""
    return _PLACEHOLDER.fullmatch(value) is not None or value.lower().startswith("[redacted:")


class _CookieRule(_Rule):
    """A ``Cookie`` or ``Set-Cookie`` header (``Cookie: JSESSIONID=…; csrftoken=…``): a cookie
    carries a session, which is a credential, whatever its name — every value of the header's
    ``;``-separated pairs goes, the names and the attributes (``Path=/``, ``HttpOnly``) stay, and
    the line after the header is read as usual."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(low):
            if found.start() > 0 and _is_word(low[found.start() - 1]):
                continue  # "nocookie:" is another word
            at, named = found.end(), False
            while (pair := _COOKIE_PAIR.match(text, at)) is not None:
                value = pair.group("value")
                if value is not None:
                    named = True
                    name = pair.group("name").lower()
                    if name not in _COOKIE_ATTRIBUTES and not _no_cookie(value):
                        yield pair.start("value"), pair.end("value"), "cookie"
                following = _COOKIE_NEXT.match(text, pair.end())
                if following is None:
                    break
                at = following.end()
            bare = None if named else _COOKIE_BARE.match(text, found.end())
            if bare is not None and bare.group() and not _no_cookie(bare.group()):
                yield bare.start(), bare.end(), "cookie"


_COOKIE = _CookieRule(
    "cookie",
    # from "cookie" (a "set-" before it changes nothing): a literal prefix, searched as fast as a find
    re.compile(r"cookie2?[\"']?[ \t]*[:=][ \t]*[\"']?"),
    literals=("cookie",),
    lower=True,
    prefilter=True,
)


#: An XML or HTML element on one line: its name, attributes and text (``<password>…</password>``,
#: ``<add key="Password" value="…"/>``, ``<entry key="token">…</entry>``).
_XML_ELEMENT = re.compile(
    r"<(?P<tag>[^\W\d][\w:.-]{0,63})(?P<attributes>(?:\s[^<>]{0,1024}?)?)(?:/>|>(?:(?P<text>"
    # the element's text, or a CDATA section (``<password><![CDATA[…]]></password>``)
    r"<!\[CDATA\[(?:(?!\]\]>)[^\n]){0,4096}\]\]>|[^<>\n]{1,4096})</(?P=tag)\s*>)?)"
)
_CDATA_OPEN, _CDATA_CLOSE = "<![CDATA[", "]]>"
_XML_ATTRIBUTE = re.compile(r"(?P<name>[\w:.-]+)\s*=\s*(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)')")
#: Attributes that name the entry whose value another attribute or the element's text holds
#: (``type="password"`` of a form field too).
_XML_NAMES = frozenset({"key", "name", "id", "property", "param", "type"})


class _XmlRule(_Rule):
    """A secret in XML or HTML (config files, SOAP bodies, .NET ``appSettings``, Spring beans,
    form fields): an element named as a secret loses its text, an attribute named as one its
    value, and an element whose ``key``/``name`` attribute names a secret loses its ``value``
    attribute and its text."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(text):
            named: str | None = None  # what a key/name attribute calls the entry, when it names a secret
            values: list[tuple[int, int]] = []
            for attribute in _XML_ATTRIBUTE.finditer(text, found.start("attributes"), found.end("attributes")):
                group = "dq" if attribute.group("dq") is not None else "sq"
                name = attribute.group("name").lower()
                if name in _XML_NAMES:
                    if _kind_and_shape(attribute.group(group))[0] is not None:
                        named = attribute.group(group)
                elif name == "value":
                    values.append(attribute.span(group))
                else:
                    yield from self._value(text, attribute.span(group), attribute.group("name"))
            if found.group("text") is not None:
                values.append(found.span("text"))
            for span in values:
                yield from self._value(text, span, named or found.group("tag"))

    @staticmethod
    def _value(text: str, span: tuple[int, int], key: str) -> Iterator[tuple[int, int, str]]:
        start, end = span
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if text.startswith(_CDATA_OPEN, start, end) and text.endswith(_CDATA_CLOSE, start, end):
            start, end = start + len(_CDATA_OPEN), end - len(_CDATA_CLOSE)  # the text of a CDATA section
        value = text[start:end]
        if value and not _PLACEHOLDER.fullmatch(value) and not value.lower().startswith("[redacted:"):
            kind = _named_secret(key, value)
            if kind is not None:
                yield start, end, kind


#: Every element the rule reads closes (``</``, ``/>``) or gives a ``value=``; an open tag alone
#: (``<user password="…">``) is an assignment the key rule reads.
_XML = _XmlRule("secret", _XML_ELEMENT, literals=("</", "/>", "value="), prefilter=True)


def _entry_fields(words: list[str]) -> str:
    return "|".join(re.escape(w.lower()) for w in sorted(words, key=len, reverse=True))


_ENTRY_NAME = _entry_fields(vocabulary().entry_names)
_ENTRY_VALUE = _entry_fields(vocabulary().entry_values)
#: A quoted field and its quoted string (JSON, a Python or JavaScript literal), read lower-cased.
_FIELD = (
    r"(?P<{q}>[\"'])(?:{fields})(?P={q})[ \t]*[:=][ \t]*"
    r"(?P<{s}>[\"'])(?P<{v}>(?:\\.|(?!(?P={s}))[^\\\n]){{1,4096}})(?P={s})"
)
#: One object's name field then its value field, or the other way round; no brace between.
_ENTRY = re.compile(
    _FIELD.format(q="q1", s="s1", v="name", fields=_ENTRY_NAME)
    + r"[^{}\n]{0,256}?"
    + _FIELD.format(q="q2", s="s2", v="value", fields=_ENTRY_VALUE)
    + "|"
    + _FIELD.format(q="q3", s="s3", v="value2", fields=_ENTRY_VALUE)
    + r"[^{}\n]{0,256}?"
    + _FIELD.format(q="q4", s="s4", v="name2", fields=_ENTRY_NAME)
)
#: YAML: a ``name:`` line (a list item's, perhaps) and a ``value:`` line under it.
_YAML_ENTRY = re.compile(
    rf"^[ \t]*(?:-[ \t]+)?(?:{_ENTRY_NAME})[ \t]*:[ \t]*[\"']?(?P<name>[^\s\"'#]{{1,128}})[\"']?[ \t]*\n"
    rf"[ \t]+(?:{_ENTRY_VALUE})[ \t]*:[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"'#][^\n]{{0,4095}}?)(?P=q)[ \t]*$",
    re.MULTILINE,
)


class _EntryRule(_Rule):
    """An entry naming its setting in one field and giving its value in another
    (``{"name": "DB_PASSWORD", "value": "…"}``, ``- name: DB_PASS`` ⏎ ``value: …``;
    ``vocabulary.yaml`` ``entry_names`` / ``entry_values``): the value goes when the name names a
    secret (``_named_secret``, as an XML entry's ``key``/``value`` attributes)."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        seen: set[tuple[int, int]] = set()
        for anchor in self.literals:  # read only around a value field: '"value"', "'value'", 'value:'
            for tail in _find_all(low, anchor):
                at = next(
                    (
                        tail + len(anchor) - len(w)
                        for w in _value_fields()[anchor]
                        if low.endswith(w, 0, tail + len(anchor))
                    ),
                    -1,
                )
                field = _VALUE_FIELD.match(low, at) if at >= 0 else None
                if field is None or (at > 0 and _is_word(low[at - 1])):
                    continue
                begin, end = low.rfind("\n", 0, at) + 1, low.find("\n", at)
                if field.group("yaml") is not None:  # YAML: the name on the line above
                    found = _YAML_ENTRY.match(low, low.rfind("\n", 0, max(begin - 1, 0)) + 1, len(low))
                else:
                    end = len(low) if end < 0 else end
                    found = _ENTRY.search(low, max(begin, at - 512), min(end, at + 4400))
                if found is None or found.span() in seen:
                    continue
                seen.add(found.span())
                named = "name" if found.group("name") is not None else "name2"
                value = "value" if found.group("value") is not None else "value2"
                yield from _XmlRule._value(text, found.span(value), text[slice(*found.span(named))])


#: A value field's name, quoted or before a YAML colon.
_VALUE_FIELD = re.compile(rf"(?:{_ENTRY_VALUE})(?:[\"']|(?P<yaml>[ \t]*:))")


@cache
def _value_fields() -> dict[str, tuple[str, ...]]:
    """The value fields by their last five letters (``value`` of ``parametervalue``): one
    ``str.find`` for the fields sharing them, longest first."""
    fields: dict[str, list[str]] = {}
    for word in sorted((w.lower() for w in vocabulary().entry_values), key=len, reverse=True):
        fields.setdefault(word[-5:], []).append(word)
    return {tail: tuple(words) for tail, words in fields.items()}


_ENTRIES = _EntryRule("secret", _ENTRY, literals=tuple(_value_fields()))


def _bearer(found: re.Match[str], _text: str) -> str | None:
    """ "Bearer token expired" names no token; real ones carry digits."""
    return "bearer-token" if any(c.isdigit() for c in found.group("value")) else None


_BEARER = _Rule(
    "bearer-token",
    re.compile(r"bearer[ \t]+(?P<value>(?!\[redacted:)[a-z0-9._~+/-]{8,}=*)"),
    group="value",
    literals=("bearer",),
    lower=True,
    word_start=True,
    classify=_bearer,
)


def _basic(found: re.Match[str], text: str) -> str | None:
    """A ``Basic`` credential is base64 of ``user:password``: what decodes so is one."""
    decoded = base64_text(text[found.start("value") : found.end("value")])
    return "basic-auth" if decoded is not None and ":" in decoded.strip(":") else None


#: ``Basic <base64 of user:password>`` wherever it stands, not only after an ``Authorization``
#: header: a header written as a pair (``("Authorization", "Basic …")``, a HAR entry), an
#: ``auth_header:`` setting, a sentence.
_BASIC = _Rule(
    "basic-auth",
    re.compile(r"basic[ \t]+(?P<value>(?!\[redacted:)[a-z0-9+/]{12,}={0,2})(?![a-z0-9+/=_-])"),
    group="value",
    literals=("basic",),
    lower=True,
    word_start=True,
    classify=_basic,
)
#: A query parameter (``?key=…``, ``&sign=…``) and what a value of one is shaped like.
_QUERY_PARAMETER = re.compile(r"[?&](?P<name>[a-z][\w.-]{0,39})=(?P<value>[^&#\s\"'<>]+)")
_QUERY_VALUE = re.compile(r"(?=[^0-9]*[0-9]).{6,}|.{16,}")


class _QueryRule(_Rule):
    """A URL's or a form body's parameter that carries a credential under a name that says no
    secret (``vocabulary.yaml`` ``query_keys``: a WeCom webhook's ``?key=``, DingTalk's ``&sign=``,
    ``X-Amz-Signature``, an OAuth ``code``): its value goes when shaped like one. Parameters
    whose name does say a secret (``?access_token=``) are the key rule's."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        names = _query_keys()
        for found in self.pattern.finditer(low):
            value = found.group("value")
            if found.group("name") in names and _QUERY_VALUE.fullmatch(value) and not value.startswith("[redacted:"):
                yield found.start("value"), found.end("value"), "query-credential"


@cache
def _query_keys() -> frozenset[str]:
    return frozenset(word.lower() for word in vocabulary().query_keys)


_QUERY = _QueryRule(
    "query-credential",
    _QUERY_PARAMETER,
    literals=tuple(sorted(f"{name}=" for name in _query_keys())),
    lower=True,
    prefilter=True,
)

#: A token a service writes with its prefix (``vocabulary.yaml`` ``token_prefixes``: dop_v1_, xapp-,
#: hvs. …): sixteen or more token characters after it, a digit among them.
_TOKEN_BODY = re.compile(r"(?=[A-Za-z0-9_.-]{0,200}?[0-9])[A-Za-z0-9_.-]{16,}")


class _PrefixedTokenRule(_Rule):
    """Each prefix found with ``str.find`` (no regex over the text), its body matched there."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for prefix in vocabulary().token_prefixes:
            for at in _find_all(text, prefix):
                body = _TOKEN_BODY.match(text, at + len(prefix))
                if body is not None and not (at > 0 and _is_word(text[at - 1])):
                    yield at, body.end(), "token"


_PREFIXED_TOKEN = _PrefixedTokenRule(
    "token", re.compile(""), literals=tuple(sorted({p.lower() for p in vocabulary().token_prefixes})), prefilter=True
)
#: A secret-naming path word (``vocabulary.yaml`` ``path_keys``) and the path after it.
_PATH_AFTER_KEY = re.compile(
    r"/(?:" + "|".join(re.escape(w.lower()) for w in vocabulary().path_keys) + r")/(?P<rest>[^?#\s\"'<>]{8,512})"
)
_PATH_SEGMENT = re.compile(r"[^/]+")
_SEGMENT_SECRET = re.compile(r"(?=[^0-9]*[0-9])(?=.*[a-z]).{8,}|.{16,}", re.IGNORECASE)


class _PathRule(_Rule):
    """A URL path's segments after a word naming a credential (a chat webhook's id and token:
    ``/open-apis/bot/v2/hook/<uuid>``, ``/api/webhooks/<id>/<token>``): each shaped like a
    secret goes — letters with a digit among eight or more, or sixteen or more — and ids of
    digits only stay."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(low):
            for segment in _PATH_SEGMENT.finditer(low, *found.span("rest")):
                value = segment.group()
                if not value.isdigit() and _SEGMENT_SECRET.fullmatch(value) and not value.startswith("[redacted:"):
                    yield segment.start(), segment.end(), "token"


_PATH_SECRET = _PathRule(
    "token",
    _PATH_AFTER_KEY,
    literals=tuple(f"/{w.lower()}/" for w in vocabulary().path_keys),
    lower=True,
    prefilter=True,
)

# Up to the last "@" before the host: an unencoded "@" inside a password stays covered.
_URL_PASSWORD = _Rule(
    "password",
    # a user may hold an "@" (smtp://postmaster@example.com:…@mail…): the secret ends at the last one
    re.compile(r"://[^\s/?#:\"'<>]*:(?P<value>[^\s/?#\"'<>]+)@"),
    group="value",
    literals=("://",),
)

#: Oracle's JDBC URL writes the logon before the host, without "//": ``jdbc:oracle:thin:
#: scott/pw@db-1:1521/svc``. Up to the last "@": a quoted password may hold one.
_JDBC_ORACLE = _Rule(
    "password",
    re.compile(r"jdbc:oracle:(?:thin|oci8?|kprb):[^\s/@:\"'<>]+/(?P<value>(?:\"[^\"\n]*\"|[^\s\"'<>])+)@"),
    group="value",
    literals=("jdbc:oracle:",),
    lower=True,
)


#: A password hash in the modular crypt format (``/etc/shadow``, ``.htpasswd``, a user table, a
#: config's ``password_hash``): cracked offline, so its salt and digest go — whatever stands
#: around it, since a hash tells its own shape — and the scheme and its parameters stay
#: (``$6$[REDACTED:password-hash]``). One rule per family, each found by its literal prefix.
_CRYPT = r"[./0-9A-Za-z]"
_HASHES = tuple(
    _Rule("password-hash", re.compile(pattern), group="value", literals=literals, prefilter=True)
    for pattern, literals in (
        # md5-crypt and Apache's apr1: salt up to 8 (16 tolerated), digest 22
        (rf"\$(?:1|apr1|md5)\$(?P<value>{_CRYPT}{{0,16}}\${_CRYPT}{{22}})(?!{_CRYPT})", ("$1$", "$apr1$", "$md5$")),
        # sha256-crypt and sha512-crypt, with their rounds
        (
            rf"\$[56]\$(?:rounds=[0-9]{{1,9}}\$)?(?P<value>{_CRYPT}{{0,16}}\${_CRYPT}{{43,86}})(?!{_CRYPT})",
            ("$5$", "$6$"),
        ),
        # bcrypt: cost, then 22 of salt and 31 of digest without a break
        (rf"\$2[abxy]?\$[0-9]{{2}}\$(?P<value>{_CRYPT}{{53}})(?!{_CRYPT})", ("$2$", "$2a$", "$2b$", "$2x$", "$2y$")),
        # yescrypt and gost-yescrypt (parameters, salt, digest), scrypt's $7$ (parameters and salt, digest)
        (rf"\$g?y\${_CRYPT}{{1,16}}\$(?P<value>{_CRYPT}{{0,86}}\${_CRYPT}{{43}})(?!{_CRYPT})", ("$y$", "$gy$")),
        (rf"\$7\$(?P<value>{_CRYPT}{{11,96}}\${_CRYPT}{{43}})(?!{_CRYPT})", ("$7$",)),
        # argon2 (PHC string: version and cost parameters, salt, digest in base64)
        (
            r"\$argon2(?:id|i|d)\$(?:v=[0-9]{1,4}\$)?m=[0-9]{1,10},t=[0-9]{1,4},p=[0-9]{1,4}"
            r"\$(?P<value>[A-Za-z0-9+/]{8,128}\$[A-Za-z0-9+/]{16,128})",
            ("$argon2",),
        ),
        # passlib's pbkdf2 and scrypt, Django's pbkdf2 (no leading "$": its algorithm names it)
        (
            r"(?:\$pbkdf2(?:-sha(?:1|256|512))?\$|(?<![\w$])pbkdf2_sha(?:1|256)\$)[0-9]{1,9}"
            r"\$(?P<value>[./0-9A-Za-z+]{4,128}\$[./0-9A-Za-z+]{16,128}={0,2})",
            ("$pbkdf2", "pbkdf2_sha"),
        ),
        (
            r"\$scrypt\$ln=[0-9]{1,3},r=[0-9]{1,3},p=[0-9]{1,3}\$(?P<value>[./0-9A-Za-z+]{4,128}\$[./0-9A-Za-z+]{16,128})",
            ("$scrypt$",),
        ),
    )
)


def _jwt(found: re.Match[str], _text: str) -> str | None:
    return "jwt" if JwtTokenDetector.is_formally_valid(found.group(0)) else None


# Header and payload are base64url JSON ('{"' = "eyJ"); the signature belongs to the secret.
_JWT = _Rule(
    "jwt",
    re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    literals=("eyj",),
    word_start=True,
    classify=_jwt,
)


#: A JWT a terminal, a mail or a log wrapper cut into lines: its first line ends the line, the
#: lines after it are token characters alone (indented, or after a backslash continuation).
_JWT_WRAPPED = re.compile(
    r"eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?(?:[ \t]*\\?\r?\n[ \t]*[A-Za-z0-9_.-]+(?=[ \t]*(?:\\?\r?\n|$)))+"
)
_WRAPPED_PIECE = re.compile(r"[A-Za-z0-9_.-]+")


class _WrappedJwtRule(_Rule):
    """A JWT cut into lines (``_JWT_WRAPPED``): when the pieces joined are one (a header and a
    payload of base64url JSON, a signature), each piece goes as its own marker, so the lines stay
    lines."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(text):
            if found.start() > 0 and _is_word(text[found.start() - 1]):
                continue
            pieces = list(_WRAPPED_PIECE.finditer(text, *found.span()))
            if JwtTokenDetector.is_formally_valid("".join(piece.group() for piece in pieces)):
                for piece in pieces:
                    yield *piece.span(), "jwt"


_JWT_LINES = _WrappedJwtRule("jwt", _JWT_WRAPPED, literals=("eyj",))


def _sas(found: re.Match[str], text: str) -> str | None:
    return "azure-sas-signature" if found.start() > 0 and text[found.start() - 1] in "?&;" else None


_OWN_FORMATS = (
    _Rule("github-token", re.compile(r"github_pat_[A-Za-z0-9_]{22,}"), literals=("github_pat_",), extend=True),
    _Rule("gcp-api-key", re.compile(r"AIza[0-9A-Za-z_-]{35}"), literals=("aiza",), extend=True),
    *(
        _Rule(
            "azure-storage-key",
            re.compile(label + r"[ \t]*=[ \t]*(?P<value>[a-z0-9+/]{20,}={0,2})"),
            group="value",
            literals=(label,),
            lower=True,
        )
        for label in ("accountkey", "sharedaccesskey")
    ),
    _Rule(
        "azure-sas-signature",
        re.compile(r"sig=(?P<value>[a-z0-9%+/=]{16,})"),
        group="value",
        literals=("sig=",),
        lower=True,
        classify=_sas,
    ),
    _Rule(
        "aws-secret-key",
        re.compile(
            r"aws[\w.-]{0,20}?secret[\w.-]{0,20}?[\"']?" + _SEP + r"[\"']?(?P<value>[a-z0-9/+]{40})(?![a-z0-9/+])"
        ),
        group="value",
        literals=("aws",),
        lower=True,
    ),
)


def _library(
    plugin: Any, index: int, kind: str, literals: tuple[str, ...], *, group: int = 0, prefilter: bool = False
) -> _Rule:
    """A detect-secrets token pattern, taken from the plugin (pinned version), not copied.
    ``prefilter`` for the ones without a literal prefix (case-insensitive, or an alternation)."""
    pattern = cast(re.Pattern[str], plugin.denylist[index])
    return _Rule(kind, pattern, group, literals, prefilter=prefilter, extend=True)


def _library_joined(plugin: Any, kind: str, literals: tuple[str, ...]) -> _Rule:
    """A plugin's patterns as one alternation, one scan (PyPI: same prefix; GitLab's seven
    are faster apart: 0.7 ms against 2.3 ms joined, per 64 KB)."""
    patterns = cast(Sequence[re.Pattern[str]], plugin.denylist)
    if len({p.flags for p in patterns}) != 1:
        raise ValueError(f"{plugin.__name__}: patterns with different flags cannot be joined")
    joined = re.compile("|".join(f"(?:{p.pattern})" for p in patterns), patterns[0].flags)
    return _Rule(kind, joined, 0, literals, extend=True)


_LIBRARY_FORMATS = (
    _library(AWSKeyDetector, 0, "aws-access-key", ("akia", "asia", "abia", "acca", "a3t")),
    _library(AWSKeyDetector, 1, "aws-secret-key", ("aws",), group=1, prefilter=True),
    _library(GitHubTokenDetector, 0, "github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    *(
        _library(GitLabTokenDetector, i, "gitlab-token", ("gl", "gr1348941"), prefilter=True)
        for i in range(len(GitLabTokenDetector.denylist))
    ),
    _library(SlackDetector, 0, "slack-token", ("xox",), prefilter=True),
    _library(SlackDetector, 1, "slack-webhook", ("hooks.slack.com",), prefilter=True),
    _library(StripeDetector, 0, "stripe-key", ("k_live_",), prefilter=True),
    _library(SendGridDetector, 0, "sendgrid-key", ("sg.",)),
    _library(OpenAIDetector, 0, "openai-key", ("t3blbkfj",)),
    _library_joined(PypiTokenDetector, "pypi-token", ("pypi-",)),
    _library(SquareOAuthDetector, 0, "square-oauth-secret", ("sq0csp-",)),
)

# -- key = value -------------------------------------------------------------------------------


def _last_words() -> list[str]:
    """The words a secret's key can end with (``vocabulary.yaml`` and detect-secrets' list, and
    the names whose value goes when shaped like a secret): the longest first, so the regex
    below takes "password" before "pass"."""
    words = {entry[-1] for entry, _ in (*key_entries(), *shaped_entries())}
    # "accountkey" ends in "key": found from there (the key's start is read backwards)
    ends = {w for w in words if not any(w != other and w.endswith(other) for other in words)}
    return sorted(ends, key=lambda w: (-len(w), w))


def _word_tree(words: list[str]) -> str:
    """``words`` as one pattern, a tree of their common prefixes (the longer continuation first at
    each branch, so "password" is tried before "pass"): at a place, the regex engine tries one
    branch per next character instead of every word in turn. A sigma matches either form
    (``str.lower`` writes a final one as σ before ``:`` and a letter)."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word.replace("ς", "σ"):
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [
            ("[σς]" if char == "σ" else re.escape(char)) + pattern(child)
            for char, child in sorted(node.items())
            if char
        ]
        if "" in node:
            branches.append("")
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return pattern(tree)


#: Where a key's last word can start: one ``str.find`` each (four letters, or one Han character).
_KEY_ANCHORS = tuple(sorted({w[:4] if w[0].isascii() else w[0] for w in _last_words()}))
_ASCII_KEY_ANCHORS = tuple(a for a in _KEY_ANCHORS if a.isascii())
_KEY_LAST_WORD = (
    _word_tree(_last_words())
    + "(?:[_.-]?(?:"
    + "|".join(re.escape(w) for w in vocabulary().encodings)
    # or a short word mixing ASCII with Greek or Cyrillic letters (the scripts with Latin look-
    # alikes): an encoding word spelt with one ("гасло_bаse64", "гаслоEnс": Cyrillic а, с), which
    # ``key_kind`` reads folded
    + r")|[_.-]?(?=[^\W_]*?[a-z0-9])(?=[^\W_]*?[\u0370-\u03ff\u0400-\u04ff])[^\W_]{1,12}(?![^\W_]))*"
)
#: A key's last word followed by other words of the key (``password_hash``, ``password_хеш``,
#: ``password_min_length``), fewest first: ``keys.contained_kind`` decides what they name.
_KEY_WORD_TAIL = _word_tree(_last_words()) + r"(?:[_.-]?[^\W_]{1,24}){0,3}?"
#: Words between a key and its sign that say what follows ("password is: …", 密码是：…).
_SPOKEN_WORDS = "|".join(
    r"[ \t\u3000]+".join(map(re.escape, w.split()))
    # a number said between a name and its value stands alone ("password 0 …"), not before a
    # decimal point or a unit ("getToken 0.00KiB")
    + (r"(?=[ \t\u3000])" if w.isdigit() else "")
    for w in sorted(vocabulary().spoken, key=len, reverse=True)
)
#: What follows a key: its closing quotes, the assignment (an arrow, or a spoken word before the
#: sign, too), a YAML tag (``!!binary``, ``!secret``: how the value is written, not the value),
#: then the value, quoted, braced (an ODBC connection string's ``PWD={p@ss;word}``, ``}}`` an
#: escaped ``}``) or bare.
_ASSIGNED = (
    r"(?P<close>[\"'\]]{0,2})(?P<sep>(?:[ \t\u3000]*(?:"
    + _SPOKEN_WORDS
    + r")){0,3}"
    + _SEP
    # a string literal's prefix (Python's b'…', u"…", rb'…', f"…") is no part of the value
    + r")(?:!!?[a-z][\w:/.-]*[ \t]+)?+(?:(?:[bruf]{1,2}(?=[\"']))?"
    + r"(?P<q>[\"'`])(?P<quoted>(?:\\.|(?!(?P=q))[^\\\n]){1,4096})(?P=q)"
    + r"|\{(?P<braced>(?![{$%\"])(?:\}\}|[^{}\n]){1,4096})\}(?![\w{}])"
    # an opening quote never closed (a line cut short) still opens a value
    # (never an escaped quote: "password->\"…\"" in a JSON string is read decoded)
    + r"|[\"'`]?(?P<bare>(?!\[redacted:|\\[\"'])[^\s\"'`,;&)\]}>]+))"
)
_KEY_VALUE = re.compile(_KEY_WORD_TAIL + _ASSIGNED)
_ASSIGNED_VALUE = re.compile(_ASSIGNED)
#: Han words after a key are what happened to it ("令牌=已过期", "获取令牌：失败"), not a value.
_HAN_WORDS = re.compile(f"[{HAN}]+")
_PLACEHOLDER = re.compile(
    r"(?i)(?:null|none|nil|true|false|undefined|empty|redacted|hidden|masked|n/?a|yes|no|-+|[*x•#.]+|\?)"
    # ${DB_PASSWORD}, $DB_PASSWORD, $(cat pw), %(password)s, {{ token }}, <secret>: templates, not values
    # (a crypt hash, $2b$12$…, is a value)
    r"|\$(?:[{(].*|[A-Za-z_]\w*)|[%{<].*"
)
_PROSE_AFTER = re.compile(r"[ \t]+[^\s:=]")


def _key_start(text: str, end: int) -> int:
    start = end
    while start > 0 and end - start < 128 and (_is_word(text[start - 1]) or text[start - 1] in ".-"):
        start -= 1
    return start


@lru_cache(maxsize=4)
def _key_starts(low: str) -> list[int]:
    """Where a secret key's last word may start in ``low``: one scan shared by the rules that
    read keys (the same lower-cased string is passed to each)."""
    anchors = _ASCII_KEY_ANCHORS if low.isascii() else _KEY_ANCHORS  # an ASCII text holds no other
    return sorted({i for anchor in anchors for i in _find_all(low, anchor)})  # callers only read it


@dataclass(frozen=True)
class _KeyValueRule(_Rule):
    """A key naming a secret (``db_password=…``, ``"api_key": "…"``, ``令牌：…``) assigned a
    value that is not a placeholder: the value goes, the key stays. After a colon, a bare word
    of letters followed by more words is prose ("verify password: invalid hash"), while
    "password: changeme" ending a config line is a value. Where no sign follows the key,
    ``spoken`` reads it named in prose (``_spoken_value``), from the same look for keys."""

    spoken: re.Pattern[str] | None = None

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        starts = _key_starts(low)
        markers = [m.span() for m in MARKER_PATTERN.finditer(text)] if "[redacted:" in low else []
        for at in starts:
            found = self.pattern.match(low, at)
            read = _assigned_value
            if found is None and self.spoken is not None:
                found, read = self.spoken.match(low, at), _spoken_value
            if found is None or any(a < at < b for a, b in markers):
                continue  # a marker's kind ("[REDACTED:secret]") names no key
            begin = _key_start(text, at)
            if text.endswith("://", 0, begin):
                continue  # a URL's user named "pw" (https://pw:…@db-1): its password is the URL rule's
            key = text[begin : found.start("close")]
            kind, shaped = _kind_and_shape(key, spoken=read is _spoken_value)
            if kind is None and read is _spoken_value and (named := _two_word_key(text, at, key)) is not None:
                key, kind, shaped = named, key_kind(named), None  # "my api key is …": a key of two words
            if kind is None and read is _spoken_value and _after_user(text, found.start("close") - len(key)):
                kind = glued_kind(key)  # "admin/pass S3cret": a user's secret, though "pass" alone is none
            if kind is None:
                continue
            span = read(text, low, found, key)
            if span is not None and (shaped is None or shaped(text[span[0] : span[1]])):
                yield *span, kind
                if (more := _continued(text, span[1])) is not None:
                    yield *more, kind


#: A value shaped like a credential under a name that is one only then (``auth``, ``pin``): a
#: digit among four or more characters, or sixteen or more.
_SHAPED_VALUE = re.compile(r"(?=[^0-9]*[0-9]).{4,}|.{16,}", re.DOTALL)


def _shaped_credential(value: str) -> bool:
    return _SHAPED_VALUE.fullmatch(value) is not None and value.lower() not in _outcomes()


#: Digits with a clock's, a date's or a number's punctuation: a time, a count, a version.
_TIMELIKE = re.compile(r"[\d:.,\-/+TZtz ]+")
#: A release as software writes it: ``v1.2.3``, ``2.1.0-rc1``, ``V6.2.7+build.5`` (dotted numbers
#: and a pre-release or build tag); never a secret's shape.
_VERSION = re.compile(r"[vV]?\d{1,6}(?:\.\d{1,6}){1,3}(?:[-+][0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*)?")


def _contained_secret(value: str) -> bool:
    """A value under a key holding a secret word among others (``password_hash``): one no word,
    count, time, URL or path can be — eight or more characters mixing letters with digits or
    symbols (``_memorable``), or a digit among six or more (``_SPOKEN_VALUE``)."""
    if _TIMELIKE.fullmatch(value) or "://" in value or value.startswith(("/", "~")):
        return False
    return _memorable(value) or _SPOKEN_VALUE.fullmatch(value) is not None


def _kind_and_shape(key: str, *, spoken: bool = False) -> tuple[str | None, Callable[[str], bool] | None]:
    """The kind ``key`` names, and the test its value must pass when the key names a secret only
    with a value shaped like one (``keys.shaped_kind``, ``keys.contained_kind``); prose
    (``spoken``) reads only keys that name one whole."""
    kind = key_kind(key)
    if kind is None and spoken and key.lower() not in vocabulary().not_alone:
        kind = glued_kind(key)  # "rootpw Zq8vK3mW": a value shaped like one follows (``_spoken_value``)
    if kind is not None or spoken:
        return kind, None
    if (kind := shaped_kind(key)) is not None:
        return kind, _shaped_credential
    return contained_kind(key) or glued_kind(key), _contained_secret


def _named_secret(key: str, value: str) -> str | None:
    """The kind of secret ``value`` is under ``key``: its key names one, whole or by the value's
    shape (``_kind_and_shape``)."""
    kind, shaped = _kind_and_shape(key)
    if kind is None or shaped is None:
        return kind
    return kind if shaped(value[: _bare_end(value, 0, len(value))]) else None


@cache
def _outcomes() -> frozenset[str]:
    return frozenset(word.lower() for word in vocabulary().outcomes)


#: The start of the line after a line continuation, and the rest of a value written there.
_CONTINUATION = re.compile(r"\n[ \t]*(?P<rest>[^\s\"'`,;&)\]}>]+)")


def _continued(text: str, end: int) -> tuple[int, int] | None:
    """The rest of a value cut by a line continuation (a backslash ending its line: a shell
    command, a ``.properties`` file, a Dockerfile): the first word of the next line. Each part
    goes as its own marker, so the lines stay lines."""
    if end == 0 or text[end - 1] != "\\":
        return None
    rest = _CONTINUATION.match(text, end)
    return None if rest is None else rest.span("rest")


#: A key named in prose before its value: blanks, or a word saying what it is ("the password is
#: …", 密码是…, "token set to …"; ``vocabulary.yaml`` ``spoken``), then one word.
#: Whose secret it is, between its name and its value: "password for bob: …", "token for user
#: 'ci' is …" (a prompt or a report naming the account).
_FOR_ACCOUNT = r"(?:for[ \t]+(?:user[ \t]+|account[ \t]+)?[\"'`]?[\w.@-]{1,64}[\"'`]?[ \t]*(?:[:=：][ \t]*)?)?"
_SPOKEN_SEP = (
    r"(?P<sep>[ \t\u3000]*"
    + _FOR_ACCOUNT
    # one phrase after another: "was changed to", "has been reset to", 已改为
    + r"(?:(?:(?:"
    + _SPOKEN_WORDS
    + r")[ \t\u3000]*){1,3}|(?P<cell>[,|;])[ \t\u3000]*)?)"
)
_SPOKEN = re.compile(_KEY_LAST_WORD + r"(?P<close>)" + _SPOKEN_SEP + r"[\"'`(\[<]?(?P<bare>[!-~]+)")
#: A value told from a word by its shape: six or more characters and a digit (hunter2x,
#: Zq8vK2mN, 483920): "password expired", "token bucket 100", "密码错误 3 次" stay as written.
_SPOKEN_VALUE = re.compile(r"(?=[^0-9]*[0-9])[!-~]{6,}")
_SPOKEN_END = "\"'`,;.)]}>"
#: The next field of the line (``host=db-1``, ``user:alice``), not a value; base64's ``==`` is.
_NEXT_FIELD = re.compile(r"[A-Za-z_][\w.-]*[=:][^=]")


def _spoken_value(text: str, low: str, found: re.Match[str], key: str) -> tuple[int, int] | None:
    """A secret's key followed, without an assignment sign, by a word shaped like a secret
    (``password Zq8vK2mN``, ``the api key is sk_9f…``, ``密码是Abc12345``, ``令牌 3f9a…``): the
    word's span. Fails closed — a token id after "token" goes too — while words and short
    counts stay."""
    sep = found.group("sep")
    opened = not sep and text[found.start("bare") - 1 : found.start("bare")] in ("[", "<")
    if (not sep and not opened) or (sep and sep[0].isascii() and _is_word(sep[0])):
        return None  # "passwordless", "tokenizer": one word, no value; "password[…]" a log format's value
    begin = found.start("close") - len(key)
    if (cell := found.group("cell")) is not None and not _whole_cell(text, begin, cell):
        return None  # "wrong password, user12345 locked": prose, not a table's cells
    if key.startswith((".", "-")) or (
        begin > 0 and (text[begin - 1] == "\\" or (text[begin - 1] == "/" and _in_path(text, begin - 1)))
    ):
        return None  # a file's name (/etc/nginx/.htpasswd), no key
    start, end = found.span("bare")
    if cell is not None and (next_cell := text.find(cell, start, end)) >= 0:
        end = next_cell  # the row's next cell
    if cell is not None and _TIMELIKE.fullmatch(text, start, end):
        return None  # "UserController.getToken,1674984606403928526": a span's time, an id or a count
    while end > start and text[end - 1] in _SPOKEN_END:
        end -= 1
    value = text[start:end]
    if (
        not _SPOKEN_VALUE.fullmatch(value)
        or _PLACEHOLDER.fullmatch(value)
        or _NEXT_FIELD.match(value)
        or value.lower().startswith("[redacted:")
        or value[0] in "-=:>\\"  # a sign or an escape: an assignment the key rule reads (decoded)
        or _VERSION.fullmatch(value)  # "token v1.2.3": a release, no secret
        or _measured(text, start)  # "getToken 12.5ms": a span's time in a trace, no token
    ):
        return None
    return start, end


#: A word before a slash that makes what follows a file's name: a directory (``/etc``, ``~``, ``./``,
#: ``C:``) or a path already (``usr/bin``).
_PATH_HEAD = re.compile(r"[^\s\"'`=]*[/\\.~:][^\s\"'`=]*|")


def _in_path(text: str, slash: int) -> bool:
    """Is the slash at ``slash`` a path's (``/etc/passwd``, ``usr/bin/passwd``), not one between a
    user and the secret word after it (``admin/pw S3cret``, ``root/password …``)?"""
    head = slash
    while head > 0 and not text[head - 1].isspace() and text[head - 1] not in "\"'`=" and slash - head < 64:
        head -= 1
    return _PATH_HEAD.fullmatch(text, head, slash) is not None and not text[head:slash].isalnum()


def _whole_cell(text: str, begin: int, cell: str) -> bool:
    """Is the key at ``begin`` a whole cell of a row whose cells ``cell`` parts (``2026-07-07,password,
    …``, ``| password | … |``): the line starts, or the same sign stands, before it (blanks aside)?"""
    at = begin
    while at > 0 and text[at - 1] in " \t\u3000":
        at -= 1
    return at == 0 or text[at - 1] in ("\n", cell)


def _after_user(text: str, begin: int) -> bool:
    """Does a user and a slash stand before the key at ``begin`` (``admin/pass``), not a path?"""
    return begin > 0 and text[begin - 1] == "/" and not _in_path(text, begin - 1)


def _measured(text: str, start: int) -> bool:
    """Does a measurement (``_MEASUREMENT``) stand whole at ``start`` ("12.5ms", "100µs")?"""
    found = _MEASUREMENT.match(text, start)
    return found is not None and (found.end() == len(text) or not text[found.end()].isalnum())


def _two_word_key(text: str, at: int, key: str) -> str | None:
    """The key of two words ending with ``key`` ("api key", "access key", "私有 密钥") when the two
    name a secret that the last alone does not: prose writes a key's words apart."""
    if key.lower() in vocabulary().not_alone:
        return None  # "mark this diagnosis as PASS (ERR_A00000)": a verdict; no word before makes it a key
    start = _key_start(text, at)
    before = text[max(0, start - 24) : start].rstrip(" \t")
    if len(before) == len(text[max(0, start - 24) : start]):
        return None  # no blank before the key: not a word of its own
    word = _LAST_WORD.search(before)
    if word is None:
        return None
    named = f"{word.group()} {key}"
    return named if key_kind(named) is not None else None


_LAST_WORD = re.compile(r"[A-Za-z]+$")


#: A number with a unit of time, size or share: what a trace or a metric writes after a name that
#: holds a secret word (``UserController.getToken 12.5ms``). A bare number may be a code and goes.
_MEASUREMENT = re.compile(r"[-+]?\d+(?:[.,]\d+)?(?:[KMGT]i?B|ns|us|µs|μs|ms|s|m|h|B|%)", re.IGNORECASE)


def _assigned_value(text: str, low: str, found: re.Match[str], key: str) -> tuple[int, int] | None:
    """The span of the value ``found`` (an ``_ASSIGNED`` match) gives ``key``, unless it is no
    value: a placeholder, Han words saying what happened to it, a directory after ``PWD``,
    or a word opening prose after a colon."""
    group = next(g for g in ("quoted", "braced", "bare") if found.group(g) is not None)
    start, end = found.span(group)
    if group == "bare":
        end = _bare_end(text, start, end)
        if end < len(text) and text[end] in "\"'" and text[end - 1] == "\\":
            end -= 1  # PASSWORD(\"…\") in a JSON string: the escape is no part of the value (read decoded)
        if _HAN_WORDS.fullmatch(text, start, end):
            return None
        if _CALL_OPEN.fullmatch(text, start, end):
            return _call_literal(text, end)  # password=PASSWORD('…'): the call's literal
    value = text[start:end].strip()
    if not value or _PLACEHOLDER.fullmatch(value) or _BLOCK_INDICATOR.fullmatch(value):
        return None  # a YAML block's value is on the lines below: ``_BLOCK``
    if key.lower().endswith("pwd") and value.startswith(("/", "~")):
        return None  # PWD=/srv/app is a directory
    colon = found.group("sep").strip().endswith((":", "："))
    if group == "bare" and colon and value.isalpha() and _PROSE_AFTER.match(low, end):
        return None
    return start, end


#: A bare value that opens a call or a tuple (``PASSWORD(``, ``decrypt(``, ``(``): the value is
#: its literals.
_CALL_OPEN = re.compile(r"(?:[A-Za-z_][\w.]*)?\(")
#: A string literal: a backslash escape or a doubled quote (SQL's '') inside.
_LITERAL_BODY = r"(?:\\.|(?P=q){2}|(?!(?P=q))[^\\\n])"
_CALL_LITERAL = re.compile(r"[ \t]*[Nn]?(?P<q>['\"])(?P<value>" + _LITERAL_BODY + r"{1,512})(?P=q)(?!(?P=q))")


#: A variable's name written in one case (``DB_PASSWORD``, ``db.password``), not a value.
_VARIABLE = re.compile(r"[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_.]*")


def _names_variable(literal: str) -> bool:
    """A literal naming a variable or setting that holds a secret (``os.getenv("DB_PASSWORD")``),
    not the secret: a name in one case that names one (``Zq7ToKEN`` is a value)."""
    return _VARIABLE.fullmatch(literal) is not None and key_kind(literal) is not None


#: What follows one literal of a call's or a tuple's arguments before the next: a comma.
_NEXT_ARGUMENT = re.compile(r"[ \t]*,")


def _call_literal(text: str, at: int) -> tuple[int, int] | None:
    """The string literals that open the arguments of a call or a tuple at ``at``, one after
    another (``auth=('deploy', '…')`` loses both: which is the secret only the callee knows),
    unless the first names a variable (``os.getenv("DB_PASSWORD")``) or is a placeholder."""
    literal = _CALL_LITERAL.match(text, at)
    if literal is None or _names_variable(literal.group("value")):
        return None
    start, end = literal.span("value")
    while (comma := _NEXT_ARGUMENT.match(text, literal.end())) is not None:
        following = _CALL_LITERAL.match(text, comma.end())
        if following is None:
            break
        literal, end = following, following.end("value")
    return _unquoted(text, start, end)


#: A break inside a key's word: blanks (a full-width one too), ``_ . -``, middle dots, dashes,
#: invisible characters.
_INNER_BREAK = "[ \t\u3000_.\\-\u00b7\u00ad\u2010-\u2015\u2027\u2219\u30fb\u200b-\u200d\u2060\ufeff]"
#: Read on the reversed string: an assignment, then the key's last piece of letters and a break
#: before it, with a letter or digit before the break (reversed, all after it). Reversed, the
#: search starts at the assignment signs, which a line has few of. A piece is at most a secret
#: word without its first letter ("ecoveryphrase" of "r ecoveryphrase").
#: The signs, each alternative a literal (the search then skips to the characters that can start
#: one, as for a character set: an alternative that is a set made the engine try every position,
#: ~1.8× the search, measured): ``>=``, ``=:`` before ``=`` alone, ``:``, ``：``, ``＝``.
_SIGNS = "(?:>=|=:?|:|：|＝)"
_TAIL_CHARS = max(len("".join(entry)) for entry, _ in key_entries()) - 1
_SPLIT_TAIL = re.compile(
    _SIGNS + rf"[ \t]*[\"'\]]{{0,2}}(?P<tail>[^\W\d_]{{1,{_TAIL_CHARS}}})" + _INNER_BREAK + r"+[^\W_]"
)
#: The same for text outside ASCII: a combining mark is part of its word (पा सवर्ड).
_SPLIT_TAIL_MARKED = re.compile(
    _SIGNS
    + rf"[ \t]*[\"'\]]{{0,2}}(?P<tail>(?:[^\W\d_]|[{MARKS}]){{1,{_TAIL_CHARS}}})"
    + _INNER_BREAK
    + rf"+(?:[^\W_]|[{MARKS}])"
)


@cache
def _tails() -> frozenset[str]:
    """The proper ends of the secret words (``word`` of password, ``码`` of 密码): where a
    broken key can end."""
    words = {"".join(entry) for entry, _ in key_entries()}
    return frozenset(w[i:] for w in words for i in range(1, len(w)))


class _SplitKeyRule(_Rule):
    """A key whose secret word is broken by blanks, dashes, dots or invisible characters
    (``pass word=…``, ``密　码：…``, ``p-a-s-s-w-o-r-d: …``) is read as the word it spells: its
    pieces are joined back from its end (``keys.key_kind``) and the value goes as above."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        size = len(low)
        tails = _tails()
        markers = [m.span() for m in MARKER_PATTERN.finditer(text)] if "[redacted:" in low else []
        for found in (self.pattern if low.isascii() else _SPLIT_TAIL_MARKED).finditer(low[::-1]):
            tail = found.group("tail")[::-1]
            end = size - found.start("tail")  # where the key ends in ``text``
            if (tail if tail.isascii() else tail.replace("ς", "σ")) not in tails or any(
                a < end <= b for a, b in markers
            ):
                continue  # a marker's kind ("[REDACTED:secret-key]") names no key
            start = end - len(tail)
            pieces = [text[start:end]]
            while len(pieces) < 16 and end - start < 96:
                before = start
                while before > 0 and _INNER_BREAK_CHAR.fullmatch(text[before - 1]):
                    before -= 1
                piece = before
                while piece > 0 and _is_word(text[piece - 1]) and text[piece - 1] != "_" and before - piece < 32:
                    piece -= 1
                if before in (piece, start):
                    break
                pieces.insert(0, text[piece:before])
                start = piece
                kind = key_kind("".join(pieces))
                if kind is None:
                    continue
                assigned = _ASSIGNED_VALUE.match(low, end)
                if assigned is not None:
                    span = _assigned_value(text, low, assigned, "".join(pieces))
                    if span is not None:
                        yield *span, kind
                break


_INNER_BREAK_CHAR = re.compile(_INNER_BREAK)

_BLOCK_INDICATOR = re.compile(r"[|>][-+]?[0-9]?[-+]?")
#: A line ending in a YAML block indicator, read from the line's start: indentation, a list
#: dash, the key, ``:``, a tag, the indicator.
_BLOCK_LINE = re.compile(
    r"(?P<indent>[ \t]*)(?:-[ \t]+)?[\"']?(?P<key>[^\n:：\"']{1,128})[\"']?[ \t]*[:：][ \t]*"
    r"(?:!!?[a-z][\w:/.-]*[ \t]+)?(?:[|>][-+]?[0-9]?[-+]?)?[ \t]*\n"
)
#: A line that opens YAML structure rather than continuing a scalar: a mapping key, a list item,
#: a comment, a flow collection.
_YAML_STRUCTURE = re.compile(r"[ \t]*(?:[-#\[{]|[^\s:：]+[ \t]*[:：](?:[ \t]|$))")


@dataclass(frozen=True)
class _BlockRule(_Rule):
    """A YAML block scalar under a key naming a secret (``password: |``, ``key: !!binary >-``):
    the value is the more indented lines below, which go as one marker. The one rule besides
    a PEM block that reads across lines; a block lives inside one record. ``plain``: a key
    alone on its line (``password:``) whose value is a plain scalar on the lines below — unless
    the next line opens structure (a nested mapping or a list)."""

    plain: bool = False

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(low):
            begin = low.rfind("\n", 0, found.start()) + 1
            line = _BLOCK_LINE.fullmatch(low, begin, found.end())
            if line is None:
                continue
            kind, shaped = _kind_and_shape(text[line.start("key") : line.end("key")])
            if kind is None:
                continue
            if self.plain and (_YAML_STRUCTURE.match(text, found.end()) or any(c.isspace() for c in line.group("key"))):
                continue  # a nested mapping or list; or a sentence ending in a colon ("invalid token:")
            indent = len(line.group("indent"))
            start = end = found.end()
            at = start
            while at < len(text):
                stop = text.find("\n", at)
                stop = len(text) if stop < 0 else stop
                body = text[at:stop]
                if body.strip():
                    if len(body) - len(body.lstrip(" \t")) <= indent:
                        break
                    end = stop
                at = stop + 1
            if end > start:
                first = start + len(text[start:end]) - len(text[start:end].lstrip())
                if shaped is None or shaped(text[first:end]):
                    yield first, end, kind


# a block starts at a line's end: a text of one line (a model's JSON) is not searched
_BLOCK = _BlockRule("secret", re.compile(r"[|>][-+]?[0-9]?[-+]?[ \t]*\n"), requires=("\n",))
_PLAIN_BLOCK = _BlockRule("secret", re.compile(r"[:：][ \t]*\n"), requires=("\n",), plain=True)


def _bare_end(text: str, start: int, end: int) -> int:
    """Where an unquoted value ends: at the first non-ASCII punctuation or separator
    ("密码=Abc12345，用户=admin" stops at "，"). Any other character belongs to it — accented
    letters, Han, "�" left by undecodable bytes, zero-width characters — so no part of
    "password=pässwörd" is left behind. Unicode categories, because the ranges of CJK and
    general punctuation a character class would list are the database's to keep."""
    for at in range(start, end):
        char = text[at]
        if not char.isascii() and unicodedata.category(char)[0] in "PZ":
            return at
    return end


def _prefix_tree(literals: set[str]) -> str:
    """A pattern matching where any of ``literals`` starts, as a tree of their common prefixes:
    the regex engine tries one branch per next character instead of every literal in turn (a flat
    alternation of ~300 literals cost more per short string than the rules it gated). A literal
    that extends another is left out: the shorter one already matches there."""
    tree: dict[str, Any] = {}
    for literal in literals:
        node = tree
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return pattern(tree)


def _find_all(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


_KEYWORD = _KeyValueRule("secret", _KEY_VALUE, literals=_KEY_ANCHORS, spoken=_SPOKEN)
_SPLIT_KEY = _SplitKeyRule("secret", _SPLIT_TAIL)

#: A string literal naming a secret, a comma, and the literal after it: a setting written as two
#: items (``("DB_PASSWORD", "…")``, ``props.put("db.password", "…")``, ``config.set('db',
#: 'password', '…')``, ``["token", "…"]``).
_PAIR_AFTER = re.compile(
    _KEY_WORD_TAIL + r"(?P<close>[\"'])[ \t]*,[ \t]*(?P<q>[\"'])(?P<quoted>(?:\\.|(?!(?P=q))[^\\\n]){1,4096})(?P=q)"
)


class _PairRule(_Rule):
    """A secret's name as one string literal and its value as the next (``_PAIR_AFTER``): the
    value goes when shaped like a secret (``_contained_secret``) — a list of field names
    (``['username', 'password', 'email']``) holds none."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for at in _key_starts(low):
            found = self.pattern.match(low, at)
            if found is None:
                continue
            begin = _key_start(text, at)
            if begin == 0 or text[begin - 1] != text[found.start("close")]:
                continue  # the name is a literal of its own, not the end of a longer one
            kind = _kind_and_shape(text[begin : found.start("close")])[0]
            start, end = found.span("quoted")
            if (
                kind is not None
                and not MARKER_PATTERN.fullmatch(text, start, end)
                and _contained_secret(text[start:end])
            ):
                yield start, end, kind


_PAIR = _PairRule("secret", _PAIR_AFTER, literals=_KEY_ANCHORS)

#: A call named after a secret given a string literal (``setPassword("…")``, ``withToken('…')``,
#: ``.password("…")``, ``password.set("…")``).
_SETTER_AFTER = re.compile(
    _KEY_WORD_TAIL
    + r"(?P<close>)(?:\.(?:set|put|update))?\([ \t]*(?:[bru]{1,2}(?=[\"']))?"
    + r"(?P<q>[\"'`])(?P<quoted>(?:\\.|(?!(?P=q))[^\\\n]){1,4096})(?P=q)"
)
_SETTER_METHOD = re.compile(r"\.(?:set|put|update)$", re.IGNORECASE)


@cache
def _readers() -> frozenset[str]:
    return frozenset(word.lower() for word in vocabulary().readers)


@cache
def _entry_words() -> frozenset[tuple[str, ...]]:
    return frozenset(words for words, _ in key_entries())


class _SetterRule(_Rule):
    """A call named after a secret and given a string literal (``_SETTER_AFTER``): the literal
    goes, unless the call's first word reads, checks or derives the secret (``vocabulary.yaml``
    ``readers``: ``getPassword("alice")``) and the name is not a secret's own (``refreshToken``)."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for at in _key_starts(low):
            found = self.pattern.match(low, at)
            if found is None:
                continue
            key = _SETTER_METHOD.sub("", text[_key_start(text, at) : found.start("close")])
            name = key.rsplit(".", 1)[-1]
            kind = key_kind(name)
            words = key_words(name)
            if kind is None or not words or (words[0] in _readers() and words not in _entry_words()):
                continue
            start, end = found.span("quoted")
            value = text[start:end]
            if value.strip() and not _PLACEHOLDER.fullmatch(value) and not MARKER_PATTERN.fullmatch(value):
                yield start, end, kind


_SETTER = _SetterRule("secret", _SETTER_AFTER, literals=_KEY_ANCHORS)

# -- command lines and token formats the library lacks ---------------------------------------


def _after_blank(found: re.Match[str], text: str) -> bool:
    """The match starts a word: the line's start, a blank or a quote, or punctuation outside
    ASCII (a Chinese sentence's "：" before a command)."""
    before = text[found.start() - 1] if found.start() else " "
    return before in " \t'\"" or (not before.isascii() and unicodedata.category(before)[0] in "PZ")


def _user_kind(found: re.Match[str], text: str) -> str | None:
    return "password" if _after_blank(found, text) else None


#: ``curl -u deploy:pw``, ``--user=deploy:pw``, ``--proxy-user``: the user stays, the password goes.
_COMMAND_USER = _Rule(
    "password",
    re.compile(r"-(?:u|-user|-proxy-user)(?:[ \t]+|=)['\"]?[^\s:'\"]+:(?P<value>[^\s'\"]+)"),
    group="value",
    literals=("-u", "--user", "--proxy-user"),
    classify=_user_kind,
    bare=True,
)


def _option_kind(found: re.Match[str], text: str) -> str | None:
    return _named_secret(found.group("key"), found.group("value")) if _after_blank(found, text) else None


#: An option naming a secret followed by its value: ``--db-password hunter2``, ``--token=…``.
_COMMAND_OPTION = _Rule(
    "secret",
    # never a shell operator or a redirection ("--with-token < token.txt", "--token && next")
    re.compile(r"--(?P<key>[^\W\d_][\w.-]*)(?:[ \t]+|=)['\"]?(?P<value>[^\s'\"\-&|;<>][^\s'\"]*)"),
    group="value",
    literals=("--",),
    classify=_option_kind,
    bare=True,
)


def _short_option_kind(found: re.Match[str], text: str) -> str | None:
    """A one-dash option whose whole name names a secret, before a value shaped like one."""
    kind = key_kind(found.group("key")) if _after_blank(found, text) else None
    value = text[found.start("value") : _bare_end(text, *found.span("value"))].rstrip(_SPOKEN_END)
    if kind is None or not _SPOKEN_VALUE.fullmatch(value) or _PLACEHOLDER.fullmatch(value):
        return None
    return None if _measured(text, found.start("value")) else kind


class _ShortOptionRule(_Rule):
    """Matched only where a secret's word stands in a word after a dash (the key rule's look for
    keys, shared), not a try at every dash of the text."""

    def matches(self, subject: str, low: str) -> Iterator[re.Match[str]]:
        dashes: set[int] = set()
        for at in _key_starts(low):
            start = at
            while start > 0 and at - start < 32 and (low[start - 1].isalnum() or low[start - 1] == "_"):
                start -= 1
            if start > 0 and low[start - 1] == "-":
                dashes.add(start - 1)
        for dash in sorted(dashes):
            found = self.pattern.match(subject, dash)
            if found is not None:
                yield found


#: A one-dash option named as a secret (PuTTY's ``plink -pw …``, ``-password …``): written in lower
#: case (``grep -Pw`` is two flags), its value only when shaped like a secret (``_SPOKEN_VALUE``).
_COMMAND_SHORT_OPTION = _ShortOptionRule(
    "secret",
    re.compile(r"-(?P<key>[a-z][a-z0-9_]{1,31}+)(?:[ \t]+|=)['\"]?(?P<value>[^\s'\"\-&|;<>][^\s'\"]*)"),
    group="value",
    literals=_KEY_ANCHORS,  # the name ends with a secret's word
    classify=_short_option_kind,
    bare=True,
)


def _compared_kind(found: re.Match[str], text: str) -> str | None:
    end = found.end("key")
    while end < len(text) and _is_word(text[end]):
        end += 1  # a combining mark ends ``\w``, not the word (पासवर्ड)
    return key_kind(text[found.start("key") : end])


#: A quoted value compared with a key naming a secret, value first (``"…" == password``).
_COMPARED = _Rule(
    "secret",
    re.compile(r"(?P<q>[\"'])(?P<value>[^\"'\n]{1,512})(?P=q)[ \t]*[!=]==?[ \t]*(?P<key>[^\W\d][\w.-]*)"),
    group="value",
    literals=("==",),
    # the pattern starts at a quote: a long text of quoted strings (a model's JSON) without any
    # comparison was read string by string for nothing
    requires=("==", "!="),
    classify=_compared_kind,
)


@dataclass(frozen=True)
class _Client:
    words: tuple[str, ...]  # the command, lower case: ("docker", "login")
    attached: tuple[str, ...]
    separate: tuple[str, ...]
    credentials: tuple[Credential, ...]
    shaped: tuple[str, ...] = ()


@cache
def _clients() -> dict[str, tuple[_Client, ...]]:
    """``vocabulary.yaml``'s clients by their command's first word."""
    by_first: dict[str, list[_Client]] = {}
    for client in vocabulary().commands:
        for name in client.names:
            words = tuple(name.lower().split())
            entry = _Client(
                words, tuple(client.attached), tuple(client.separate), tuple(client.credentials), tuple(client.shaped)
            )
            by_first.setdefault(words[0], []).append(entry)
    return {first: tuple(entries) for first, entries in by_first.items()}


#: A command's arguments end where the shell starts another command (outside quotes), at a quote
#: never closed on the line (the one around a command quoted in a log: ``"log": "mysql -p…"``), or
#: at the line's end.
_ARGUMENTS_END = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"|(?P<end>[\n;|&`)]|\$\(|(?<!\\)[\"'])")
_ARGUMENT = re.compile(r"(?:'[^'\n]*'?|\"(?:[^\"\\\n]|\\.)*\"?|\\.|[^\s'\"\\])+")
#: A word that may name a command: what follows a blank, a path's slash, a quote, ``$(``, ``=``.
#: (Anything outside ASCII breaks too: a client's name is ASCII, and a Chinese line writes its
#: command right after its own words, "失败：mysql -p…".)
_COMMAND_WORD = re.compile(r"[^\s/'\"(;|&`=$\x80-\U0010ffff]+")
_COMMAND_BREAKS = re.compile(r"[\s/'\"(;|&`=$\x80-\U0010ffff]+")


class _CommandRule(_Rule):
    """The secret-carrying options and arguments of the command-line clients in
    ``vocabulary.yaml`` (``mysql -pVALUE``, ``redis-cli -a VALUE``, ``smbclient -U user%VALUE``,
    ``sqlplus user/VALUE@db``, ``htpasswd -b file user VALUE``): from the command's words to
    where the shell starts another command, each value goes; a variable or template (``$PW``,
    ``${PW}``) is no value. Found from the flags (one scan, ``_anchor_search``) and the names of
    clients whose arguments carry one (one ``str.find`` each), then each command on their line
    is read."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        lines: set[int] = set()  # lines already read
        flags, names = _anchor_search()
        found = itertools.chain(
            *((m.start() for m in pattern.finditer(low)) for pattern in flags),
            *(_find_all(low, name) for name in names),
        )
        for at in found:
            line = low.rfind("\n", 0, at) + 1
            if line in lines:
                continue
            lines.add(line)
            end = low.find("\n", at)
            end = len(low) if end < 0 else end
            if _clients().keys().isdisjoint(_COMMAND_BREAKS.split(low[line:end])):
                continue  # no client named on the line (split and compared in C)
            for word in _COMMAND_WORD.finditer(low, line, end):
                for client in _clients().get(word.group(), ()):
                    after = _command_end(low, word.start(), client.words)
                    if after is not None:
                        for start, end, kind in _option_values(text, after, client):
                            yield start, _bare_end(text, start, end), kind  # "-u a0，请检查": no Chinese comma
                        break


@cache
def _anchors() -> tuple[str, ...]:
    """The literals, lower case: every client's flags after a blank or a tab, and the first
    word of the clients whose positional arguments carry a secret (a short one with the blank
    or tab after it)."""
    flags = {
        blank + f.lower()
        for blank in " \t"
        for c in vocabulary().commands
        for f in (*c.attached, *c.separate, *c.shaped, *(o for credential in c.credentials for o in credential.options))
    }
    words = {
        name.lower().split()[0]
        for c in vocabulary().commands
        if any(not credential.options for credential in c.credentials)
        for name in c.names
    }
    # a short one with the blank that must follow it: "mc " is rarer than "mc"
    names = {w if len(w) > 4 else w + blank for w in words for blank in " \t"}
    return tuple(sorted(flags | names))


def _command_end(low: str, at: int, words: tuple[str, ...]) -> int | None:
    """Where ``words`` written from ``at`` (blanks between) end, when a blank follows them."""
    for word in words:
        if not low.startswith(word, at):
            return None
        at += len(word)
        if at >= len(low) or low[at] not in " \t":
            return None
        while at < len(low) and low[at] in " \t":
            at += 1
    return at


def _option_values(text: str, start: int, client: _Client) -> Iterator[tuple[int, int, str]]:
    end = len(text)
    for stop in _ARGUMENTS_END.finditer(text, start):
        if stop.group("end") is not None:
            end = stop.start()
            break
    arguments = [(m.start(), m.end()) for m in _ARGUMENT.finditer(text, start, end)]
    words = [text[a:b] for a, b in arguments]
    for index, (a, b) in enumerate(arguments):
        word = words[index]
        value: tuple[int, int] | None = None
        for flag in client.separate:
            if word == flag and index + 1 < len(arguments) and not text.startswith("-", arguments[index + 1][0]):
                value = arguments[index + 1]
            elif word.startswith(flag + "="):
                value = (a + len(flag) + 1, b)
        for flag in client.attached:
            if value is None and len(word) > len(flag) and word.startswith(flag) and word[len(flag)] != "=":
                value = (a + len(flag), b)
        if value is None and word in client.shaped and index + 1 < len(arguments):
            following = arguments[index + 1]  # mysql -p S3cret9: a password written where a database goes
            if _SPOKEN_VALUE.fullmatch(text[following[0] : _bare_end(text, *following)].strip("'\"")):
                value = following
        if value is not None:
            span = _unquoted(text, *value)
            if span is not None:
                yield *span, "password"
    for credential in client.credentials:
        for value in _credential_values(text, arguments, words, credential):
            span = _secret_of(text, *value, credential)
            if span is not None:
                yield *span, "password"


#: Quotes closing what holds an unquoted value, and the brackets and commas after them.
_CLOSERS = re.compile(r"[\"'][\"'}\])>,;\\]*$")


def _unquoted(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``start:end`` without the quotes around it (and a list's comma), up to a sentence's
    punctuation outside ASCII ("…S3cret，请检查": ``_bare_end``), unless it is empty or a
    placeholder."""
    while start < end and (text[start] in "'\"" or text.startswith(('\\"', "\\'"), start)):
        start += 1  # a quote, or one escaped in a JSON string (\"…\")
    end = _bare_end(text, start, end)
    if (closers := _CLOSERS.search(text, start, end)) is not None:
        end = closers.start()  # cmd="mysql -p'V'"}: the quotes and brackets around the command
    while end > start and text[end - 1] in "'\",\\":
        end -= 1
    return (start, end) if end > start and not _PLACEHOLDER.fullmatch(text[start:end]) else None


def _credential_values(
    text: str, arguments: Sequence[tuple[int, int]], words: Sequence[str], credential: Credential
) -> Iterator[tuple[int, int]]:
    """The argument spans (``words`` their text) ``credential`` says hold a secret, with its
    user if it has one."""
    if credential.when and not any(_given(flag, words) for flag in credential.when):
        return
    if credential.options:
        for index, word in enumerate(words):
            for option in credential.options:
                a, b = arguments[index]
                if word == option and index + 1 < len(words):
                    yield arguments[index + 1]
                elif word.startswith(option + "="):
                    yield a + len(option) + 1, b
                elif len(option) == 2 and option[0] == "-" and len(word) > 2 and word.startswith(option):
                    yield a + 2, b  # -Ualice%pw
        return
    # a lone "-" is an argument (standard input: "vault login -"), not an option
    positional = [span for span, word in zip(arguments, words, strict=True) if word == "-" or not word.startswith("-")]
    if credential.argument == "any":
        yield from positional
    elif credential.argument == "last":
        yield from positional[-1:]
    elif credential.argument == "named":
        for (a, b), (c, d) in itertools.pairwise(positional):
            if key_kind(text[a:b].strip("'\"")) is not None:
                yield c, d
    elif credential.argument <= len(positional):
        yield positional[credential.argument - 1]


def _given(flag: str, words: Sequence[str]) -> bool:
    """``flag`` among ``words``, alone or as a letter of a cluster of short flags (``-nb``)."""
    return any(
        word == flag
        or (
            len(flag) == 2
            and word.startswith("-")
            and not word.startswith("--")
            and word[1:].isalpha()
            and flag[1] in word
        )
        for word in words
    )


_ASSIGNMENT = re.compile(r"['\"]?[A-Za-z_][A-Za-z_.-]*=")


def _secret_of(text: str, start: int, end: int, credential: Credential) -> tuple[int, int] | None:
    """The secret's span in the argument ``start:end``: after the user and the separator, up to
    ``until``; the whole argument when the credential has no separator."""
    separator = credential.separator
    if separator is None:
        # key=value (vault login username=…) is an assignment: a secret key's value goes by its key
        if _ASSIGNMENT.match(text, start, end) or text[start:end] == "-":
            return None  # or the secret comes from standard input
        return _unquoted(text, start, end)
    at = start
    while True:
        at = text.find(separator, at, end)
        if at < 0:
            return None
        if text[at - 1] != "\\":
            break
        at += 1
    user = text[start:at].strip("'\"")
    if not any(c.isalpha() for c in user) or user[0] in "-@/" or "=" in user or "[REDACTED:" in user:
        return None  # "/ as sysdba", "@dir/script.sql", "ratio 3/4", "logfile=a/b.log", a marker
    secret_end = end
    if credential.until is not None:
        quoted = False
        for i in range(at + 1, end):
            if text[i] == '"':
                quoted = not quoted
            elif text[i] == credential.until and not quoted:
                secret_end = i
    return _unquoted(text, at + 1, secret_end)


@cache
def _anchor_search() -> tuple[tuple[re.Pattern[str], ...], tuple[str, ...]]:
    """How a long string is searched for the anchors: the flags after " -" in one scan (a
    literal prefix the regex engine looks for as fast as ``str.find`` looks for one flag), and
    after a tab in another; the others one ``str.find`` each."""
    dashed = "|".join(map(re.escape, sorted((a[2:] for a in _anchors() if a.startswith(" -")), key=len, reverse=True)))
    flags = (re.compile(f" -(?:{dashed})"), re.compile(f"\t-(?:{dashed})"))
    return flags, tuple(a for a in _anchors() if not a.startswith((" -", "\t-")))


#: The anchors gate short strings; a long one is searched by the rule itself (``_anchor_search``).
_COMMAND_FLAGS = _CommandRule("password", re.compile(""), literals=_anchors())


def _openai(found: re.Match[str], _text: str) -> str | None:
    value = found.group(0)
    return "openai-key" if any(c.isdigit() for c in value) and any(c.isalpha() for c in value[3:]) else None


#: OpenAI's project, service-account and admin keys (``sk-proj-…``) carry no fixed marker; the
#: library's pattern needs its ``T3BlbkFJ``. A word must start at ``sk-`` (``disk-usage`` is none).
_OPENAI = _Rule(
    "openai-key",
    re.compile(r"sk-[A-Za-z0-9_-]{20,}"),
    literals=("sk-",),
    word_start=True,
    classify=_openai,
)

# -- values found by what they are, not by their key -------------------------------------------

_BASE64_PLUGIN = Base64HighEntropyString()
_HEX_PLUGIN = HexHighEntropyString()
_UUIDISH = re.compile(r"[0-9a-fA-F]{8}(?:-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}")
_QUOTES = "\"' \t"


def _key_before(text: str, at: int) -> str | None:
    """The key a value at ``at`` is assigned to (``trace_id=``, ``"sig": "``), read backwards:
    quotes and blanks, one ``= : := =>``, quotes and blanks, then the key's characters."""
    i = at
    while i > 0 and text[i - 1] in _QUOTES:
        i -= 1
    if i == 0 or text[i - 1] not in ":=：＝>":
        return None
    i -= 1
    if i > 0 and text[i - 1] in ":=":
        i -= 1
    while i > 0 and text[i - 1] in _QUOTES:
        i -= 1
    end = i
    while i > 0 and end - i < 64 and (_is_word(text[i - 1]) or text[i - 1] in ".-"):
        i -= 1
    return text[i:end] if i < end else None


#: The base64 digits a group of four starts with when its first byte is ASCII (below 0x80): a
#: token encoding ASCII text ({"apiKey": …} is eyJhcGlLZXki…) starts every group with one, though
#: it may hold no digit.
_SEXTETS_OF_ASCII = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")


#: What a Basic credential encodes: a user, ``:``, a secret (``admin:S3cret…``).
_ENCODED_LOGIN = re.compile(r"[A-Za-z][\w.@+-]{0,63}:(?P<secret>[!-~]{6,128})")


class _ValueRule(_Rule):
    """Values found by what they are, not by their key: tokens of the base64 alphabet (16+
    characters) with upper and lower case and digits (random keys and base64 of text have all
    three; words, ClassNames, paths, hex ids and pod names do not).

    - encoded: a token whose base64-decoded text holds a secret (``cGFzc3dvcmQ9aHVudGVyMg==``
      is ``password=hunter2``) goes whole, as the kind found inside — a token without digits too
      when each group of four starts as ASCII text's do (``_SEXTETS_OF_ASCII``);
    - detect-secrets' Base64 high-entropy detector: a token of 20+ above the plugin's limit
      (4.5 bits a character: a PEM body line, a random API key), unless its key names an
      identifier (``trace_id=``, ``etag:``)."""

    def spans(self, text: str, _low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(text):
            token = found.group().rstrip("=")
            if token.lower() == token or token.upper() == token:
                continue
            digits = _DIGIT.search(token) is not None
            if not digits and not _SEXTETS_OF_ASCII.issuperset(token[::4]):
                continue  # a word or a ClassName: no digit, and it encodes no ASCII text
            start = found.start()
            if start > 0 and text[start - 1] == "\\" and (escape := _ESCAPE_HEAD.match(text, start)) is not None:
                start = escape.end()  # "\u8bc1a02…": the escape stays whole, its JSON still parses
            decoded = base64_text(found.group())
            if decoded is not None:
                inner = [kind for kind, _ in default_redactor().scan(decoded).counts if kind != "bidi-control"]
                if inner:
                    yield start, found.end(), inner[0]
                    continue
                login = _ENCODED_LOGIN.fullmatch(decoded)
                if login is not None and _contained_secret(login.group("secret")):
                    yield start, found.end(), "basic-auth"  # user:password, as Basic auth encodes it
                    continue
            if (
                digits
                and len(token) >= 20
                and not _UUIDISH.fullmatch(token)
                and _BASE64_PLUGIN.calculate_shannon_entropy(token) >= _BASE64_PLUGIN.entropy_limit
            ):
                key = _key_before(text, start)
                if key is None or not identifier_key(key):
                    yield start, found.end(), "high-entropy"


def _structured_first(text: str, finds: list[tuple[int, int, int, str]]) -> list[tuple[int, int, int, str]]:
    """Finds without a high-entropy token that holds a credential a grammar found at its end
    (or past it: a trailing ":" the token leaves out) after a user and a separator ("sqlplus
    a012/Zq73…": the password goes, the user ``a012`` stays — the grammar knows which part is
    the secret; the token's randomness does not)."""
    keyed = [(start, -negative_end) for start, _order, negative_end, kind in finds if kind != _VALUES.kind]
    if not keyed:
        return finds
    return [
        find
        for find in finds
        if find[3] != _VALUES.kind
        or not any(
            find[0] < start and end >= -find[2] and _USER_HEAD.fullmatch(text, find[0], start) for start, end in keyed
        )
    ]


#: A user before the secret a grammar found in the same token: a name, then "/" or ":".
_USER_HEAD = re.compile(r"[A-Za-z0-9_.\-]{1,64}[/:]")
#: The rest of an escape after its backslash (``\u8bc1``, ``\x41``, ``\n``).
_ESCAPE_HEAD = re.compile(r"u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[nrtbf/]")
#: Tokens are the runs of the alphabet (a run is matched whole, from its first character);
#: the three kinds of character are tested on each in C (``lower``, ``upper``, one search),
#: three times faster than lookaheads at every position.
_VALUES = _ValueRule("high-entropy", re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}"))
_DIGIT = re.compile(r"[0-9]")


def _hex_kind(found: re.Match[str], text: str) -> str | None:
    key = text[_key_start(text, found.start()) : found.end("key")]
    value = found.group("value")
    entropy = _HEX_PLUGIN.calculate_shannon_entropy(value)
    return "high-entropy" if hex_key(key) and entropy > _HEX_PLUGIN.entropy_limit else None


#: detect-secrets' Hex high-entropy detector, only where a key names a signature or a session
#: secret (``sig=``, ``hmac:``): trace, span and commit ids and hashes are hex too, and stay.
_HEX_SECRET = _Rule(
    "high-entropy",
    re.compile(
        r"(?:" + "|".join(re.escape(w) for w in vocabulary().hex_keys) + r")(?P<key>[\w.-]{0,24}?)[\"']?[ \t]*"
        r"(?::=|=>|[:=：＝])[ \t]*[\"']?(?P<value>[0-9a-f]{32,})(?![0-9a-z])"
    ),
    group="value",
    literals=tuple(vocabulary().hex_keys),
    prefilter=True,
    lower=True,
    classify=_hex_kind,
)

_KEYWORD_PLUGIN = KeywordDetector()
_LIBRARY_ANCHORS = ("pass", "pwd", "secret", "key", "contrase")


class _LibraryKeywordRule(_Rule):
    """detect-secrets' KeywordDetector on each line holding one of its words: it reads assignments
    of languages and configs the rule above does not (``password == "…"``, ``$pwd := '…'``,
    ``secret => "…"``). Each value it reports is replaced where it stands after its word."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        lines: set[tuple[int, int]] = set()
        for anchor in _LIBRARY_ANCHORS:
            for at in _find_all(low, anchor):
                begin = low.rfind("\n", 0, at) + 1
                end = low.find("\n", at)
                lines.add((begin, len(low) if end < 0 else end))
        for begin, end in sorted(lines):
            line = text[begin:end]
            if len(line) > 4096 or "[REDACTED:" in line or next(_KEYWORD.spans(line, low[begin:end]), None):
                continue  # the library's regexes cost ~0.2 ms a line: only where the own rule found none
            for reported in set(_KEYWORD_PLUGIN.analyze_string(line)):
                value = reported.strip()
                if not value or _PLACEHOLDER.fullmatch(value) or "[REDACTED:" in value:
                    continue
                at = line.find(value)
                while at >= 0:
                    if _next_to_word(line.lower(), at, at + len(value)):
                        yield begin + at, begin + at + len(value), "secret"
                    at = line.find(value, at + len(value))


def _next_to_word(low: str, at: int, end: int) -> bool:
    """The value at ``at:end`` stands next to its key word with only operators and quotes
    between (``password == "…"``, ``"…" == password``); not to another key's
    (``"private_key_id": "…"``)."""
    word = max(low.rfind(anchor, 0, at) for anchor in _LIBRARY_ANCHORS)
    if word >= 0:
        after = word
        while after < at and low[after].isalpha():
            after += 1
        if not any(c.isalnum() or c == "_" for c in low[after:at]):
            return True
    following = [i for anchor in _LIBRARY_ANCHORS if (i := low.find(anchor, end)) >= 0]
    return bool(following) and not any(c.isalnum() or c == "_" for c in low[end : min(following)])


_LIBRARY_KEYWORD = _LibraryKeywordRule("secret", re.compile(""), literals=_LIBRARY_ANCHORS)

# -- statements: connection files, protocol verbs, logins, calls, SQL, piped secrets ---------------

#: A ``.pgpass`` line (``hostname:port:database:username:password``), found from its port field: the
#: password is the last field, a backslash escaping ``:`` in it.
_PGPASS = re.compile(
    r":(?:\d{1,5}+|\*):(?:\*|[\w.$-]++):(?:\*|[\w.@$+-]++):(?P<value>(?:\\.|[^\s:\\\"'])++)(?=[\s\"']|$)"
)


class _PgpassRule(_Rule):
    """A ``.pgpass`` line inside any text: its host field starts a word (after a blank, a quote,
    ``=`` or the line's start) and holds a letter or a dot, or is ``*``; clocks
    (``10:00:01:123:456``), MAC addresses and ``file:line:col:`` places stay."""

    def spans(self, text: str, _low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(text):
            host = start = found.start()
            while host > 0 and (_is_word(text[host - 1]) or text[host - 1] in ".-*"):
                host -= 1
            name = text[host:start]
            if host > 0 and text[host - 1] in ":/\\@":  # a field or a path of something longer
                continue
            if name != "*" and not any(c.isalpha() or c == "." for c in name):
                continue
            start, end = found.span("value")
            end = _bare_end(text, start, end)  # "…:S3cret，请检查" ends at the "，"
            if end > start and not _PLACEHOLDER.fullmatch(text[start:end]):
                yield start, end, "password"


_PGPASS_FILE = _PgpassRule("password", _PGPASS)

#: A word of a command inside a line of text: quoted, or up to a blank, a quote or what ends the
#: command (the line's end, the shell's next command, the quote or bracket around it).
_STATEMENT_WORD = re.compile(
    r"[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`;|&)\]}>\\]+)(?=[\s\"'`;|&)\]}>\\\x80-\U0010ffff]|$)"
)


def _statement_words(text: str, at: int) -> list[tuple[int, int]]:
    """The spans of the words of a command from ``at`` to its end (or the line's next
    ``key=value`` field), each without its blanks."""
    words = []
    while (word := _STATEMENT_WORD.match(text, at)) is not None:
        if _NEXT_FIELD.match(word.group().lstrip(" \t")):
            break  # the log line's next field (took=2ms), not an argument
        words.append((word.start() + len(word.group()) - len(word.group().lstrip(" \t")), word.end()))
        at = word.end()
    return words


#: A prompt before a command typed in any case ("127.0.0.1:6379> ", "redis> ").
_PROMPT = re.compile(r"(?:^|\s)\S*>[ \t]*$")


@cache
def _verbs() -> tuple[tuple[str, frozenset[int]], ...]:
    return tuple((name.lower(), frozenset(v.arguments)) for v in vocabulary().verbs for name in v.names)


class _VerbRule(_Rule):
    """A protocol command sending a secret (``vocabulary.yaml`` ``verbs``: Redis ``AUTH [user]
    secret``) written in capitals, or in any case after a prompt or quoted as MONITOR shows it
    (``"auth" "…"``), or in lower case starting a statement (``auth …`` in a ``.rediscli_history``
    line, a JSON field) when its secret is shaped like one: with as many arguments as the
    command takes to the statement's end, none an outcome word ("AUTH OK", "AUTH failed for
    user bob" stay), the last goes."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for name, counts in _verbs():
            for at in _find_all(low, name):
                after = at + len(name)
                # Redis MONITOR writes each word quoted, in the case the client sent: "auth" "…"
                quoted = at > 0 and after < len(low) and text[at - 1] == text[after] == '"'
                after += quoted
                if (at > 0 and _is_word(low[at - 1])) or after >= len(low) or low[after] not in " \t":
                    continue
                written = text[at : at + len(name)]
                begin = low.rfind("\n", 0, at) + 1
                typed = written == written.upper() or quoted or _PROMPT.search(text, begin, at) is not None
                if not typed and _STATEMENT_START.search(text, begin, at) is None:
                    continue
                arguments = _statement_words(text, after)
                if len(arguments) not in counts or any(
                    text[a:b].strip("'\"").lower() in _outcomes() for a, b in arguments
                ):
                    continue
                if not typed and not _shaped_argument(text, *arguments[-1]):
                    continue  # "auth ldap" opening a line: a word, no secret
                span = _unquoted(text, *arguments[-1])
                if span is not None and _VERSION.fullmatch(text, *span):
                    continue  # "AUTH v1.2.3": a release of an auth service or plugin, no secret
                if span is not None and not text.startswith("[REDACTED:", span[0]):
                    yield *span, "password"


#: Where a command typed in lower case without a prompt starts a statement: the line's start, a
#: quote (a JSON log's field, a history line), or the shell's break before it (``; auth …``).
_STATEMENT_START = re.compile(r"(?:^|[\"'`;|&(])[ \t]*$")


def _shaped_argument(text: str, start: int, end: int) -> bool:
    """The argument at ``start:end`` is shaped like a secret (a digit among six or more
    characters), not an address, a clock or a version, a measurement or a template."""
    value = text[start:end].strip("'\"")
    return (
        _SPOKEN_VALUE.fullmatch(value) is not None
        and (value.isdigit() or not _TIMELIKE.fullmatch(value))
        and not _PLACEHOLDER.fullmatch(value)
        and not _measured(text, start + (text[start] in "'\""))
    )


_VERB = _VerbRule("password", re.compile(""), literals=tuple(name for name, _ in _verbs()))

#: After a login word: an assignment or blanks, then ``user<separator>secret``.
_LOGIN_PAIR = re.compile(
    r"[ \t\u3000]*(?:[:=：＝]|->)?[ \t\u3000]*[\"'`]?(?P<user>[^\W\d_][\w.@+-]{0,63}?)(?P<sep>[^\w\s.@+-])"
    r"(?P<value>[^\s\"'`,;)\]}>]+)"
)


#: A word as it is found in text: a word of several words with any blanks between them.
_Spelling = tuple[str, "re.Pattern[str] | None"]


@cache
def _by_head(words: tuple[str, ...]) -> tuple[tuple[str, tuple[_Spelling, ...]], ...]:
    """``words`` by their first four characters (the first, when not ASCII), longest first; a word
    of several words also by its head with a tab for the blank (``log\tin``), and read with any
    blanks between its words (``log  in``, ``sign\t in``)."""
    heads: dict[str, list[_Spelling]] = {}
    for word in sorted(words, key=len, reverse=True):
        head = word[:4] if word[0].isascii() else word[0]
        if " " not in word:
            heads.setdefault(head, []).append((word, None))
            continue
        spelled = re.compile(r"[ \t]+".join(map(re.escape, word.split(" "))))
        for variant in dict.fromkeys((head, head.replace(" ", "\t"))):
            heads.setdefault(variant, []).append((word, spelled))
    return tuple((head, tuple(group)) for head, group in heads.items())


def _found_words(low: str, words: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """Where each of ``words`` starts and ends in ``low`` (the longest of those starting alike):
    one ``str.find`` for the words sharing a head (log in, login, logon), not one a word."""
    for head, group in _by_head(words):
        for at in _find_all(low, head):
            for word, spelled in group:
                if spelled is None and low.startswith(word, at):
                    yield at, at + len(word)
                    break
                if spelled is not None and (found := spelled.match(low, at)) is not None:
                    yield at, found.end()
                    break


@cache
def _logins() -> tuple[tuple[str, ...], frozenset[str]]:
    words = vocabulary()
    return tuple(sorted({w.lower() for w in words.logins}, key=len, reverse=True)), frozenset(words.login_separators)


class _LoginRule(_Rule):
    """``user<separator>secret`` after a word saying it is a login (``vocabulary.yaml``
    ``logins``: "credentials admin:S3cret", "login admin/S3cret", 登录 admin/S3cret): the secret
    goes, the user stays. A secret of digits only (a port), a path or under four characters is
    none ("login api/v1", "creds db-1:5432")."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        words, separators = _logins()
        for at, after in _found_words(low, words):
            if low[at].isascii() and (
                (at > 0 and _is_word(low[at - 1])) or (after < len(low) and _is_word(low[after]))
            ):
                continue
            pair = _LOGIN_PAIR.match(text, after)
            if pair is None or pair.group("sep") not in separators:
                continue
            start, end = pair.start("value"), _bare_end(text, *pair.span("value"))
            value = text[start:end]
            if len(value) < 4 or value.isdigit() or "/" in value or value.lower().startswith("[redacted:"):
                continue
            if not _PLACEHOLDER.fullmatch(value):
                yield start, end, "password"


#: Every login word, or the first word of one of several words and the blank after it (``log\tin``).
_LOGIN = _LoginRule(
    "password",
    re.compile(""),
    literals=tuple(
        dict.fromkeys(w if " " not in w else w.split(" ")[0] + blank for w in _logins()[0] for blank in " \t")
    ),
)

#: One argument of a call: a string literal, or anything up to the next top-level comma or
#: parenthesis (one level of nested parentheses).
_CALL_ARGUMENT = re.compile(
    r"[ \t]*(?:[Nn]?(?P<q>['\"])(?P<literal>" + _LITERAL_BODY + r"{0,512})(?P=q)(?!(?P=q))"
    r"|[^,()'\"\n]*(?:\([^()\n]*\)[^,()'\"\n]*)*)[ \t]*"
)


@cache
def _calls() -> tuple[tuple[str, int], ...]:
    return tuple((name.lower() + "(", call.argument) for call in vocabulary().calls for name in call.names)


class _CallRule(_Rule):
    """A call whose n-th argument is a secret (``vocabulary.yaml`` ``calls``: ``db.auth('admin',
    '…')``, ``PASSWORD('…')``, ``new NetworkCredential(user, "…")``): that argument, when written
    as a string literal that names no variable, goes."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        by_tail = _calls_by_tail()
        for opening in _find_all(low, "("):  # every name ends in "(": one scan, not one a name
            name, position = next(
                ((n, p) for n, p in by_tail.get(low[opening - 4 : opening], ()) if low.endswith(n, 0, opening + 1)),
                ("", 0),
            )
            at = opening + 1 - len(name)
            # a method of any object (conn.simple_bind_s); a name starting with "." only as one
            if not name or (at > 0 and name[0] != "." and _is_word(low[at - 1])):
                continue
            cursor = opening + 1
            for index in range(1, position + 1):
                argument = _CALL_ARGUMENT.match(text, cursor)
                if argument is None:
                    break
                if index == position:
                    literal = argument.group("literal")
                    if literal and not _names_variable(literal) and not literal.lower().startswith("[redacted:"):
                        span = _unquoted(text, *argument.span("literal"))
                        if span is not None:
                            yield *span, "password"
                    break
                cursor = argument.end()
                if cursor >= len(text) or text[cursor] != ",":
                    break
                cursor += 1


@cache
def _calls_by_tail() -> dict[str, tuple[tuple[str, int], ...]]:
    """The calls by the four characters before their "(", longest name first."""
    by_tail: dict[str, list[tuple[str, int]]] = {}
    for name, position in sorted(_calls(), key=lambda call: -len(call[0])):
        by_tail.setdefault(name[-5:-1], []).append((name, position))
    return {tail: tuple(calls) for tail, calls in by_tail.items()}


_CALL = _CallRule("password", re.compile(""), literals=tuple(name for name, _ in _calls()))

#: The literal after a SQL clause: quoted ('…' with '' inside, "…", N'…', $$…$$), or a bare word.
_SQL_LITERAL = re.compile(
    r"[ \t]*(?:[Nn](?='))?(?:'(?P<sq>(?:''|[^'\n])+)'|\"(?P<dq>[^\"\n]+)\"|\$\$(?P<dollar>[^\n]+?)\$\$)"
)
_SQL_BARE = re.compile(r"[ \t]+(?P<bare>[^\s;,)'\"`\\]+)")
#: A bind parameter, not a value (``?``, ``:pw``, ``@pw``).
_SQL_PARAMETER = re.compile(r"\?|[:@][A-Za-z_]\w*")


@dataclass(frozen=True)
class _SqlRule(_Rule):
    """A SQL clause that sets a password (``vocabulary.yaml`` ``sql``: ``IDENTIFIED BY '…'``,
    ``WITH PASSWORD '…'``, ``SET PASSWORD FOR u = '…'``, Oracle's bare ``IDENTIFIED BY tiger``):
    its literal goes."""

    bare: bool = False

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        for found in self.pattern.finditer(low):
            if found.start() > 0 and _is_word(low[found.start() - 1]):
                continue
            literal = _SQL_LITERAL.match(text, found.end())
            if literal is not None:
                group = next(g for g in ("sq", "dq", "dollar") if literal.group(g) is not None)
                span = _unquoted(text, *literal.span(group))
            elif self.bare and (word := _SQL_BARE.match(text, found.end())) is not None:
                span = None if _SQL_PARAMETER.fullmatch(word.group("bare")) else _unquoted(text, *word.span("bare"))
            else:
                continue
            if span is not None and not text.startswith("[REDACTED:", span[0]):
                yield *span, "password"


_SQL = (
    _SqlRule("password", re.compile(vocabulary().sql.quoted.pattern), literals=("password",), lower=True),
    _SqlRule("password", re.compile(vocabulary().sql.bare.pattern), literals=("identified",), lower=True, bare=True),
)


@cache
def _stdin() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The stdin options (their words apart by any blanks: ``sudo  -S``), and the producers."""
    words = vocabulary().stdin
    options = sorted((o.lower().split() for o in words.options), key=lambda o: -len(" ".join(o)))
    option = "|".join(r"[ \t]+".join(map(re.escape, o)) for o in options)
    producers = "|".join(re.escape(p.lower()) for p in words.producers)
    return re.compile(f"(?:{option})"), re.compile(rf"(?<![\w.-])(?:{producers})(?=[ \t])")


@cache
def _producers() -> tuple[str, ...]:
    return tuple(word.lower() for word in vocabulary().stdin.producers)


#: A shell's separators between commands (a pipe or not): where a producer's arguments end.
_SHELL_BREAK = re.compile(r"\|\||&&|[;\n]")
_HERE_STRING = re.compile(r"<<<[ \t]*(?P<word>\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^\s;|&\"'`)\]}>\\]+)")


class _StdinRule(_Rule):
    """A command reading its secret from standard input (``vocabulary.yaml`` ``stdin``: ``docker
    login --password-stdin``): what a producer (``echo``, ``printf``) before the pipe writes —
    ``printf``'s arguments after its format, or the format alone — and a here-string (``<<<``)
    go. A variable (``echo "$PW"``) or a file (``cat pw.txt``) is no value."""

    def spans(self, text: str, low: str) -> Iterator[tuple[int, int, str]]:
        options, producer = _stdin()
        if "<<<" not in low and not any(word in low for word in _producers()):
            return  # a secret reaches standard input from a producer's pipe or a here-string
        for option in options.finditer(low):
            at = option.start()
            if at > 0 and (_is_word(low[at - 1]) or low[at - 1] in "-./"):
                continue
            begin = low.rfind("\n", 0, at) + 1
            stop = _ARGUMENTS_END.search(text, at)
            command_end = len(text) if stop is None or stop.group("end") is None else stop.start()
            for here in _HERE_STRING.finditer(text, begin, command_end):
                span = _unquoted(text, *here.span("word"))
                if span is not None:
                    yield *span, "password"
            pipe = text.rfind("|", begin, at)
            if pipe <= begin or text[pipe - 1] == "|":
                continue
            start = max([begin, *(m.end() for m in _SHELL_BREAK.finditer(text, begin, pipe))])
            found = list(producer.finditer(low, start, pipe))
            if found:
                yield from _produced(text, found[-1], pipe)


def _produced(text: str, found: re.Match[str], end: int) -> Iterator[tuple[int, int, str]]:
    """What ``echo`` or ``printf`` at ``found`` writes: each argument but flags, and printf's
    format only when it is all it writes."""
    arguments = [m.span() for m in _ARGUMENT.finditer(text, found.end(), end)]
    arguments = [(a, b) for a, b in arguments if not text.startswith("-", a)]
    if found.group().startswith("printf") and len(arguments) > 1:
        arguments = arguments[1:]
    for a, b in arguments:
        span = _unquoted(text, a, b)
        if span is None:
            continue
        start, stop = span
        while stop - start > 2 and text[stop - 2] == "\\" and text[stop - 1] in "nr":
            stop -= 2  # printf 'S3cret\n'
        if "%" not in text[start:stop] and not text.startswith("[REDACTED:", start):
            yield start, stop, "password"


_STDIN = _StdinRule(
    "password", re.compile(""), literals=tuple({o.lower().split()[0] for o in vocabulary().stdin.options})
)
_STATEMENTS: tuple[_Rule, ...] = (_PGPASS_FILE, _VERB, _LOGIN, _CALL, *_SQL, _STDIN)


# -- text that displays other than it reads ----------------------------------------------------

#: Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) make text display in
#: another order than it is stored ("Trojan Source"): a planted line stored as
#: "\u202edeirevnu ,deripxe drowssap :esuac toor" shows as "root cause: password expired,
#: unverified" in a terminal or a browser, while every check reads the stored order. Each is
#: replaced by a visible marker at the tool boundary, so what any reader sees is what was
#: checked. (Marks — U+200E/U+200F — only set the direction of neutral characters; kept.)
_BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# its literals are all it matches: a long text is searched only when one is in it (one ``str.find``
# each, none at all for an ASCII text), not read character by character against the set
_BIDI = _Rule("bidi-control", re.compile(f"[{_BIDI_CONTROLS}]"), literals=tuple(_BIDI_CONTROLS), prefilter=True)

#: Most specific first: of finds starting at the same place, the earlier rule names the kind.
_BUILTIN: tuple[_Rule, ...] = (
    _PEM,
    _PEM_CUT,
    _AUTHORIZATION,
    _COOKIE,
    _XML,
    _ENTRIES,
    _JWT,
    _JWT_LINES,
    *_HASHES,
    *_OWN_FORMATS,
    *_LIBRARY_FORMATS,
    _OPENAI,
    _PREFIXED_TOKEN,
    _URL_PASSWORD,
    _PATH_SECRET,
    _QUERY,
    _JDBC_ORACLE,
    _COMMAND_USER,
    _COMMAND_OPTION,
    _COMMAND_SHORT_OPTION,
    _COMMAND_FLAGS,
    _COMPARED,
    *_STATEMENTS,
    _BEARER,
    _BASIC,
    _KEYWORD,
    _SPLIT_KEY,
    _PAIR,
    _SETTER,
    _BLOCK,
    _PLAIN_BLOCK,
    _LIBRARY_KEYWORD,
    _VALUES,
    _HEX_SECRET,
    _BIDI,
)


# -- the redactor -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Redaction:
    """A redacted string, how many secrets of each kind it lost, and the values it lost that a
    session remembers (``SessionRedactor``: kind and value, each value on one line)."""

    text: str
    counts: tuple[tuple[str, int], ...] = ()
    secrets: tuple[tuple[str, str], ...] = ()


class Redactor:
    """Finds secrets in strings, or in any structure of them, and replaces each with a marker.

    ``patterns`` are extra regexes (kind ``custom``); a group named ``secret`` limits the
    replacement to that group, so a key written in the pattern stays readable.
    """

    def __init__(self, patterns: Sequence[str] = (), *, enabled: bool = True) -> None:
        self.enabled = enabled
        custom = tuple(_custom(pattern) for pattern in patterns)
        self._rules: tuple[_Rule, ...] = (*_BUILTIN, *custom) if enabled else ()
        self._custom = custom if enabled else ()
        #: Rules without literals run on every string (entropy, encoded values) and custom ones.
        self._always: tuple[_Rule, ...] = tuple(r for r in self._rules if not r.literals)
        self._decode = enabled
        literals = {literal for rule in self._rules for literal in rule.literals} | {_MARKER_LITERAL}
        self._gate = re.compile(_prefix_tree(literals))
        # Tool outputs repeat: a record's line and its example, the same window read again in
        # the next round. Each string is redacted once per process.
        self._short = lru_cache(maxsize=8192)(self._redact)
        self._long = lru_cache(maxsize=16)(self._redact)

    def redact(self, text: str) -> str:
        return self.scan(text).text

    def for_session(self) -> Redactor:
        """A redactor for one session (a diagnosis): these rules and cache, and a memory of the
        values found there (``SessionRedactor``). Never the shared one's: a session's secrets
        stay in its own object."""
        return SessionRedactor(self) if self._rules else self

    def scan(self, text: str) -> Redaction:
        """The redacted string and what it lost; the same input always gives the same output."""
        if not self._rules or not text:
            return Redaction(text)
        return self._short(text) if len(text) <= _CACHED else self._long(text)

    def redact_written(self, text: str) -> str:
        """Text a model wrote (a JSON document, perhaps with prose around it) redacted without
        breaking its structure: each JSON string is redacted as the string it encodes and
        written back escaped, a string after a key naming a secret goes whole, the rest is
        redacted as text."""
        if not self._rules or not text or self.scan(text).text == text:
            return text
        pieces: list[str] = []
        done = 0
        previous = (-1, "")  # the end of the last JSON string and what it encodes: a key when ":" follows
        for literal in _JSON_STRING.finditer(text):
            pieces.append(self.redact(text[done : literal.start()]))
            done = literal.end()
            try:
                decoded = json.loads(literal.group())
            except ValueError:
                pieces.append(self.redact(literal.group()))
                continue
            # the key as it reads ("\u5bc6\u7801" is 密码), or what precedes the string unquoted
            named = _JSON_COLON.fullmatch(text, previous[0], literal.start()) is not None
            key = previous[1] if named else _key_before(text, literal.start() + 1)
            previous = (literal.end(), decoded)
            kind, shaped = _kind_and_shape(key) if key else (None, None)
            value = decoded.strip()
            if kind is not None and value and not _PLACEHOLDER.fullmatch(value) and (shaped is None or shaped(value)):
                redacted = _marker(kind) if not MARKER_PATTERN.fullmatch(decoded) else decoded
                self._keyed(kind, decoded)
            else:
                redacted = self.redact(decoded)
            pieces.append(literal.group() if redacted == decoded else json.dumps(redacted, ensure_ascii=False))
        pieces.append(self.redact(text[done:]))
        return "".join(pieces)

    def redact_data(self, value: T, counts: Counter[str] | None = None, known: Mapping[str, str] | None = None) -> T:
        """Every string inside ``value`` — dict keys and values, lists, tuples, pydantic models,
        walked generically — redacted; a string under a secret-named key (``{"password": …}``)
        is redacted whole. What was replaced is added to ``counts`` when given. ``known``
        (from ``line_map``) answers strings made of lines already redacted, without a scan
        (and without counting them again)."""
        if not self._rules:
            return value
        return cast(T, self._walk(value, counts, known))

    def line_map(self, text: str, found: Redaction) -> dict[str, str]:
        """Each line of ``text`` → that line redacted, read off ``found = scan(text)``: rules
        are line-local, so the model text and the records, made of the output's lines, need no
        scan of their own. Empty when a private-key block (which spans lines) was replaced."""
        if any(kind == "private-key" for kind, _ in found.counts):
            return {}
        before, after = text.split("\n"), found.text.split("\n")
        return dict(zip(before, after, strict=True)) if len(before) == len(after) else {}

    # -- internals --------------------------------------------------------------------------

    def _walk(self, value: Any, counts: Counter[str] | None, known: Mapping[str, str] | None) -> Any:
        if isinstance(value, str):
            return self._string(value, counts, known)
        if value is None or type(value) in _SCALARS:
            return value
        if isinstance(value, BaseModel):
            updates = {}
            for name in _fields(type(value)):
                old = getattr(value, name)
                new = self._walk(old, counts, known)
                if new is not old:
                    updates[name] = new
            return value.model_copy(update=updates) if updates else value
        if isinstance(value, dict | Mapping):
            pairs = [(k, v, self._walk(k, counts, known), self._entry(k, v, counts, known)) for k, v in value.items()]
            if all(nk is k and nv is v for k, v, nk, nv in pairs):
                return value
            return {nk: nv for _, _, nk, nv in pairs}
        if isinstance(value, list | tuple):
            walked = [self._walk(item, counts, known) for item in value]
            if all(new is old for new, old in zip(walked, value, strict=True)):
                return value
            return walked if isinstance(value, list) else tuple(walked)
        return value

    def _string(self, value: str, counts: Counter[str] | None, known: Mapping[str, str] | None) -> str:
        if known:
            hit: str | None
            if "\n" not in value:
                hit = known.get(value)
            else:
                lines = value.split("\n")
                hit = "\n".join(known[line] for line in lines) if all(line in known for line in lines) else None
            if hit is not None:
                return value if hit == value else hit  # unchanged: the same object, nothing copied
        found = self.scan(value)
        if counts is not None:
            counts.update(dict(found.counts))
        return found.text if found.counts else value

    def _entry(self, key: Any, value: Any, counts: Counter[str] | None, known: Mapping[str, str] | None) -> Any:
        kind, shaped = _kind_and_shape(key) if isinstance(key, str) else (None, None)
        if (
            kind is not None
            and isinstance(value, str)
            and value.strip()
            and not _PLACEHOLDER.fullmatch(value.strip())
            and not MARKER_PATTERN.fullmatch(value)
            and (shaped is None or (shaped(value.strip()) and self.scan(value).text == value))
        ):
            # a value named a secret only by its shape is read as text first: what a rule finds
            # there ("Bearer …" under "auth") keeps its own kind
            if counts is not None:
                counts[kind] += 1
            self._keyed(kind, value)
            return _marker(kind)
        return self._walk(value, counts, known)

    def _keyed(self, kind: str, value: str) -> None:
        """A value replaced whole because its key names a secret; a session remembers it."""

    def _redact(self, text: str) -> Redaction:
        """One pass over the string, then passes over each line holding a marker until it no
        longer changes: a replacement can join text into a new find, and stopping at the fixed
        point makes redaction idempotent. Rules are line-local, so other lines cannot change;
        a changing pass turns unredacted characters into markers, so the loop ends."""
        text, kinds, values = self._pass(text)
        counts = Counter(kinds)
        if kinds:
            lines = text.split("\n")
            for index, line in enumerate(lines):
                if "[REDACTED:" in line:
                    lines[index] = self._settle(line, counts, values)
            text = "\n".join(lines)
        secrets = tuple(dict.fromkeys((kind, value) for kind, value in values if _memorable(value)))
        return Redaction(text, tuple(sorted(counts.items())), secrets)

    def _settle(self, line: str, counts: Counter[str], values: list[tuple[str, str]]) -> str:
        for _ in range(8):
            line, more, found = self._pass(line)
            if not more:
                break
            counts.update(more)
            values += found
        return line

    def _pass(self, text: str) -> tuple[str, list[str], list[tuple[str, str]]]:
        """``text`` with every find replaced; the kind of each marker; each find's kind and
        stored characters (finds that overlap share a marker, and each is a value)."""
        guarded = _markers_in(text)
        finds = self._finds(text, guarded)
        if self._decode:
            finds += self._decoded_finds(text, guarded)
        if not finds:
            return text, [], []
        finds = _structured_first(text, finds)
        finds.sort()
        merged: list[tuple[int, int, str]] = []
        for start, _order, negative_end, kind in finds:
            end = -negative_end
            if merged and start < merged[-1][1]:
                # overlapping finds: one marker covers both, so no piece of either is left
                merged[-1] = (merged[-1][0], max(merged[-1][1], end), merged[-1][2])
            else:
                merged.append((start, end, kind))
        pieces: list[str] = []
        last = 0
        for start, end, kind in merged:
            pieces += [text[last:start], _marker(kind)]
            last = end
        pieces.append(text[last:])
        values = [(kind, text[start:-negative_end]) for start, _order, negative_end, kind in finds]
        return "".join(pieces), [kind for _, _, kind in merged], values

    def _finds(self, text: str, guarded: Sequence[tuple[int, int]]) -> list[tuple[int, int, int, str]]:
        """Every rule's finds in ``text`` as ``(start, rule order, -end, kind)``."""
        low = _lower(text)
        if len(text) <= _SHORT:
            if self._gate.search(low) is None:
                rules: Sequence[_Rule] = self._always
            else:
                rules = [r for r in self._rules if not r.literals or any(x in low for x in r.literals)]
        else:
            seen: dict[str, bool] = {}
            rules = [
                r
                for r in self._rules
                if (not r.prefilter or any(_has(low, x, seen) for x in r.literals))
                and (not r.requires or any(_has(low, x, seen) for x in r.requires))
            ]
        return [
            (start, order, -end, kind)
            for order, rule in enumerate(rules)
            for start, end, kind in rule.spans(text, low)
            if not any(start < b and a < end for a, b in guarded)
        ]

    def _decoded_finds(self, text: str, guarded: Sequence[tuple[int, int]]) -> list[tuple[int, int, int, str]]:
        """Finds in each line as a reader decodes it (``values.decoded_views``), mapped back to
        the stored characters. Only lines holding a ``TRIGGER`` are decoded; their decoded texts
        are searched for the rules' literals in one pass, and a line is mapped back only when
        one of its decoded texts holds a find. Rules are line-local, so the result is too.
        Rules without literals (entropy, base64) read the stored line only: decoding makes no
        token more random."""
        if not needs_decoding(text):
            return []
        triggers = [m.start() for m in TRIGGER.finditer(text)]
        lines: dict[int, tuple[int, str]] = {}  # by where the line begins
        end = -1
        for trigger in triggers:
            if trigger <= end:
                continue  # a line already taken
            begin = text.rfind("\n", 0, trigger) + 1
            end = text.find("\n", trigger)
            end = len(text) if end < 0 else end
            lines[begin] = (begin, text[begin:end])
        owners: list[int] = []
        decoded: list[str] = []  # the texts whose literals are looked for
        versions: dict[int, list[str]] = {}
        for index, (_begin, line) in lines.items():
            blanked = blanks_only(line)
            if blanked is not None and self._gate.search(_lower(blanked)) is None:
                continue  # only blanks escaped, and no rule's literal however they read
            for version, read in decoded_texts(line):
                versions.setdefault(index, []).append(version)
                if read:
                    owners.append(index)
                    decoded.append(version)
        if not decoded:
            return []
        joined = "\x00".join(decoded)
        offsets = list(accumulate(len(version) + 1 for version in decoded))
        hit = sorted({owners[bisect_right(offsets, m.start())] for m in self._gate.finditer(_lower(joined))})
        finds: list[tuple[int, int, int, str]] = []
        for index in hit:
            if not any(self._finds(version, _markers_in(version)) for version in versions[index]):
                continue
            begin, line = lines[index]
            for view in decoded_views(line):
                finds += self._view_finds(view, begin, guarded)
        return finds

    def _view_finds(
        self, view: View, begin: int, guarded: Sequence[tuple[int, int]]
    ) -> Iterator[tuple[int, int, int, str]]:
        for start, order, negative_end, kind in self._finds(view.text, _markers_in(view.text)):
            a, b = view.stored(start, -negative_end)
            a, b = a + begin, b + begin
            if not any(a < y and x < b for x, y in guarded):
                yield a, order, -b, kind


class SessionRedactor(Redactor):
    """One session's redactor: a value found with its key (``password=Xy9…``, ``-pXy9…``,
    ``{"token": "Xy9…"}``) is replaced wherever it shows again in that session without one — a
    later tool output, a role's reply — since there nothing else tells it from text. Only
    values that cannot be ordinary words or ids are remembered (``_memorable``): a misread
    "password: postgres" must not take "postgres" out of every later line. What was stored
    before the key was found stays as it was. Redaction is a function of the string and the
    session's earlier text; each remembered value costs one ``str.count`` per string scanned."""

    def __init__(self, shared: Redactor) -> None:  # the shared rules and caches: nothing is built
        vars(self).update(vars(shared))
        self._values: dict[str, str] = {}  # value → kind, longest first
        self._lock = threading.Lock()

    def for_session(self) -> Redactor:
        return self

    def scan(self, text: str) -> Redaction:
        found = super().scan(text)
        for kind, value in found.secrets:
            self._keyed(kind, value)
        return self._recalled(found) if self._values else found

    def _keyed(self, kind: str, value: str) -> None:
        value = value.strip(_VALUE_QUOTES)
        if value not in self._values and _memorable(value):
            with self._lock:
                values = {**self._values, value: kind}
                self._values = dict(sorted(values.items(), key=lambda item: -len(item[0])))

    def _recalled(self, found: Redaction) -> Redaction:
        text = found.text
        counts = Counter(dict(found.counts))
        for value, kind in self._values.items():  # replaced whole, never read while it changes
            times = text.count(value)
            if times:
                text = text.replace(value, _marker(kind))
                counts[kind] += times
        return Redaction(text, tuple(sorted(counts.items())), found.secrets) if text is not found.text else found


_VALUE_QUOTES = "\"'` "


#: Where an identifier's words and numbers part: "db-1.internal", "order-88121", "v1.2.3".
_ID_BREAKS = re.compile(r"[-._:/@]+")
_SYMBOLS = frozenset("!#$%^&*+=~?")


def _memorable(value: str) -> bool:
    """A value a session remembers: one that cannot be an ordinary word, name or id — 8+
    characters on one line with a piece of 6+ that mixes letters and digits or holds a symbol
    (``Xy9kPq2Lm``, ``s3cr3t-pass``; not ``postgres``, ``db-1.internal``, ``PaymentService``)."""
    value = value.strip(_VALUE_QUOTES)
    if len(value) < 8 or "\n" in value or "[REDACTED:" in value:
        return False
    return any(
        len(piece) >= 6
        and ((any(c.isalpha() for c in piece) and any(c.isdigit() for c in piece)) or not _SYMBOLS.isdisjoint(piece))
        for piece in _ID_BREAKS.split(value)
    )


@cache
def _fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields whose type can hold text, read from the annotations (a sample's time, a
    burst's counts are never walked): the same generic walk at a fraction of the calls."""
    return tuple(name for name, info in model.model_fields.items() if _may_hold_text(info.annotation, set()))


def _may_hold_text(annotation: Any, seen: set[Any]) -> bool:
    if annotation is str:
        return True
    if annotation in _SCALARS or annotation is type(None) or get_origin(annotation) is Literal:
        return False  # a Literal is the schema's own constant, not tool data
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(_may_hold_text(info.annotation, seen) for info in annotation.model_fields.values())
    args = get_args(annotation)
    if get_origin(annotation) is Annotated:
        return _may_hold_text(args[0], seen)
    if args:
        return any(_may_hold_text(arg, seen) for arg in args if arg is not Ellipsis)
    return True  # Any, or a type this walk does not know: look inside


def build_redactor(settings: Settings) -> Redactor:
    """The configured redactor; the shared built-in one when the settings add nothing. Here, not
    in ``tools/factory.py``, so a reader of stored sessions (chat delivery) does not load every
    backend to redact."""
    config = settings.redaction
    if config.enabled and not config.patterns:
        return default_redactor()
    return Redactor(config.patterns, enabled=config.enabled)


@cache
def default_redactor() -> Redactor:
    """The built-in rules, shared (with their cache of redacted lines) by every toolbox and
    environment built without settings of their own."""
    return Redactor()


def _custom(pattern: str) -> _Rule:
    compiled = re.compile(pattern)
    return _Rule("custom", compiled, "secret" if "secret" in compiled.groupindex else 0)


def _markers_in(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in MARKER_PATTERN.finditer(text)] if "[REDACTED:" in text else []


def _has(low: str, literal: str, seen: dict[str, bool]) -> bool:
    if literal not in seen:  # an ASCII text holds no other literal (both answered in O(1))
        seen[literal] = (literal.isascii() or not low.isascii()) and literal in low
    return seen[literal]


def _lower(text: str) -> str:
    """Lower case with the same length, so spans found in it are spans of ``text`` ("İ"
    lowers to two characters and is kept as it is)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
