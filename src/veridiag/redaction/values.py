"""Text as its reader decodes it, with the way back to the stored characters.

A secret hides from patterns when it is written encoded: ``password%3Dhunter2`` (a URL-encoded
body), ``{\\"password\\":\\"hunter2\\"}`` (JSON inside a JSON string), ``pass\\u200bword=``
(an escape, or the invisible character itself), ``&#112;assword&#61;`` (HTML character
references), ``pаssword`` (a Cyrillic а). Each decoder here
turns a line into the text a reader would see and keeps, for every character of it, the span
of stored characters it came from, so a secret found in the decoded text is replaced in the
stored one. Decoders are applied again on their own output (JSON inside URL encoding), a few
rounds at most; every one is local to a line, so the redaction stays line-local.

Base64 is a value's encoding, not the line's: ``base64_text`` decodes one token, and the
redactor replaces the whole token when what it encodes holds a secret.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from veridiag.redaction.keys import fold

__all__ = ["TRIGGER", "View", "base64_text", "blanks_only", "decoded_texts", "decoded_views", "needs_decoding"]

_URL = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
#: An HTML character reference, numeric or named (``&#112;``, ``&#x70;``, ``&equals;``): the text of
#: an HTML page, an XML config or an escaped form body as a browser reads it.
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[\\\"'/nrtbf])")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
#: Characters a reader may see as another one: everything outside ASCII but the CJK and
#: full-width punctuation and Han that Chinese log lines are made of (those read as themselves).
_FOLDABLE = re.compile(r"[^\x00-\x7f\u3000-\u303f\u3400-\u9fff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")
#: Where decoding can change what a line says: a %-escape, an escape of a quote, backslash,
#: slash or a code point, an escaped blank between words, a character outside ASCII that can
#: read as another (zero-width and format characters, letters of scripts with Latin look-alikes,
#: full-width letters and signs) or as a blank (U+00A0, U+2000–U+200A, U+202F, U+3000: a
#: command's or a statement's words apart, ``redis-cli　-a …``). An escaped blank ending a string
#: (``\\n"``) is left out: every line of a container's JSON log ends in one, and it joins nothing.
_FOLD_TRIGGER = (
    "[\u00a0\u00aa\u00ad\u00b2\u00b3\u00b9\u00ba\u0370-\u058f\u13a0-\u13ff\u1680\u1d00-\u1dbf"
    "\u2000-\u200f\u202a-\u202f\u205f-\u206f\u3000\ua640-\ua69f\ufe00-\ufe0f\ufeff\uff10-\uff19\uff1d"
    "\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff]"
)
_OTHER_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[\\\"'/])")
#: A terminal's escape sequence (ECMA-48): a control sequence (colours and styles ``ESC[1;31m``,
#: erase and cursor moves ``ESC[K``) or an operating-system command (a title, a hyperlink
#: ``ESC]8;;url ESC\``), introduced by ESC or by the U+FFFD the sanitiser puts in its place (an
#: alert's text is sanitised before it is redacted). A coloured log line
#: (``ESC[1mpassword ESC[0m: …``) reads without them: they show nothing.
_TERMINAL = re.compile(
    "[\x1b\ufffd](?:\\[[0-?]{0,32}[ -/]{0,4}[@-~]|\\][^\x07\x1b\ufffd\n]{0,512}(?:\x07|[\x1b\ufffd]\\\\))"
)
TRIGGER = re.compile(
    r"\\[nrt](?=[^\s\\\"])|%[0-9A-Fa-f]{2}|"
    + _OTHER_ESCAPE.pattern
    + "|"
    + _REFERENCE.pattern
    + "|"
    + _TERMINAL.pattern
    + "|"
    + _FOLD_TRIGGER
)
#: Escaped blanks (and the spaces around them), read as one space.
_ESCAPED_BLANKS = re.compile(r"[ \t]*(?:\\[nrt][ \t]*)+")
#: Blanks a reader sees as one space between words: a tab, a Unicode space (U+00A0, U+2002,
#: U+3000 …), a run of them; then a line break inside one stored line too (it came from an
#: escape, ``\\n`` or ``%0A``). A grammar of several words (``sudo\\t-S``, ``log\\t\\tin``,
#: ``redis-cli　-a``, ``IDENTIFIED BY\\ntiger``) reads them apart by one space; the view with the
#: breaks kept still tells a statement from the line after it (``AUTH …\\nOK``).
_LINE_BREAK = "\n\r\v\f\x85\u2028\u2029"
_BLANK_RUN = re.compile(rf"[^\S{_LINE_BREAK}]{{2,}}|[^\S {_LINE_BREAK}]")
_BREAK_RUN = re.compile(rf"\s*[{_LINE_BREAK}]\s*")
_FOLDS = re.compile(_FOLD_TRIGGER)
#: Runs of ASCII, deleted before a look for the rare characters above: ~10× faster than
#: testing each character of a mostly ASCII text against a large class.
_ASCII_RUNS = re.compile(r"[\x00-\x7f]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2}")


@dataclass(frozen=True)
class View:
    """Decoded text; character ``i`` came from stored characters ``starts[i]:ends[i]``."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def stored(self, start: int, end: int) -> tuple[int, int]:
        """The stored span a decoded span ``start:end`` was read from."""
        return self.starts[start], self.ends[end - 1]


