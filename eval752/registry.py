"""Name -> factory registries, so YAML says ``kind: numeric`` instead of importing code with ``_target_``."""
from __future__ import annotations

import difflib
from typing import Callable, Generic, TypeVar

from .errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._factories:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._factories[name] = factory
            return factory

        return deco

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: str) -> bool:
        return name in self._factories

    def get(self, name: str) -> Callable[..., T]:
        try:
            return self._factories[name]
        except KeyError:
            raise ConfigError(unknown_name_message(self.kind, name, self.names())) from None

    def create(self, name: str, **options) -> T:
        return self.get(name)(**options)


def unknown_name_message(kind: str, name: str, valid: list[str]) -> str:
    """``unknown checker 'numerc' (did you mean 'numeric'?); valid: exact, numeric, regex``"""
    close = difflib.get_close_matches(name, valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; valid: {', '.join(valid)}"
