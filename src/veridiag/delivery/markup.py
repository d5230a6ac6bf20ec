"""Escaping of text from evidence, one function per markup dialect a destination renders.

Claims, questions and excerpts quote logs, change notes and alert text that anyone can write:
``[runbook](https://evil…)``, ``![](https://evil/pixel.png)``, ``<script>``, Slack's
``<!channel>``. Rendered as markup they become a live link, a tracking image, HTML or a
mention of everyone. Each dialect's function makes such text inert while it still reads as
written; veridiag's own formatting (bold labels, lists, the workbench link) is added around the
escaped text, never inside it.

- ``commonmark``: ``ask --format markdown``, the webhook, WeCom, Feishu and DingTalk Markdown.
  ``&``, ``<``, ``>`` become entities (no raw HTML, no autolink ``<http…>``, no ``<at id=all>``
  in renderers that take HTML-like tags); what opens or closes inline markup — a ``]`` before
  a link's destination or label, emphasis, code, strike-through, a backslash — is
  backslash-escaped; a line may not start a block (heading, list, quote, rule, table, code).
- ``mrkdwn``: Slack, in every text it parses (blocks and the notification ``text``): ``&``,
  ``<``, ``>`` as Slack asks, so no ``<!channel>``, ``<@U…>`` or ``<url|label>`` link survives.
- ``html``: an HTML text node or attribute.
- every dialect first makes the text inert the same way (``inert``): invisible and control
  characters out (``contracts/sanitize.py``), and link-shaped text defanged — a bare URL, a
  ``www.`` host, an e-mail address or a domain (``links.yaml``) becomes ``https[:]//evil[.]example``,
  which no renderer or chat client links, and which still reads as written.
- ``plain``: a plain-text field a receiver shows as written but may still scan for its tags
  (a Feishu card title and its ``<at id=all>``): ``<`` and ``>`` become their full-width forms,
  which read the same and open no tag, and no entity shows as ``&lt;``.
"""

from __future__ import annotations

import html as _html
import re
from functools import lru_cache

from pydantic import Field

from veridiag.contracts.sanitize import clean_text
from veridiag.text.wordfiles import Word, WordModel, bundled_words

#: Inline markup CommonMark (and GFM's strike-through) reads in running text: emphasis, code,
#: strike-through; a backslash before punctuation (it would escape our escape); a ``]`` that a
#: link destination, label or definition follows (no link, image or reference without it —
#: ``[REDACTED:password]`` and ``![x]`` stay as written).
_INLINE = re.compile(r"([`*~]|\\(?=[!-/:-@\[-`{-~])|\](?=[(\[:]))")
#: A run of ``_`` between two letters or digits opens no emphasis (CommonMark's flanking
#: rules): ``order_id`` and ``LOW_CONFID`` stay as written, any other run is escaped.
_UNDERSCORES = re.compile(r"_+")
_WORD = re.compile(r"[^\W_]")
#: A line that would open a block: heading, list item, setext underline or rule, a table's
#: delimiter row (``|``, ``:`` or ``-`` first).
_BLOCK_START = re.compile(r"^(?:([#|:+=-])|(\d{1,9})([.)]))", re.MULTILINE)
#: Indentation, which would make a line a code block or a list item's continuation.
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_ENTITY = re.compile("[&<>]")


class LinkWords(WordModel):
    """``links.yaml``: the top-level domains a bare domain is linked by, the schemes that run."""

    tlds: list[Word] = Field(min_length=1)
    schemes: dict[Word, str] = Field(default_factory=dict)


#: The dots of a host name: a browser and the IDNA mapping read the ideographic, full-width and
#: half-width full stops as "." ("evil。com" is evil.com).
_DOTS = ".\u3002\uff0e\uff61"
_DOT_OF_HOST = re.compile(f"[{_DOTS}]")


@lru_cache(maxsize=1)
def _link_shapes() -> re.Pattern[str]:
    """One pattern for every link shape: a URL with a scheme, a ``www.`` host, an e-mail address,
    a domain ending in a known top-level domain."""
    tlds = bundled_words("veridiag.delivery", "links.yaml", LinkWords).tlds
    label = r"[^\W_](?:[\w-]{0,62}[^\W_])?"
    dot = f"[{_DOTS}]"
    domain = rf"(?:{label}{dot})+(?:{'|'.join(sorted(map(re.escape, tlds), key=len, reverse=True))})(?![\w-])"
    return re.compile(
        r"(?P<url>[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s<>\"'`]*)"
        rf"|(?P<www>(?<![\w.])www{dot}[^\s<>\"'`]+)"
        rf"|(?P<mail>[\w.+-]+@{label}(?:{dot}{label})+)"
        # a domain not inside a longer one: "0.com" of "www\ufffd.0.com" is one (a character no
        # host holds before its dot), "b.com" of "a.b.com" is not
        rf"|(?<![\w-])(?<![\w-]{dot})(?P<domain>{domain})",
        re.IGNORECASE,
    )


