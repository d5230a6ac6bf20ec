"""Write ``src/veridiag/text/zone_abbreviations.json``: the abbreviations the tz database gives its
zones' local times (HST, MSK, MSD, AEDT, WIB, HKT …), each → the UTC offsets (minutes) it has
stood for since 1970. A reader writes "13:03:11 MSK" or "HST 凌晨 12:11"; a hand list misses the
next one.

Read from the ``tzdata`` package (the product reads the file, not the database): every zone, on
the 15th of January and of July of each year 1970–2035. Numeric abbreviations ("-03", "+0530")
are offsets, which the code reads anyway, and are left out; so are UTC and GMT.

Usage: ``.venv/bin/python scripts/zone_abbreviations.py`` (``--check``: exit 1 when the file
differs from what the database gives).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zoneinfo
from datetime import datetime
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "src" / "veridiag" / "text" / "zone_abbreviations.json"
_YEARS = range(1970, 2036)
_LETTERS = re.compile(r"[A-Z]{3,5}")  # in capitals: matched only so ("EST", not "est")
_LEFT_OUT = {"UTC", "GMT", "UT", "LMT", "Z"}


def abbreviations() -> dict[str, list[int]]:
    zoneinfo.reset_tzpath(())  # the tzdata package, not whatever the machine holds
    found: dict[str, set[int]] = {}
    for key in sorted(zoneinfo.available_timezones()):
        zone = zoneinfo.ZoneInfo(key)
        for year in _YEARS:
            for month in (1, 7):
                moment = datetime(year, month, 15, 12, tzinfo=zone)
                name, offset = moment.tzname(), moment.utcoffset()
                if name is None or offset is None or not _LETTERS.fullmatch(name) or name in _LEFT_OUT:
                    continue
                found.setdefault(name, set()).add(int(offset.total_seconds()) // 60)
    return {name: sorted(offsets) for name, offsets in sorted(found.items())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is not what the database gives")
    args = parser.parse_args()
    text = json.dumps(abbreviations(), ensure_ascii=False, indent=0) + "\n"
    if args.check:
        return 0 if TARGET.read_text("utf-8") == text else 1
    TARGET.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
