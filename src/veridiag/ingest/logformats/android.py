"""Android's logcat, as ``adb logcat -v threadtime`` writes it (the default since Android 7)."""

from __future__ import annotations

import re
from datetime import datetime

from veridiag.ingest.logformats._base import LogFormat, Parsed, level_of, register


@register
class Logcat(LogFormat):
    """``12-17 19:31:36.263  1795  1825 I PowerManager_screenOn: msg``: month-day (no year;
    ``-v year`` writes one first), local time, pid, tid, a one-letter level (V D I W E F A),
    the tag (component) up to its first ``: ``. Without a year, the year comes from the usual
    rules (``--year``, dates in the file, its mtime; Dec → Jan rolls over)."""

    id = "logcat"
    title = "Android logcat (-v threadtime)"
    has_year = False
    _line = re.compile(
        r"(?:(?P<year>\d{4})-)?(?P<mo>\d\d)-(?P<dd>\d\d) (?P<hh>\d\d):(?P<mi>\d\d):(?P<ss>\d\d)\.(?P<ms>\d{3}) +"
        r"\d+ +\d+ (?P<level>[VDIWEFA]) (?P<tag>.*?) *: ?(?P<message>.*)"
    )

    def parse(self, line: str) -> Parsed | None:
        match = self._line.match(line)
        if match is None:
            return None
        month, day, hh, mi, ss = (int(match[k]) for k in ("mo", "dd", "hh", "mi", "ss"))
        micro = int(match["ms"]) * 1000
        try:
            if match["year"]:
                naive = datetime(int(match["year"]), month, day, hh, mi, ss, micro)
            else:
                naive = self.clock.naive(month, day, hh, mi, ss, micro=micro)
        except ValueError:
            return None
        return self.aware(naive), level_of(match["level"]), match["tag"], match["message"], None, None