def _defanged(match: re.Match[str]) -> str:
    """A link shape that reads as written but links nowhere: ``://`` as ``[:]//``, ``@`` as
    ``[@]``, the dots of its host as ``[.]``."""
    text = match.group()
    if match.group("mail"):
        local, host = text.rsplit("@", 1)
        return f"{local}[@]{_DOT_OF_HOST.sub('[.]', host)}"
    scheme, mark, rest = text.partition("://") if match.group("url") else ("", "", text)
    end = _HOST_END.search(rest)
    at = end.start() if end else len(rest)
    # every "://" of it: "a.b://c.d" in a path would be another scheme's link
    shown = scheme + ("[:]//" if mark else "") + _DOT_OF_HOST.sub("[.]", rest[:at]) + rest[at:]
    return shown.replace("://", "[:]//")


#: Where a URL's host ends: its path, query or fragment.
_HOST_END = re.compile(r"[/?#]")


def inert(text: str) -> str:
    """What every dialect does first: ``text`` without invisible or control characters, its link
    shapes defanged. Text from evidence or a model enters a destination only through it.

    Not only by escapes a renderer may ignore (a chat client that does not honour Markdown's
    backslash escapes would link ``[x\\](javascript:…)``): a ``]`` right before ``(``, ``[`` or ``:``
    is followed by a blank (no inline link, reference or definition has one there), a running scheme's colon is
    defanged, and a protocol-relative host (``//evil.ninja``) loses its second slash's meaning."""
    text = clean_text(text)
    if "](" in text or "][" in text or "]:" in text:
        text = _LINK_TAIL.sub("] ", text)
    if "//" in text:
        text = _RELATIVE_HOST.sub("[/]/", text)
    if ":" not in text and _DOT_OF_HOST.search(text) is None:
        return text
    return _running_scheme().sub(lambda m: m.group()[:-1].rstrip() + "[:]", _link_shapes().sub(_defanged, text))


#: A ``]`` that a link's destination, reference or definition would follow.
_LINK_TAIL = re.compile(r"\](?=[(\[:])")
#: "//host.tld" not after a scheme or another slash: a link relative to the page's own scheme.
_RELATIVE_HOST = re.compile(rf"(?<![\w:/])//(?=[^\s/]+[{_DOTS}][^\s/])")


@lru_cache(maxsize=1)
def _running_scheme() -> re.Pattern[str]:
    """A scheme that runs or embeds something, before its colon (blanks allowed, as some parsers
    do): "javascript:", "JavaScript :", "data:"."""
    schemes = bundled_words("veridiag.delivery", "links.yaml", LinkWords).schemes
    alternatives = "|".join(
        rf"{re.escape(scheme)}\s*:(?={then})" if then else rf"{re.escape(scheme)}\s*:"
        for scheme, then in sorted(schemes.items(), key=lambda item: len(item[0]), reverse=True)
    )
    return re.compile(rf"(?<![A-Za-z0-9+.-])(?:{alternatives or '(?!)'})(?!//)", re.IGNORECASE)


def commonmark(text: str) -> str:
    """``text`` as CommonMark that renders it literally: no link, image, HTML or block from it."""
    text = inert(text)
    text = _INDENT.sub("", _ENTITY.sub(lambda m: _ENTITIES[m.group()], text))
    text = _INLINE.sub(r"\\\1", text)

    def underscores(match: re.Match[str]) -> str:
        start, end = match.span()
        inside = start > 0 and end < len(text) and _WORD.match(text[start - 1]) and _WORD.match(text[end])
        return match.group() if inside else "\\_" * (end - start)

    text = _UNDERSCORES.sub(underscores, text)

    def no_block(match: re.Match[str]) -> str:
        marker, number, dot = match.groups()
        return f"\\{marker}" if marker else f"{number}\\{dot}"

    return _BLOCK_START.sub(no_block, text)


def mrkdwn(text: str) -> str:
    """``text`` for any Slack field Slack parses: the three characters it asks to be escaped."""
    return _ENTITY.sub(lambda m: _ENTITIES[m.group()], inert(text))


def html(text: str) -> str:
    """``text`` as an HTML text node or quoted attribute value."""
    return _html.escape(inert(text), quote=True)


_ANGLES = str.maketrans({"<": "＜", ">": "＞"})


def plain(text: str) -> str:
    """``text`` for a plain-text field: no ``<`` or ``>`` left to open a tag or a mention."""
    return inert(text).translate(_ANGLES)
