"""YAML data files read into pydantic models, every error naming the file, the line and the
field — a person fixing a file by hand needs to know where to look (eval fixtures, the demo
environment)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (the nearest existing parent otherwise)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((value for key, value in node.value if key.value == part), None)
            if match is None:
                break
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


#: libyaml's parser when PyYAML was built with it (the wheels are): ~10× the pure-Python one.
_Loader: type[yaml.SafeLoader | yaml.CSafeLoader] = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def read_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """The data and the node tree of ``text`` from one libyaml parse (~10× PyYAML's pure-Python
    parser, which parsed it twice); an error is raised as the pure-Python parser words it,
    saying what it found ("found '<stream end>'") where libyaml says what it did not."""
    try:
        try:
            return _parse(text, _Loader)
        except yaml.YAMLError:
            return _parse(text, yaml.SafeLoader)
    except RecursionError:  # the constructors build nested collections recursively
        raise NestingError from None


class NestingError(yaml.YAMLError):
    """YAML nested deeper than its constructors can recurse: invalid, like any other YAML error
    (every caller that words a ``YAMLError`` words this one)."""

    problem = "nesting too deep"

    def __str__(self) -> str:
        return self.problem


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, read by libyaml (see ``read_yaml``)."""
    return read_yaml(text)[0]


def parse_yaml(text: str, origin: str, error: type[ValueError]) -> tuple[Any, yaml.Node | None]:
    """``read_yaml``; invalid YAML raises ``error`` with the file and line."""
    try:
        return read_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise error(f"{origin}{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None


def _parse(text: str, loader_type: type[yaml.SafeLoader | yaml.CSafeLoader]) -> tuple[Any, yaml.Node | None]:
    loader = loader_type(text)
    try:
        node = loader.get_single_node()
        return (None if node is None else loader.construct_document(node)), node
    finally:
        loader.dispose()


def located(origin: str, node: yaml.Node | None, loc: tuple[int | str, ...], message: str, *, whole: str) -> str:
    """``origin:line: field: message`` for the field at ``loc`` (``whole`` when ``loc`` is empty)."""
    field = ".".join(str(p) for p in loc) or whole
    return f"{origin}:{line_of(node, loc)}: {field}: {message}"


def validate_yaml(
    model: type[Model],
    data: Any,
    node: yaml.Node | None,
    origin: str,
    error: type[ValueError],
    *,
    whole: str,
    context: Mapping[str, object] | None = None,
) -> Model:
    """``data`` as ``model``; the first problem raises ``error`` as ``origin:line: field: message``
    (``whole`` names the field when the problem is the document itself)."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        problem = exc.errors()[0]
        loc = tuple(p for p in problem["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        raise error(located(origin, node, loc, problem["msg"], whole=whole)) from None