Piece = tuple[str, int, int]  # decoded text, and the stored span it came from
Decoder = Callable[[str], list[Piece] | None]


def _runs(text: str, pattern: re.Pattern[str], decode: Callable[[re.Match[str]], list[Piece]]) -> list[Piece] | None:
    pieces: list[Piece] = []
    done = 0
    for found in pattern.finditer(text):
        pieces += [(c, done + i, done + i + 1) for i, c in enumerate(text[done : found.start()])]
        pieces += decode(found)
        done = found.end()
    if not done:
        return None
    pieces += [(c, done + i, done + i + 1) for i, c in enumerate(text[done:])]
    return pieces


def _url(found: re.Match[str]) -> list[Piece]:
    """%-escapes as UTF-8 bytes; a character spans the escapes of all its bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pieces: list[Piece] = []
    first = found.start()
    for at in range(found.start(), found.end(), 3):
        chars = decoder.decode(bytes([int(found.string[at + 1 : at + 3], 16)]))
        pieces += [(c, first, at + 3) for c in chars]
        if chars:
            first = at + 3
    pieces += [(c, first, found.end()) for c in decoder.decode(b"", final=True)]
    return pieces


def _escape(found: re.Match[str]) -> list[Piece]:
    token = found.group()
    kind = token[1]
    char = chr(int(token[2:], 16)) if kind in "ux" else _SIMPLE_ESCAPES.get(kind, kind)
    return [(char, found.start(), found.end())]


def _reference(found: re.Match[str]) -> list[Piece]:
    """A character reference as the characters it stands for (an unknown name as written)."""
    return [(c, found.start(), found.end()) for c in html.unescape(found.group())]


#: Sentence punctuation of CJK text, read as itself: it ends a value there as it does in the stored
#: line (read as ASCII, "--with-token registry:5000，请检查配置" made the sentence after it a value).
_SENTENCE_MARKS = frozenset("，；！？")


def _plain(char: str) -> str:
    """``char`` without folding look-alikes: '' for a format character, the ASCII one a full-width
    form stands for (not CJK sentence punctuation), else itself."""
    if char.isascii() or char in _SENTENCE_MARKS:
        return char
    if unicodedata.category(char) == "Cf":
        return ""
    wide = unicodedata.normalize("NFKC", char)
    return wide if len(wide) == 1 and wide.isascii() else char


def _visible(text: str) -> list[Piece] | None:
    """Invisible characters dropped and full-width forms as ASCII, every letter as written: a key
    in a script with Latin look-alikes (пароль, κωδικός) reads as its own word here, before
    ``_folded`` makes it a mix of scripts."""
    if text.isascii():
        return None  # (checked in C: a decoded JSON line is mostly ASCII)
    pieces = [(plain, i, i + 1) for i, c in enumerate(text) for plain in _plain(c)]
    return None if "".join(p[0] for p in pieces) == text else pieces


def _folded(text: str) -> list[Piece] | None:
    """Invisible characters dropped, look-alikes and full-width forms as the letter they show."""
    changed = False
    pieces: list[Piece] = []
    done = 0
    for found in _FOLDABLE.finditer(text):
        at = found.start()
        char = fold(text[at])
        if char == text[at]:
            continue
        changed = True
        pieces += [(c, done + i, done + i + 1) for i, c in enumerate(text[done:at])]
        if char:
            pieces.append((char, at, at + 1))
        done = at + 1
    if not changed:
        return None
    return pieces + [(c, done + i, done + i + 1) for i, c in enumerate(text[done:])]


def _blanks(pattern: re.Pattern[str]) -> Decoder:
    """Each run of ``pattern`` read as one space, from the stored characters it stands for."""
    return lambda text: _runs(text, pattern, lambda found: [(" ", found.start(), found.end())])


_DECODERS: tuple[Decoder, ...] = (
    lambda text: _runs(text, _URL, _url),
    lambda text: _runs(text, _ESCAPE, _escape),
    lambda text: _runs(text, _REFERENCE, _reference),
    # before the folds: a key of a script with Latin look-alikes reads as written (пароль)
    _blanks(_BLANK_RUN),
    _blanks(_BREAK_RUN),
    _visible,
    _folded,
    # last, so the indices of the blank decoders hold; a JSON-escaped ESC is decoded first
    lambda text: _runs(text, _TERMINAL, lambda _found: []),
)


#: The same decoders on text alone (no way back), to learn cheaply whether a line needs them;
#: ``_BLANK_DECODERS`` are the places of the two that read blanks.
_TEXT_DECODERS: tuple[Callable[[str], str], ...] = (
    # each first asks ``str`` whether its character is there at all (in C, no regex run)
    lambda text: _URL.sub(lambda m: unquote(m.group(), errors="replace"), text) if "%" in text else text,
    lambda text: _ESCAPE.sub(lambda m: _escape(m)[0][0], text) if "\\" in text else text,
    lambda text: _REFERENCE.sub(lambda m: html.unescape(m.group()), text) if "&" in text else text,
    lambda text: _BLANK_RUN.sub(" ", text),
    lambda text: _BREAK_RUN.sub(" ", text),
    lambda text: text if text.isascii() else "".join(_plain(c) for c in text),
    lambda text: text if text.isascii() else _FOLDABLE.sub(lambda m: fold(m.group()), text),
    lambda text: _TERMINAL.sub("", text) if "\x1b" in text or "\ufffd" in text else text,
)
_BLANK_DECODERS = frozenset({3, 4})


def decoded_texts(line: str, *, rounds: int = 3) -> list[tuple[str, bool]]:
    """The texts of ``decoded_views(line)``, without the way back: a tenth of the cost, so a
    line is mapped only when its decoded text holds a find. Each says whether the rules'
    literals need looking for in it: not when the next text only reads its blanks as one space
    (every literal written with a tab is also written with a space), so a JSON line whose only
    escapes are blanks is searched once."""
    texts: list[tuple[str, bool]] = []
    current = line
    for _ in range(rounds):
        changed = False
        for index, decoder in enumerate(_TEXT_DECODERS):
            text = decoder(current)
            if text and text != current:
                if texts and index in _BLANK_DECODERS:
                    texts[-1] = (texts[-1][0], False)
                texts.append((text, True))
                current, changed = text, True
        if not changed:
            break
    return texts


def blanks_only(line: str) -> str | None:
    """``line`` with its escaped blanks read as one space, when they are all a decoder would
    change in it (a JSON log's multi-line message, ``\\n\\tat …``): what the rules' literals are
    looked for in before the line is decoded at all. ``None`` for a line with other triggers."""
    if (
        ("%" in line and _URL.search(line) is not None)
        or ("&" in line and _REFERENCE.search(line) is not None)
        or _OTHER_ESCAPE.search(line) is not None
        or (("\x1b" in line or "\ufffd" in line) and _TERMINAL.search(line) is not None)
        or (not line.isascii() and _FOLDS.search(_ASCII_RUNS.sub("", line)) is not None)
    ):
        return None
    return _ESCAPED_BLANKS.sub(" ", line)


def needs_decoding(text: str) -> bool:
    """Whether a decoder may change what ``text`` says (``str`` tests first: logs are mostly ASCII)."""
    if ("%" in text or "\\" in text or "&" in text or "\x1b" in text or "\ufffd" in text) and TRIGGER.search(
        text
    ) is not None:
        return True
    return not text.isascii() and _FOLDS.search(_ASCII_RUNS.sub("", text)) is not None


def decoded_views(line: str, *, rounds: int = 3) -> Iterator[View]:
    """Each decoding of ``line`` that differs from it (and from the one before), outermost first."""
    current = View(line, tuple(range(len(line))), tuple(range(1, len(line) + 1)))
    for _ in range(rounds):
        changed = False
        for decoder in _DECODERS:
            pieces = decoder(current.text)
            if pieces is None or not pieces:
                continue
            text = "".join(p[0] for p in pieces)
            if text == current.text:
                continue
            current = View(
                text,
                tuple(current.starts[a] for _, a, _ in pieces),
                tuple(current.ends[b - 1] for _, _, b in pieces),
            )
            changed = True
            yield current
        if not changed:
            return


def base64_text(token: str) -> str | None:
    """What a base64 token encodes, when that is readable text (a value written ``_B64``)."""
    if len(token) < 12 or not _BASE64.fullmatch(token):
        return None
    body = token.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded) if ("-" in body or "_" in body) else base64.b64decode(padded)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    # invisible characters are text too (a key hidden with a zero-width space)
    printable = sum(c.isprintable() or c in "\n\t" or unicodedata.category(c) == "Cf" for c in decoded)
    return decoded if decoded and printable >= 0.95 * len(decoded) else None
