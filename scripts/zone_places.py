"""Write ``src/veridiag/text/zone_places.json``: the places a reader names a time zone by ("Berlin
time", "柏林时间", "India time", "印度时间", "Central European Time", "中欧时间"), each → an IANA key.

Read from CLDR through Babel (a dev dependency: the product reads the file, not Babel), for every
zone of the tz database: its exemplar city in English, simplified and traditional Chinese; its
country where all its zones keep one offset; its generic metazone name ("Pacific Time", "北美太平洋
时间") without the word for time. A name whose zones keep different offsets names the offset three
in four of them keep, else it is left out (it names no one zone).

Usage: ``.venv/bin/python scripts/zone_places.py`` (``--check``: exit 1 when the file differs from
what Babel gives).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zoneinfo
from datetime import UTC, datetime
from pathlib import Path

import pytz
from babel import Locale
from babel.dates import get_timezone_location, get_timezone_name

TARGET = Path(__file__).resolve().parent.parent / "src" / "veridiag" / "text" / "zone_places.json"
LOCALES = ("en", "zh", "zh_Hant")
#: How each locale writes "time" after a place: removed to leave the place.
_TIME_WORD = re.compile(r"\s*(?:[Tt]ime|时间|時間)$")
#: A location with a city in brackets names a country of several zones ("德国（柏林）时间").
_CITY_IN_BRACKETS = re.compile(r"[(（]")
#: Zones whose places name no clock a reader writes, and read as words ("Christmas time", "Wake
#: time"): research stations and islands of a few hundred people.
_LEFT_OUT = ("Etc/", "Antarctica/", "Arctic/", "Indian/Christmas", "Pacific/Easter", "Pacific/Wake", "Pacific/Midway")
_MOMENTS = (datetime(2026, 1, 15, tzinfo=UTC), datetime(2026, 7, 15, tzinfo=UTC))


def _offsets(key: str) -> tuple[float, ...]:
    zone = zoneinfo.ZoneInfo(key)
    return tuple((m.astimezone(zone).utcoffset() or m - m).total_seconds() for m in _MOMENTS)


def places() -> dict[str, str]:
    """Each place name (folded to lower case) → the IANA key it names, when it names one offset
    (else the offset most of its zones keep, when they are at least three in four)."""
    named: dict[str, dict[tuple[float, ...], list[str]]] = {}

    def add(name: str, key: str) -> None:
        name = " ".join(_TIME_WORD.sub("", name).split()).lower()
        if name and not _CITY_IN_BRACKETS.search(name):
            named.setdefault(name, {}).setdefault(_offsets(key), []).append(key)

    for key in pytz.common_timezones:  # canonical keys: no backward links (Asia/Calcutta)
        if "/" not in key or key.startswith(_LEFT_OUT):
            continue
        for locale in LOCALES:
            add(get_timezone_location(key, locale=locale, return_city=True), key)
            add(get_timezone_name(key, width="long", zone_variant="generic", locale=locale), key)
    common = set(pytz.common_timezones)
    for country, listed in sorted(pytz.country_timezones.items()):
        keys = [k for k in listed if k in common]
        if keys and len({_offsets(k) for k in keys}) == 1:  # a country of one offset ("India", "德国")
            for locale in LOCALES:
                territory = Locale.parse(locale).territories.get(country)
                if territory:
                    add(territory, keys[0])
    chosen = {}
    for name, by_offset in sorted(named.items()):
        _offset, keys = max(by_offset.items(), key=lambda item: len(item[1]))
        if len(keys) * 4 >= 3 * sum(len(k) for k in by_offset.values()):
            chosen[name] = keys[0]
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    text = json.dumps(places(), ensure_ascii=False, indent=0, sort_keys=True) + "\n"
    if parser.parse_args().check:
        same = TARGET.read_text(encoding="utf-8") == text
        print("zone_places.json is up to date" if same else "zone_places.json differs from Babel's CLDR data")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({text.count(chr(10)) - 2} places)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
