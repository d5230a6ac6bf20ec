"""Which services a question names, read as a person reads the question.

- A name counts wherever it stands between characters that cannot be part of a name (anything
  but ``A-Za-z0-9_-``): next to Chinese text ("是不是frontend的问题"), CJK punctuation, or spaces;
  the question is first read as ``reader_text`` reads it (NFKC: "ＦＲＯＮＴＥＮＤ" is "FRONTEND";
  no invisible characters).
- A known service's pod ("cartservice-579f59597d-wc2lz", "redis-cart-0") is read as that
  service, as the importers file its telemetry, and the plan says so (``Plan.read_as``).
- A long word one letter away from exactly one known service ("recomendationservice") is read
  as that service, and the plan says so (``Plan.read_as``), so the answer can.
- An infrastructure component (``components.yaml``: mysql, redis, kafka …) the question names
  but no data holds is a service without data, said first in the answer and never answered yes
  or no about.
- So is a kind of service no kind word of ``aliases.yaml`` knows, written as a name with a
  service noun after it ("the billing service", "账单服务", "billing服务"): the word before the
  noun names it unless it only says which service or how it is (``service_shaped.generic``,
  stop words, -ed/-est words; in Chinese rjieba's tags say which words can be a name).
- So is a word that stands where a blame question puts its suspect ("is frontend to blame?",
  "是不是 checkoutsvc 的问题") and is shaped like a service's name (``components.yaml``
  ``service_shaped``): the grammar says it is asked about, even when no data has heard of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import pairwise

from pydantic import Field
from rapidfuzz.distance import DamerauLevenshtein

from veridiag.agents.offline.intent import blame_patterns, intent_text
from veridiag.contracts.plan import ReadAs
from veridiag.ingest.kubernetes import workload_of
from veridiag.text.cjk import HAN, has_cjk
from veridiag.text.normalize import reader_text
from veridiag.text.tokens import english_stopwords, tagged
from veridiag.text.wordfiles import Bilingual, Word, WordModel, bundled_words

#: What a service name is made of: outside these, a name ends.
NAME_CHARS = "A-Za-z0-9_-"
_WORD = re.compile(rf"[{NAME_CHARS}]+")
#: A word shorter than this is never read as a misspelt service ("cart" is no "carts").
MIN_FUZZY = 8
#: Edits (a letter missing, added, changed, or two swapped) a misspelt name may be away.
MAX_EDITS = 1
_DIGITS = re.compile(r"\d+")


def named_at(text: str, name: str) -> re.Match[str] | None:
    """Where ``name`` stands in ``text`` (both lower-cased) as a name of its own."""
    if name not in text:  # no pattern to compile for the names a text does not hold (most of them)
        return None
    return re.search(rf"(?<![{NAME_CHARS}]){re.escape(name)}(?![{NAME_CHARS}])", text)


def exact_services(question: str, known: Sequence[str]) -> list[str]:
    """Services the question names as they are named, in the order it names them."""
    lowered = reader_text(question).lower()
    exact: list[tuple[int, str]] = []
    # only the names the text holds are tried: a pattern for each of 200 services cost ~0.05 s
    for service in sorted((s for s in known if s.lower() in lowered), key=len, reverse=True):
        found = named_at(lowered, service.lower())
        if found and not any(service.lower() in other.lower() for _pos, other in exact):
            exact.append((found.start(), service))
    return [service for _pos, service in sorted(exact)]


def pod_services(question: str, known: Sequence[str]) -> list[ReadAs]:
    """Words that name no service but are the name of a known service's pod
    (``cartservice-579f59597d-wc2lz``, ``redis-cart-0``: ``ingest.kubernetes.workload_of``, the
    rule the importers file a pod's telemetry under), each with that service, in the order written."""
    lowered = {service.lower(): service for service in known}
    read: dict[str, ReadAs] = {}
    for word in _WORD.findall(reader_text(question)):
        folded = word.lower()
        if folded in lowered or folded in read:
            continue
        workload = workload_of(folded)
        if workload != folded and workload in lowered:
            read[folded] = ReadAs(written=word, service=lowered[workload])
    return list(read.values())


def misspelt_services(question: str, known: Sequence[str]) -> list[ReadAs]:
    """Words of at least ``MIN_FUZZY`` characters that name no service but are one edit away from
    exactly one known service — not a difference in digits only ("node-12" is no "node-11") —
    each with the service it is read as, in the order written."""
    lowered = {service.lower(): service for service in known}
    read: dict[str, ReadAs] = {}
    for word in _WORD.findall(reader_text(question)):
        folded = word.lower()
        if len(folded) < MIN_FUZZY or folded in lowered or folded in read:
            continue
        close = [
            service
            for name, service in lowered.items()
            if DamerauLevenshtein.distance(folded, name, score_cutoff=MAX_EDITS) <= MAX_EDITS
            and _DIGITS.sub("", folded) != _DIGITS.sub("", name)
        ]
        if len(close) == 1:
            read[folded] = ReadAs(written=word, service=close[0])
    return list(read.values())


class Component(WordModel):
    #: The name the answer uses.
    name: Word
    #: Other spellings people write (postgresql, pg; 卡夫卡).
    aliases: list[Word] = Field(default_factory=list)


class ServiceShape(WordModel):
    #: Words that are a service's name on their own (frontend).
    words: list[Word]
    #: Endings of a one-word name (cartservice, userdb), after at least ``MIN_STEM`` letters.
    endings: list[Word]
    #: Nouns written after a kind of service that make it a service asked about ("the search
    #: service", "搜索服务"): a kind no service of the data is of is a service without data.
    nouns: list[Word]
    #: Words before a noun that only say which service or how it is ("the affected service",
    #: "下游服务"), never its name.
    generic: Bilingual[list[Word]]


class ComponentList(WordModel):
    components: list[Component]
    service_shaped: ServiceShape


@lru_cache(maxsize=1)
def components() -> ComponentList:
    return bundled_words("veridiag.agents.offline", "components.yaml", ComponentList)


def components_named(question: str, known: Sequence[str]) -> tuple[list[str], list[str]]:
    """The components the question names that are no service with data (said to have no data),
    and the services with data that carry such a component in their name ("redis" → redis-cart,
    a hint like 缓存), each in the order written."""
    text = reader_text(question).lower()
    services = {s.lower(): s for s in known}
    missing: list[tuple[int, str]] = []
    carried: list[tuple[int, str]] = []
    for component in components().components:
        spellings = [component.name, *component.aliases]
        places = [found.start() for word in spellings if (found := _component_at(text, word.lower())) is not None]
        if not places or any(word.lower() in services for word in spellings):
            continue  # not named, or named as a service with data (exact_services has it)
        at = min(places)
        holders = [s for name, s in services.items() if any(_part_of(name, w.lower()) for w in spellings)]
        if holders:
            carried += [(at, s) for s in holders]
        else:
            missing.append((at, component.name))
    return _ordered(missing), _ordered(carried)


def _component_at(text: str, word: str) -> re.Match[str] | None:
    if word.isascii():
        return named_at(text, word)
    return re.search(re.escape(word), text)


def _part_of(service: str, word: str) -> bool:
    """``word`` is a part of the service's name between separators ("redis" of "redis-cart")."""
    return word.isascii() and word in re.split(r"[-_.]", service)


def _ordered(found: list[tuple[int, str]]) -> list[str]:
    return list(dict.fromkeys(name for _at, name in sorted(found)))


#: A one-word name's ending counts after at least this many letters ("api" alone is no name).
MIN_STEM = 3
#: What may stand where a blame question puts its suspect: a word of name characters.
_SLOT = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_VERSION = re.compile(r"v?\d")


def suspects_by_place(question: str, known: Sequence[str]) -> list[str]:
    """Words no service's name holds that stand where a blame question puts its suspect and are
    shaped like a service's name, in the order written: "is frontend to blame?" asks about frontend."""
    text = intent_text(question)
    lowered = {s.lower() for s in known}
    nouns = {n.lower() for n in components().service_shaped.nouns}  # "the microservice" names none
    # a part of a known name is about that service ("frontend" of frontend-web); a component is
    # said as the component (components_named). Only the words left are tried in the patterns:
    # most questions have none, and compiling every pattern for them would cost ~0.1 s.
    candidates = {
        word
        for word in re.findall(_SLOT, text)
        if _name_shaped(word)
        and not _component(word)
        and word.lower() not in nouns
        and not any(word.lower() in name for name in lowered)
    }
    if not candidates:
        return []
    slot = "|".join(re.escape(word) for word in sorted(candidates, key=len, reverse=True))
    found: dict[str, int] = {}
    for pattern in blame_patterns():
        placed = pattern.replace("{service}", f"(?<![A-Za-z0-9_.-])(?P<service>{slot})(?![A-Za-z0-9_.-])")
        for match in re.finditer(placed, text, re.IGNORECASE):
            found.setdefault(match.group("service"), match.start("service"))
    return [word for word, _at in sorted(found.items(), key=lambda item: item[1])]


def _name_shaped(word: str) -> bool:
    """A separator, a digit or an inner capital (payment_api, node2, CartService), a word that is
    a name on its own, or a name's ending after a stem — never a version (v1.2)."""
    shape = components().service_shaped
    folded = word.lower()
    if _VERSION.match(folded):
        return False
    if any(c in "-_." or c.isdigit() for c in word) or any(a.islower() and b.isupper() for a, b in pairwise(word)):
        return True
    if folded in {w.lower() for w in shape.words}:
        return True
    return any(folded.endswith(e.lower()) and len(folded) >= len(e) + MIN_STEM for e in shape.endings)


def _component(word: str) -> bool:
    folded = word.lower()
    return any(folded == w.lower() for c in components().components for w in (c.name, *c.aliases))


#: rjieba's tags of a word that can be a service's name (nouns and verbal nouns: 账单, 计费); a
#: verb (重启服务, 检查服务: what is done to a service), pronoun (哪个), direction (下游), numeral,
#: adjective or adverb only says what is done to it, which or how. (A kind named by a verb, 推荐,
#: 支付, is a kind word of aliases.yaml.)
_NAMING_TAGS = frozenset({"n", "nz", "vn", "nr", "ns", "nt", "nrt", "j"})
#: Words before a service noun taken as one name at most (用户中心服务).
_MAX_ZH_WORDS = 2
#: Han characters before a service noun read for its name: a name is one or two words.
_ZH_NAME_RUN = re.compile(f"[{HAN}]{{1,8}}$")
#: The word before a service noun, and the one before it ("the currency conversion service").
_EN_BEFORE = re.compile(r"(?:(?<![A-Za-z0-9_.-])([a-z][a-z0-9]{2,})\s+)?(?<![A-Za-z0-9_.-])([a-z][a-z0-9]{2,})\s*$")


def services_by_noun(question: str, known: Sequence[str], kind_words: Sequence[str]) -> list[str]:
    """Services asked about by a name with a service noun after it ("the billing service",
    "账单服务") that no known service carries, as written (lower case), in the order written.
    ``kind_words`` (``aliases.yaml``) are left to the kind rules; components to ``components_named``."""
    shape = components().service_shaped
    text = reader_text(question).lower()
    names = [s.lower() for s in known]
    taken = {w.lower() for w in kind_words}
    generic_en = {w.lower() for w in shape.generic.en} | english_stopwords()
    nouns = sorted({n.lower() for n in shape.nouns}, key=len, reverse=True)
    found: dict[str, int] = {}

    def unnamed(word: str) -> bool:
        # "payments service" is payment-service's: a plural names what its singular names
        forms = {word, word[:-1]} if word.endswith("s") and len(word) > 3 else {word}
        return not forms & taken and not _component(word) and not any(f in name for f in forms for name in names)

    for noun in nouns:
        for at in re.finditer(
            re.escape(noun) if not noun.isascii() else rf"(?<![a-z0-9_-]){re.escape(noun)}(?![a-z])", text
        ):
            before = _EN_BEFORE.search(text, 0, at.start())
            if before is None:
                continue
            word, earlier = before.group(2), before.group(1)
            if word in generic_en or word in nouns or (word.endswith(("ed", "est")) and len(word) >= 6):
                continue
            # "currency conversion service": currencyservice's — a generic word before names none
            if unnamed(word) and (earlier is None or earlier in generic_en or unnamed(earlier)):
                found.setdefault(text[before.start(2) : at.end()], before.start(2))
    if has_cjk(text) and any(not n.isascii() and n in text for n in nouns):
        found |= {
            phrase: at
            for phrase, at in _zh_services(text, nouns, shape.generic.zh, unnamed).items()
            if phrase not in found
        }
    return [phrase for phrase, _at in sorted(found.items(), key=lambda item: item[1])]


def _zh_services(
    text: str, nouns: Sequence[str], generic: Sequence[str], unnamed: Callable[[str], bool]
) -> dict[str, int]:
    """Chinese words before a service noun that name a service: 账单服务, 推荐服务, 风控系统. The Han
    text just before the noun is segmented on its own (with the noun, rjieba may cut 风控系统 as
    风 + 控系统) and its last words are the name when rjieba's tags say they can be one."""
    zh_nouns = sorted((n for n in nouns if not n.isascii()), key=len, reverse=True)
    stop = set(generic)
    found: dict[str, int] = {}
    for noun in re.finditer("|".join(re.escape(n) for n in zh_nouns), text):
        run = _ZH_NAME_RUN.search(text, 0, noun.start())
        if run is None:
            continue
        name: list[str] = []
        for word, tag in reversed(tagged(run.group(0))):
            if len(name) == _MAX_ZH_WORDS or len(word) < 2 or word in stop:
                break
            if tag not in _NAMING_TAGS:
                break
            name.insert(0, word)
        if name and all(unnamed(part) for part in name):
            phrase = "".join(name)
            found.setdefault(phrase + noun.group(0), noun.start() - len(phrase))
    return found
