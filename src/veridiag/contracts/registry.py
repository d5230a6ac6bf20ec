"""Implementations registered by id — the spec's index → metadata → implementation pattern,
shared by the code guardrails and the composer guard's checks (the Gatekeeper keeps its own,
which also checks each id against ``rules.yaml``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Generic, Protocol, TypeVar


class Identified(Protocol):
    """A registered implementation: a class with an ``id``, made with no arguments."""

    id: ClassVar[str]


T = TypeVar("T", bound=Identified)


class Registry(Generic[T]):
    """An ordered id → implementation table; an id registered twice is an error."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, item_id: str, item: T) -> None:
        if item_id in self._items:
            raise ValueError(f"{self.kind} {item_id!r} registered twice")
        self._items[item_id] = item

    def register(self, cls: type[T]) -> type[T]:
        """Class decorator: one instance of ``cls`` under ``cls.id``, run in registration order."""
        self.add(cls.id, cls())
        return cls

    def ids(self) -> list[str]:
        return list(self._items)

    def __iter__(self) -> Iterator[T]:
        """In registration order: the order they run and are reported in."""
        return iter(list(self._items.values()))

    def as_dict(self) -> dict[str, T]:
        return dict(self._items)
