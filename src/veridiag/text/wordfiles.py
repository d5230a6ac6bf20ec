"""Word lists and phrase patterns as data: YAML files beside the code that owns them.

Each file is checked against a pydantic model when it is read, so a typo in a list — a number
where a word belongs, a pattern that does not compile — fails at once with the file and the
key, instead of silently matching nothing. Owners read their bundled file once
(``lru_cache``); ``read_words`` also reads any other file, so a list can be changed or
extended without touching Python.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, StringConstraints

from veridiag.text.yaml_files import parse_yaml, validate_yaml

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class WordFileError(ValueError):
    """A word file that cannot be read or does not match its model; says which file and key."""


#: A word or phrase: a non-blank string.
Word = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def _any_of(value: Any) -> re.Pattern[str]:
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty list of regular expressions")
    for index, pattern in enumerate(value):
        if not isinstance(pattern, str) or not pattern.strip():
            raise ValueError(f"item {index}: expected a non-blank string, got {pattern!r}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"item {index}: {pattern!r} is not a regular expression ({exc})") from None
    return re.compile("|".join(f"(?:{pattern})" for pattern in value), re.IGNORECASE)


#: A list of regular expressions (a plain word is one), read as one case-insensitive pattern
#: that matches where any of them does; each is checked to compile.
AnyOf = Annotated[re.Pattern[str], PlainValidator(_any_of)]


class WordModel(BaseModel):
    """Base of every word-file model: unknown keys are errors (a misspelt key is no silent no-op)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Bilingual(WordModel, Generic[T]):
    """The same list or wording in Chinese and in English."""

    zh: T
    en: T

    def __getitem__(self, lang: str) -> T:
        return self.zh if lang == "zh" else self.en


def read_words(source: Path | Traversable, model: type[M], *, name: str | None = None) -> M:
    """``source`` parsed and checked against ``model``; ``name`` is how errors call the file."""
    label = name or str(source)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WordFileError(f"{label}: cannot read word file ({exc})") from None
    data, node = parse_yaml(text, label, WordFileError)
    # One reader for every hand-written YAML file: errors as ``file:line: key: problem``.
    return validate_yaml(model, {} if data is None else data, node, label, WordFileError, whole="(top level)")


def bundled_words(package: str, name: str, model: type[M]) -> M:
    """The word file ``name`` shipped in ``package`` (its owner caches the result)."""
    source = resources.files(package).joinpath(name)
    return read_words(source, model, name=f"{package.replace('.', '/')}/{name}")
