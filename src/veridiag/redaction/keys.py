"""Which key names a secret, read the way a person reads it.

A key spelt ``DB_PASSWORD``, ``dbPassword``, ``db.password``, ``ｐａｓｓｗｏｒｄ`` (full width),
``pass\u200bword`` (a zero-width space), ``pаssword`` (a Cyrillic а), ``DB_PASSWORD_B64`` (the
encoding named after it) or ``商户秘钥`` names the same thing. Keys are normalised once —
NFKC, invisible characters out, look-alike letters as Latin (``confusable_homoglyphs``), word
breaks at ``_ . -``, spaces and camelCase, lower case — and compared with the words of
``vocabulary.yaml`` (zh + en) and detect-secrets' keyword list, so a new spelling is a new
line of data, never a new pattern.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Annotated, Literal, Self

from detect_secrets.plugins.keyword import DENYLIST as _LIBRARY_KEYWORDS
from pydantic import Field, StringConstraints, model_validator

from veridiag.text.cjk import HAN
from veridiag.text.wordfiles import AnyOf, Word, WordModel, bundled_words

__all__ = [
    "MARKS",
    "Call",
    "CommandClient",
    "Credential",
    "Sql",
    "Stdin",
    "Verb",
    "Vocabulary",
    "contained_kind",
    "fold",
    "glued_kind",
    "hex_key",
    "identifier_key",
    "key_entries",
    "key_kind",
    "key_words",
    "shaped_entries",
    "shaped_kind",
    "vocabulary",
]


#: One character between a user and a secret (``%`` of ``alice%pw``, ``/`` of ``scott/pw``).
Separator = Annotated[str, StringConstraints(min_length=1, max_length=1)]


class Credential(WordModel):
    """Where a client's arguments write a secret, with or without its user: the value of
    ``options`` (``-U alice%pw``, ``--user=alice%pw``, ``-Ualice%pw``, ``userid=scott/pw``), or,
    without options, its positional arguments — ``any`` one holding the separator
    (``sqlplus scott/pw@db``), the ``last`` or the n-th (``htpasswd -b file user pw``), or the
    one after an argument naming a secret (``named``: ``aws configure set aws_secret_access_key
    …``). ``separator``: the secret follows the first one not escaped by a backslash, after a
    user holding a letter; ``until``: it ends at the last one not inside double quotes
    (``@`` of a connect identifier). ``when``: only if one of these flags is given, alone or in
    a cluster (``-b``, ``-nb``)."""

    options: tuple[Word, ...] = ()
    argument: Literal["any", "last", "named"] | Annotated[int, Field(ge=1)] = "any"
    separator: Separator | None = None
    until: Separator | None = None
    when: tuple[Word, ...] = ()

    @model_validator(mode="after")
    def _bounded(self) -> Self:
        if not self.options and self.argument == "any" and self.separator is None:
            raise ValueError("an argument without a separator must be named: last, named or its position")
        return self


class CommandClient(WordModel):
    """A command-line client whose options or arguments carry a secret."""

    names: list[Word]
    attached: tuple[Word, ...] = ()
    separate: tuple[Word, ...] = ()
    shaped: tuple[Word, ...] = ()
    credentials: tuple[Credential, ...] = ()


class Verb(WordModel):
    """A protocol command whose last argument is a secret (Redis ``AUTH [user] secret``)."""

    names: list[Word]
    arguments: tuple[Annotated[int, Field(ge=1)], ...]


class Call(WordModel):
    """A call whose ``argument``-th argument, written as a string literal, is a secret."""

    names: list[Word]
    argument: Annotated[int, Field(ge=1)]


class Sql(WordModel):
    """SQL clauses (lower-case regular expressions) after which a literal is a password."""

    quoted: AnyOf
    bare: AnyOf


class Stdin(WordModel):
    """Options reading a secret from standard input, and the commands that write one into a pipe."""

    options: list[Word]
    producers: list[Word]


class Vocabulary(WordModel):
    kinds: dict[str, list[Word]]
    whole_words: list[Word]
    shaped: dict[str, list[Word]]
    about: list[Word]
    digests: list[Word]
    encodings: list[Word]
    spoken: list[Word]
    query_keys: list[Word]
    not_alone: list[Word]
    glued_words: list[Word]
    token_prefixes: list[Word]
    readers: list[Word]
    path_keys: list[Word]
    hex_keys: list[Word]
    identifier_keys: list[Word]
    entry_names: list[Word]
    entry_values: list[Word]
    arrows: list[Word]
    outcomes: list[Word]
    verbs: list[Verb]
    logins: list[Word]
    login_separators: list[Separator]
    calls: list[Call]
    sql: Sql
    stdin: Stdin
    commands: list[CommandClient]


@cache
def vocabulary() -> Vocabulary:
    return bundled_words("veridiag.redaction", "vocabulary.yaml", Vocabulary)


#: Scripts written without spaces whose words meet Latin ones without a break: Han, kana, Hangul.
_UNSPACED = f"{HAN}\u3040-\u30ff\u3130-\u318f\uac00-\ud7af"
#: Word breaks inside a word: camelCase, and where Han, kana or Hangul meets Latin (商户secretKey,
#: 令牌Enc, 개인키Enc).
_CAMEL = re.compile(
    # a small letter of any script (or a digit) before a capital: парольEnc as passwordEnc
    rf"(?<=[^\W_A-Z])(?=[A-Z])|(?<=[^\W\d_a-z])(?=[A-Z][a-z])|(?<=[{_UNSPACED}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[{_UNSPACED}])"
)
#: Anything but a letter or digit breaks words: ``_ . - / :``, blanks (a full-width space
#: folds to one), middle dots, dashes and other punctuation a key may be spelt with (密·码).
_BREAKS = re.compile(r"[\W_]+")


#: Blocks of the scripts whose vowel signs and other combining marks ``\\w`` does not take (Indic,
#: Thai, Lao, Myanmar, Khmer; Hebrew and Arabic points; the combining diacritics): a mark is part
#: of its word (पासवर्ड, รหัสผ่าน). Their letters are word characters anyway.
MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0dff"
    "\u0e00-\u0eff\u0f18-\u0fbc\u1000-\u109f\u1780-\u17d3\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_BREAKS_BEYOND_ASCII = re.compile(rf"(?:(?![{MARKS}])[\W_])+")


def _split(key: str) -> list[str]:
    """A lower-cased key's words; a Greek final sigma as the sigma it is (``lower`` writes σ for
    the Σ of ``ΚΩΔΙΚΌΣ:`` before a colon and a letter)."""
    return _BREAKS.split(key) if key.isascii() else _BREAKS_BEYOND_ASCII.split(key.replace("ς", "σ"))


@lru_cache(maxsize=4096)
def fold(char: str) -> str:
    """One character as a reader takes it: '' for a format character (zero-width, bidi, soft
    hyphen), its NFKC form when that is one character, its Latin look-alike, else itself."""
    if char.isascii():
        return char
    if unicodedata.category(char) == "Cf":
        return ""
    small = char.casefold()
    if small != char and len(small) == 1:
        # a capital (or a final ς) reads as its small letter does, in its case: Cyrillic Ь has a Latin look-alike
        # (b) and ь none, so "ПАРОЛЬ" would not read as "пароль"
        shown = fold(small)
        capital = shown.upper() if char.isupper() else shown
        return capital if len(capital) == 1 else shown
    folded = unicodedata.normalize("NFKC", char)
    if len(folded) == 1 and folded.isascii():
        return folded
    if not unicodedata.category(char).startswith("L"):
        return folded if len(folded) == 1 else char
    if unicodedata.name(char, "").startswith(_NO_LATIN_LOOKALIKES):
        return char  # 密码, パスワード: no Latin look-alike to read, and no table to load for a Chinese key
    from confusable_homoglyphs import confusables  # its table loads on import: only when a key needs it

    for item in confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True) or []:
        for glyph in item.get("homoglyphs", []):
            candidate = str(glyph.get("c", ""))
            if len(candidate) == 1 and candidate.isascii() and candidate.isalpha():
                return candidate
    return folded if len(folded) == 1 else char


#: Scripts whose letters look like no Latin letter (their names' first word in Unicode).
_NO_LATIN_LOOKALIKES = ("CJK ", "HIRAGANA ", "KATAKANA ", "HANGUL ")


@lru_cache(maxsize=8192)
def key_words(key: str) -> tuple[str, ...]:
    """A key as its lower-case words: ``dbPassword_B64`` → ``('db', 'password', 'b64')``."""
    folded = key if key.isascii() else "".join(fold(c) for c in key)
    return tuple(word for word in _split(_CAMEL.sub(" ", folded).lower()) if word)


def _written_words(key: str) -> tuple[str, ...]:
    """``key_words`` without folding look-alikes: the words as written (no homoglyph table)."""
    return tuple(word for word in _split(_CAMEL.sub(" ", key).lower()) if word)


def _entries(read: Callable[[str], tuple[str, ...]] = _written_words) -> list[tuple[tuple[str, ...], str]]:
    words = vocabulary()
    entries = [(read(word), kind) for kind, spellings in words.kinds.items() for word in spellings]
    for pattern in _LIBRARY_KEYWORDS:  # 'api_?key': both spellings
        if "_?" in pattern:
            head, tail = pattern.split("_?", 1)
            kind = "password" if tail.startswith("pass") else "api-key"
            entries += [((head, tail), kind), ((head + tail,), kind)]
        else:
            entries.append(((pattern,), "password" if pattern.startswith(("pass", "pwd", "contra")) else "secret"))
    # The vocabulary's kind first; longest first: "secret access key" before "key" alone.
    return sorted(dict(reversed(entries)).items(), key=lambda entry: -len(entry[0]))


def key_entries() -> tuple[tuple[tuple[str, ...], str], ...]:
    """Every secret key name as its words, with the kind it names (longest first)."""
    return _table()[0]


@cache
def _table() -> tuple[tuple[tuple[tuple[str, ...], str], ...], frozenset[str], frozenset[str]]:
    words = vocabulary()
    return tuple(_entries()), frozenset(words.whole_words), frozenset(words.encodings)


@cache
def _folded_entries() -> tuple[tuple[tuple[str, ...], str], ...]:
    """The entries read as a key with look-alikes is (``key_words``: "пароль" as "пapoль"); built
    on the first key outside ASCII that its written words do not name, so the homoglyph table
    loads only then."""
    return tuple(_entries(key_words))


@lru_cache(maxsize=8192)
def key_kind(key: str) -> str | None:
    """The kind of secret ``key`` names (``password``, ``api-key`` …), or ``None``.

    ``password_min_length`` and ``max_tokens`` name no secret: the secret word must end the key
    (encoding words aside). Breaks inside a word do not hide it: the key's words are also read
    joined, so ``pass word``, ``密 码`` and ``to_ken`` name what ``password``, ``密码`` and
    ``token`` name. A key outside ASCII is read as written, then with its look-alike letters
    folded (``pаssword`` with a Cyrillic а, ``ПAРOЛЬ`` with Latin capitals)."""
    entries = _table()[0]
    kind = _kind_of(list(_written_words(key)), entries)
    if kind is None and not key.isascii() and _may_look_latin(key):
        kind = _kind_of(list(key_words(key)), _folded_entries())
    return kind


def _may_look_latin(key: str) -> bool:
    """Does ``key`` hold a letter outside ASCII of a script with Latin look-alikes (Cyrillic,
    Greek …)? A Chinese key has none: it is read as written, and the homoglyph table (~0.1 s to
    load) stays unloaded for it."""
    return any(
        not c.isascii()
        and unicodedata.category(c).startswith("L")
        and not unicodedata.name(c, "").startswith(_NO_LATIN_LOOKALIKES)
        for c in key
    )


def _kind_of(words: list[str], entries: tuple[tuple[tuple[str, ...], str], ...]) -> str | None:
    _, whole, encodings = _table()
    while len(words) > 1 and words[-1] in encodings:
        words.pop()
    if not words:
        return None
    if "".join(words) in vocabulary().not_alone:
        return None
    for entry, kind in entries:
        if tuple(words[-len(entry) :]) == entry:
            return kind
    joined = "".join(words)
    for entry, kind in entries:
        # written together or broken anywhere: dbpassword, 商户秘钥, "pass word", 密 码, to_ken
        # ("pass" only as a word of its own: not bypass)
        together = "".join(entry)
        if joined == together or (together not in whole and joined.endswith(together)):
            return kind
    return None


@cache
def _shaped_entries() -> tuple[tuple[tuple[str, ...], str], ...]:
    entries = [(_written_words(word), kind) for kind, spellings in vocabulary().shaped.items() for word in spellings]
    return tuple(sorted(entries, key=lambda entry: -len(entry[0])))


def shaped_entries() -> tuple[tuple[tuple[str, ...], str], ...]:
    """The key names that name a secret only when their value is shaped like one (``auth``, ``pin``)."""
    return _shaped_entries()


@lru_cache(maxsize=4096)
def shaped_kind(key: str) -> str | None:
    """The kind ``key`` names when it ends in one of ``vocabulary.yaml``'s ``shaped`` names, as
    whole words (``basic_auth``, ``PIN``; not ``oauth``, ``spin``): its value goes only when shaped
    like a secret."""
    words = list(key_words(key))
    encodings = _table()[2]
    while len(words) > 1 and words[-1] in encodings:
        words.pop()
    for entry, kind in _shaped_entries():
        if tuple(words[-len(entry) :]) == entry:
            return kind
    return None


@lru_cache(maxsize=4096)
def glued_kind(key: str) -> str | None:
    """The kind a key names whose last word is a secret word read only as a word of its own
    (``whole_words``: pw, pass, pwd, creds) glued after another (``authpw``, ``rootpass``,
    ``DBPWD``), or one never a key alone (``not_alone``: a bare ``pass``): its value goes only when
    shaped like a secret (the engine decides). Not an ordinary word ending so (``glued_words``:
    bypass, compass)."""
    words = list(_written_words(key))
    while len(words) > 1 and words[-1] in _table()[2]:
        words.pop()
    if not words or words[-1] in vocabulary().glued_words:
        return None
    last = words[-1]
    alone = last in vocabulary().not_alone
    for entry, kind in _table()[0]:
        if len(entry) == 1 and entry[0] in _table()[1] and last.endswith(entry[0]) and (alone or last != entry[0]):
            return kind
    return None


#: Where ASCII letters meet letters of another script inside a word (``keyбб``, ``passwordХеш``).
_SCRIPT_CHANGE = re.compile(r"(?<=[A-Za-z0-9])(?=[^\x00-\x7f])|(?<=[^\x00-\x7f])(?=[A-Za-z0-9])")


@lru_cache(maxsize=4096)
def contained_kind(key: str) -> str | None:
    """The kind of the secret word inside ``key`` when other words follow it (``password_hash``,
    ``password_хеш``, ``api_keyХеш``, ``用户密码哈希``): the words up to it name a secret — read as
    written with a break where scripts change, then with look-alikes folded — or one word holds a
    secret word followed by letters of another script; and the last word does not say what the
    key tells about it (``about``: ``password_min_length``) nor name an identifier. Its value goes
    only when shaped like a secret (the engine decides)."""
    readings = [(_written_words(_SCRIPT_CHANGE.sub(" ", key)), _table()[0])]
    if not key.isascii() and _may_look_latin(key):
        readings.append((key_words(key), _folded_entries()))
    for written, entries in readings:
        words = list(written)
        while len(words) > 1 and words[-1] in _table()[2]:
            words.pop()
        if not words or words[-1] in _about():
            return None
        for end in range(1, len(words)):
            if (kind := _kind_of(words[:end], entries)) is not None:
                return kind
    whole = _table()[1]
    for word in _written_words(key):  # 用户密码哈希: a secret word then another script, one word
        for entry, kind in _table()[0]:
            head = "".join(entry)
            at = word.find(head)
            rest = word[at + len(head) :]
            if at < 0 or not rest or rest[0].isascii() or not rest[0].isalpha() or (at and head in whole):
                continue
            return kind
    return None


@cache
def _about() -> frozenset[str]:
    words = vocabulary()
    return frozenset(words.about) | (frozenset(words.identifier_keys) - frozenset(words.digests))


@lru_cache(maxsize=4096)
def hex_key(key: str) -> bool:
    """A key whose hex value is a signature or a session secret, not an id or a hash."""
    words = key_words(key)
    return bool(words) and words[-1] in vocabulary().hex_keys


@lru_cache(maxsize=4096)
def identifier_key(key: str) -> bool:
    """A key whose value is an identifier (trace id, hash, commit), however random it looks."""
    words = key_words(key)
    return bool(words) and words[-1] in vocabulary().identifier_keys
