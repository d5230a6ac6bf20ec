"""Chinese text: the one definition of a Han character, and of "is this question Chinese"."""

from __future__ import annotations

import re
from typing import Literal

#: Han ideographs (CJK Unified Ideographs and Extension A), for use inside a character class.
HAN = "\u3400-\u9fff"
_HAN_CHAR = re.compile(f"[{HAN}]")


def has_cjk(text: str) -> bool:
    """Any Han ideograph: the one test of "is this Chinese" across the project."""
    return _HAN_CHAR.search(text) is not None


def detect_lang(text: str) -> Literal["zh", "en"]:
    """A question with any Han character is answered in Chinese, otherwise in English."""
    return "zh" if has_cjk(text) else "en"
