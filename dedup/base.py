"""The detector interface every dedup method implements, and the registry that names them.

A detector keeps its index in an :class:`~dedup.storage.IndexStorage` (memory, SQLite or
Redis) under keys prefixed with its ``name``::

    det = SpotSigsDetector(make_storage({"type": "sqlite", "path": "idx.sqlite"}))
    dup = det.check_and_add(url, Doc(text=main_text, title=title))   # Match or None

``check_and_add`` is atomic across processes: of two near-duplicates added at the same
moment, exactly one is stored and the other gets the first as its match.

Methods register under a short name (``@register("spotsigs")``) so a cascade or a
setting can name them; :func:`detector_class` imports the module on first use.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from dedup.storage import IndexStorage
from topicrawl.errors import ConfigError


@dataclass
class Doc:
    """A page as the detectors see it: main text plus the metadata some methods use."""

    text: str
    title: str = ""
    description: str = ""
    url: str = ""
    published: str | None = None
    lang: str = "zh"


@dataclass(frozen=True)
class Match:
    """A stored document that the queried one duplicates; ``score`` in [0, 1]."""

    doc_id: str
    score: float
    method: str


class Detector(ABC):
    """A near-duplicate detection method with its own index in a storage backend.

    Subclasses set ``name`` and implement :meth:`features` (pure: what is indexed),
    :meth:`query`, :meth:`add` and :meth:`remove`. The default :meth:`check_and_add` runs
    ``query`` then ``add`` under ``storage.lock(name)``; methods may override it with
    something finer, keeping it atomic.
    """

    name: ClassVar[str] = ""

    def __init__(self, storage: IndexStorage, **params: Any):
        self.storage = storage
        if params:
            raise ConfigError(
                f"unknown option(s) for the {self.name or type(self).__name__} detector: "
                + ", ".join(sorted(params))
            )

    def key(self, *parts: object) -> str:
        """A storage key private to this method: ``<name>:<part>:<part>...``."""
        return ":".join((self.name, *(str(p) for p in parts)))

    @abstractmethod
    def features(self, doc: Doc) -> Any:
        """The representation of ``doc`` that the index stores (a pure function of ``doc``)."""

    @abstractmethod
    def query(self, doc: Doc) -> list[Match]:
        """Stored documents that ``doc`` near-duplicates, best first."""

    @abstractmethod
    def add(self, doc_id: str, doc: Doc) -> None:
        """Index ``doc`` under ``doc_id`` (replacing a previous document with that id)."""

    @abstractmethod
    def remove(self, doc_id: str) -> None:
        """Drop ``doc_id`` from the index (no error when it is absent)."""

    def check_and_add(self, doc_id: str, doc: Doc) -> Match | None:
        """Atomically: return the best stored duplicate of ``doc``, or store it and return None."""
        with self.storage.lock(self.name):
            matches = [m for m in self.query(doc) if m.doc_id != doc_id]
            if matches:
                return matches[0]
            self.add(doc_id, doc)
            return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(storage={self.storage!r})"


#: name -> detector class, filled by :func:`register` when a method's module is imported.
REGISTRY: dict[str, type[Detector]] = {}

#: name -> module that defines it, so :func:`detector_class` can import it on demand.
MODULES: dict[str, str] = {
    "exact": "dedup.exact",
    "title": "dedup.titlesummary",
    "featurecode": "dedup.featurecode",
    "spotsigs": "dedup.spotsigs",
    "dwdcs": "dedup.dwdcs",
}


def register(name: str) -> Callable[[type[Detector]], type[Detector]]:
    """Class decorator: make a detector available under ``name`` (sets ``cls.name``)."""

    def deco(cls: type[Detector]) -> type[Detector]:
        cls.name = name
        REGISTRY[name] = cls
        return cls

    return deco


def detector_class(name: str) -> type[Detector]:
    """The detector class registered as ``name``, importing its module if needed."""
    if name not in REGISTRY and name in MODULES:
        try:
            importlib.import_module(MODULES[name])
        except ModuleNotFoundError as exc:
            if exc.name != MODULES[name]:
                raise
    if name not in REGISTRY:
        known = sorted(set(MODULES) | set(REGISTRY))
        raise ConfigError(f"unknown dedup method {name!r}: use one of {', '.join(known)}")
    return REGISTRY[name]


def make_detector(name: str, storage: IndexStorage, **params: Any) -> Detector:
    """Build the detector registered as ``name`` on ``storage`` with its options."""
    return detector_class(name)(storage, **params)
