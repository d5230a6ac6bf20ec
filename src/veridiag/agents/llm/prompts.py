"""The role prompts (Markdown files next to this module; Chinese-first, docs/spec §19.5)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

_LANG_NAMES = {"zh": "中文（用户用中文提问）", "en": "English (the user asked in English)"}


@cache
def _template(role: str) -> str:
    return files("veridiag.agents.llm").joinpath("prompts", f"{role}.md").read_text(encoding="utf-8")


def prompt(role: str, lang: str) -> str:
    """The role's instructions; placeholders are replaced, not ``format``-ed (the JSON has braces)."""
    return _template(role).replace("{lang_name}", _LANG_NAMES.get(lang, lang)).replace("{lang}", lang)


def as_data(label: str, payload: str) -> str:
    """Material the model must read as data: delimited, with the closing tag neutralised inside."""
    body = payload.replace(f"</{label}", f"<\\/{label}")
    return f"<{label}>\n{body}\n</{label}>"
