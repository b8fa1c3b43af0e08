"""A module attribute made on first use (PEP 562's module ``__getattr__``): the scale-out's
Redis classes (:mod:`crawler.queues`, :mod:`crawler.seen`) subclass scrapy-redis', whose
import (redis-py, ≈ 6 MB) a crawl without Redis does not need."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def lazy_class(module_globals: dict[str, Any], name: str,
               factory: Callable[[], type]) -> Callable[[str], Any]:  # fmt: skip
    """The ``__getattr__`` of the module whose ``globals()`` are ``module_globals``: its
    attribute ``name`` is ``factory()``, made at the first lookup, named as if defined at the
    module's top level, and kept in the module (later lookups do not come here)."""
    module = module_globals["__name__"]

    def __getattr__(attr: str) -> Any:  # noqa: N807 (PEP 562)
        if attr != name:
            raise AttributeError(f"module {module!r} has no attribute {attr!r}")
        cls = factory()
        cls.__module__, cls.__qualname__ = module, name
        module_globals[name] = cls
        return cls

    return __getattr__
