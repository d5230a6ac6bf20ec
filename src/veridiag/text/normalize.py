"""Text as a reader sees it, so a fact cannot hide from the entity scanner.

A claim written ``ERR_ＴＩＭＥＯＵＴ`` (full width), ``5\u200b300ms`` (a zero-width space),
``ЕRR_TIMEOUT`` (a Cyrillic Е) or ``三百条`` (a Chinese numeral) says to a reader what
``ERR_TIMEOUT``, ``5300ms`` and ``300条`` say, and must be checked as such:

- Unicode NFKC folds full-width and compatibility forms; a vulgar fraction (¼) is read as its
  ratio (1/4), and after digits as the decimal end of a mixed number (``2½ minutes`` is 2.5
  minutes; NFKC would make ``3¼ms`` "31⁄4ms", whose "4ms" the claim would be checked as);
- the minus sign (U+2212) is a hyphen-minus ("UTC−3");
- format characters (zero-width spaces and joiners, bidi controls, soft hyphens) are removed;
- a letter that looks Latin inside a word that is otherwise Latin is mapped to Latin, with the
  homoglyph table of ``confusable_homoglyphs`` (a word wholly in another script is left alone;
  the table is loaded when the first such word is read);
- digits grouped in thousands ("1,120 times") are one number (1120);
- a C-style octal escape of ASCII punctuation (``\042`` in HPC and syslog lines) is read as
  the mark it stands for: ``Component \042alt0\042`` names ``alt0``;
- a Chinese numeral right before a unit (秒, 条, 次 …) or in 百分之… becomes digits, read by
  ``cn2an`` — only there: elsewhere 一 and 两 are words (一直, 统一), not numbers, and a lone 一
  before a unit is the article "a" (有一次变更), not a count. cn2an is imported when the first
  such numeral is read: its import builds a table of Chinese cities (~250 ms) that most runs,
  the demo's among them, never need.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from veridiag.contracts.characters import INVISIBLE, SHOWN_FORMAT
from veridiag.text.cjk import HAN
from veridiag.text.memo import remembered
from veridiag.text.units import unit_table

#: Units after which a Chinese numeral is a quantity (``chinese_numeral_units`` in units.yaml).
_CN_UNITS = "|".join(re.escape(unit) for unit in unit_table().chinese_numeral_units)
_NUMERAL = "零〇一二两三四五六七八九十百千万亿"
# A plain character class first (no look-behind): the regex engine then skips ahead in C, 20×
# faster on a 50 KB Chinese output than the look-behind version (measured); 第 is checked after.
_CN_NUMERAL = re.compile(rf"(百分之)?([{_NUMERAL}]+(?:点[零〇一二三四五六七八九]+)?)(?(1)|(?=\s*(?:{_CN_UNITS})))")
#: Every such numeral has one of these characters: a text without any skips the scan above,
#: which tries its optional 百分之 at every position (7× slower than one character class, measured).
_NUMERAL_CHAR = re.compile(f"[{_NUMERAL}]")
_WORD = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
#: Unicode's format characters (category Cf: zero-width spaces and joiners, bidi controls, soft
#: hyphen, tags, and the prepended number marks that show), one list with the sanitiser's.
_INVISIBLE = re.compile(f"[{INVISIBLE}{SHOWN_FORMAT}]")
#: A letter outside Latin and the CJK scripts: only then can a look-alike be hiding in a word.
_OTHER_LETTER = re.compile(rf"[^\W\d_a-zA-Z\u3040-\u30ff{HAN}\uac00-\ud7af\uf900-\ufaff]")
#: The vulgar fractions (¼ ½ ¾, ⅐ … ⅟, ↉): NFKC writes each as digits around a fraction slash.
_FRACTION = re.compile("[\u00bc-\u00be\u2150-\u215f\u2189]")
#: Runs of ASCII. Every character the three tests above look for is outside ASCII, so they are
#: first asked of what is left without these: a tool output is mostly ASCII with a few dashes or
#: Chinese words, and deleting long runs is ~10× faster than testing each character against a
#: large class (a demo ``ask`` normalises ~1 M characters, measured).
_ASCII_RUNS = re.compile(r"[\x00-\x7f]+")


#: An octal escape of a printable ASCII mark (not a letter or digit): ``\042`` is ``"``; after
#: an escaped backslash (``\\042``) it is the digits it shows.
_OCTAL_MARK = re.compile(r"(?<!\\)\\(0[4-5][0-7]|07[2-7]|100|13[3-7]|140|17[3-6])")


def _unescaped(text: str) -> str:
    if "\\" not in text:
        return text
    return _OCTAL_MARK.sub(lambda m: chr(int(m.group(1), 8)), text)


#: Digits grouped in thousands ("1,120", "12,345,678"): one number to a reader. A guard first —
#: a comma and three digits — since the full pattern, tried at every digit, costs ~2.4 ms per
#: 64 KB of log and the guard ~0.07 ms (measured). A clock's seconds and milliseconds are no
#: thousands ("22:15:29,649", as log4j writes a time). A comma after the number is the sentence's
#: ("from 12,800 to 31,020, roughly 2.4×") unless a digit follows it ("1,234,5" is a list).
_GROUP_GUARD = re.compile(r",\d{3}(?!\d|,\d)")
_GROUPED = re.compile(r"(?<![\w,.])(?<!\d:)\d{1,3}(?:,\d{3})+(?!\d|,\d)")


def _ungrouped(text: str) -> str:
    if "," not in text or _GROUP_GUARD.search(text) is None:
        return text
    return _GROUPED.sub(lambda m: m.group().replace(",", ""), text)


def reader_text(text: str) -> str:
    """NFKC, no invisible characters, escaped marks read, digits grouped in thousands as one
    number, Latin look-alikes in Latin words, Chinese numerals before units."""
    # each helper's first test made here: most texts need neither, and a Gatekeeper check reads
    # ~480 texts (the two calls were ~0.3 M of its ~2.7 M instructions of reading, measured)
    if "\\" in text:
        text = _unescaped(text)
    if "," in text:
        text = _ungrouped(text)
    if text.isascii():
        return text
    return remembered("reader_text", text, _read)


def _read(text: str) -> str:
    if _FRACTION.search(text):
        text = _FRACTION.sub(_fraction, text)
    text = unicodedata.normalize("NFKC", text)
    if "\u2212" in text:  # the minus sign (UTC−3, −5 %), which NFKC keeps, is a hyphen-minus to a reader
        text = text.replace("\u2212", "-")
    if "\u2044" in text:  # the fraction slash: 1⁄4 is the ratio 1/4
        text = text.replace("\u2044", "/")
    rare = _ASCII_RUNS.sub("", text)
    if _INVISIBLE.search(rare):
        text = _INVISIBLE.sub("", text)
    if _OTHER_LETTER.search(rare) and _OTHER_LETTER.search(text):
        text = _WORD.sub(lambda m: _latin(m.group()), text)
    if _NUMERAL_CHAR.search(rare) and _NUMERAL_CHAR.search(text):
        text = _numerals_to_digits(text)
    return text


def _fraction(match: re.Match[str]) -> str:
    """A vulgar fraction after digits ends a mixed number ("2½ minutes" is 2.5 minutes), written
    to three decimals at most (2⅓ is 2.333); alone it is its ratio (" 1/2")."""
    at = match.start()
    if at and match.string[at - 1].isdigit():
        value = unicodedata.numeric(match.group())
        decimals = f"{value:.3f}".rstrip("0").rstrip(".")
        return decimals[1:] if decimals.startswith("0.") else "." + decimals  # ↉ (0/3) is .0
    return " " + unicodedata.normalize("NFKC", match.group())


def _numerals_to_digits(text: str) -> str:
    """``_CN_NUMERAL.sub(_digits, text)``, with a match tried only where a numeral stands (every
    match starts with one, 百分之 too): a search for the pattern tries its optional 百分之 at
    every position, ~50 ms on the ~500 KB of outputs a demo ``ask`` reads (measured)."""
    parts: list[str] = []
    done = 0
    for numeral in _NUMERAL_CHAR.finditer(text):
        if numeral.start() < done:
            continue
        found = _CN_NUMERAL.match(text, numeral.start())
        if found is not None:
            parts += (text[done : found.start()], _digits(found))
            done = found.end()
    return "".join(parts) + text[done:] if parts else text


def _latin(word: str) -> str:
    """A word mixing Latin letters with look-alikes from another script, spelled in Latin."""
    if not any(ch.isascii() and ch.isalpha() for ch in word) or word.isascii():
        return word
    # in a word whose Latin letters are capitals, a look-alike read as one is one too (ERR_LIMIT_HıT)
    shouting = all(ch.isupper() for ch in word if ch.isascii() and ch.isalpha())
    return "".join(_latin_letter(ch, shouting) if not ch.isascii() and ch.isalpha() else ch for ch in word)


def _latin_letter(ch: str, capital: bool) -> str:
    read = _homoglyph(ch)
    return read.upper() if capital and read.isascii() else read


#: The letters outside ASCII that ``re.IGNORECASE`` matches to ASCII ones (the ``re`` docs: İ ı ſ K).
_IGNORECASE_ASCII = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def ignorecase_key(text: str) -> str:
    """What a case-blind match stands for, as a key of a table of lower-case words: lower case,
    with the four letters ``re.IGNORECASE`` matches to ASCII read as them ("mİn", "ıs": their
    ``lower()`` is no key, and a look-up raised KeyError). A ``replace`` per letter, not a
    ``translate`` table: that looks each character up in a dict (~5× slower on a claim, measured)."""
    if not text.isascii():
        for letter, ascii_letter in _IGNORECASE_ASCII.items():
            text = text.replace(letter, ascii_letter)
    return text.lower()


#: Latin letters that are an ASCII letter to a reader and to ``re.IGNORECASE`` (Turkish dotless
#: and dotted i): Latin themselves, so no confusables table lists them as look-alikes of Latin.
_LATIN_I = {"\u0131": "i", "\u0130": "I"}


@lru_cache(maxsize=4096)
def _homoglyph(ch: str) -> str:
    if ch in _LATIN_I:
        return _LATIN_I[ch]
    from confusable_homoglyphs import confusables  # its table loads on import: only when a word needs it

    found = confusables.is_confusable(ch, preferred_aliases=["latin"], greedy=True) or []
    for item in found:
        for glyph in item.get("homoglyphs", []):
            candidate = str(glyph.get("c", ""))
            if len(candidate) == 1 and candidate.isascii() and candidate.isalpha():
                return candidate
    return ch


def _digits(match: re.Match[str]) -> str:
    percent, numeral = match.group(1), match.group(2)
    before = match.string[match.start() - 1] if match.start() else ""
    if not percent and before and (before == "第" or before in _NUMERAL):  # an ordinal, or inside a longer run
        return match.group()
    if not percent and numeral == "一":  # 一次, 一个, 一条: the article "a", not a count
        return match.group()
    try:
        return f"{_number(numeral)}%" if percent else _number(numeral)
    except (ValueError, KeyError, TypeError):
        return match.group()


@lru_cache(maxsize=1024)
def _number(numeral: str) -> str:
    """cn2an costs ~40 µs a call and an output repeats its numerals: remembered."""
    import cn2an

    value: float = float(cn2an.cn2an(numeral, "smart"))
    return str(int(value)) if value.is_integer() else str(value)


def chinese_number(numeral: str) -> str | None:
    """A Chinese numeral in digits, or None when it is none (``spoken.py`` reads 十二个小时)."""
    try:
        return _number(numeral)
    except (ValueError, KeyError, TypeError):
        return None
