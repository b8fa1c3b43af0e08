"""The detector interface every dedup method implements, and the registry that names them.

A detector keeps its index in an :class:`~dedup.storage.IndexStorage` (memory, SQLite or
Redis) under keys prefixed with its ``name``::

    det = SpotSigsDetector(make_storage({"type": "sqlite", "path": "idx.sqlite"}))
    dup = det.check_and_add(url, Doc(text=main_text, title=title))   # Match or None

``check_and_add`` is atomic across processes: of two near-duplicates added at the same
moment, exactly one is stored and the other gets the first as its match.

Title + summary, feature code and DWDCS share :class:`PostingIndexDetector`: a hash of
each document's features plus posting sets over parts of them; each supplies only its
features, posting keys and pairwise score.

Methods register under a short name (``@register("spotsigs")``) so a cascade or a
setting can name them; :func:`detector_class` imports the module on first use.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from dedup.storage import IndexStorage, retry_lost_lock
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
    """A stored document that the queried one duplicates; ``score`` in [0, 1].

    ``replaces``: the queried document is the *original* of the stored one (it is contained
    in it: :class:`dedup.containment.ContainmentDetector`'s reverse direction), so the
    cascade (``keep="first"``, the default) keeps the queried document and replaces the
    stored one; under "longer"/"earlier" the cascade's policy decides, as for any match.
    """

    doc_id: str
    score: float
    method: str
    replaces: bool = False


#: how many distinct storage keys a detector remembers (:meth:`Detector.key`)
_KEY_CACHE = 256


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
        """A storage key private to this method: ``<name>:<part>:<part>...`` (the first
        :data:`_KEY_CACHE` distinct ones made of strings remembered: a check-and-add asks for
        the same few keys many times; 1 and 1.0 would share an entry, so numbers are not)."""
        cache = self.__dict__.get("_key_cache")
        if cache is None:
            cache = self.__dict__["_key_cache"] = {}
        got = cache.get(parts)
        if got is None:
            got = ":".join((self.name, *(str(p) for p in parts)))
            if len(cache) < _KEY_CACHE and all(p.__class__ is str for p in parts):
                cache[parts] = got
        return got

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

    def reprints_of(self, doc: Doc) -> list[Match]:
        """Stored documents that reprint ``doc`` with extra material of their own, so that
        ``doc`` is their original (``Match.replaces``), whatever else ``doc`` matches: none
        by default (containment's reverse direction implements it). The cascade asks every
        method once a match decided (:meth:`dedup.cascade.Cascade.check_and_add`)."""
        return []

    def recheck_reprints(self, doc_id: str, doc: Doc) -> list[tuple[Match, str]]:
        """After the cascade stored ``doc`` as ``doc_id``: stored documents that only now turn
        out to reprint another stored document with extra material (a pair refused earlier
        for want of evidence that ``doc`` brings), each with the id of that original
        (``Match.replaces``); none by default (containment's deferred re-check implements
        it). The cascade retires them (``Decision.deferred``)."""
        return []

    def dropped(self, doc_id: str, original: str, doc: Doc | None = None,
                original_doc: Doc | None = None) -> None:  # fmt: skip
        """The cascade records ``doc_id`` as a duplicate of ``original``: ``doc`` when the page
        is dropped as it arrives, else (``doc`` None) a stored document about to leave the
        index (replaced, retired or deferred), whose features are still stored;
        ``original_doc`` when the original is the step's new document, not stored yet (it
        replaces ``doc_id``), else the original is a stored document. Nothing by default; containment remembers the page, so that a later document that
        is a better original of it can take over its duplicate record
        (:meth:`reattributions`)."""
        return None

    def revivals(self, doc_id: str, doc: Doc) -> list[tuple[Match, str, Doc]]:
        """After the cascade stored ``doc`` as ``doc_id``: pages dropped earlier as the
        duplicate of a stored document that ``doc`` now shows to be *their* reprint with
        extras, each as ``(Match on that stored document, the dropped page's id, its Doc)``;
        none by default (containment implements it). The cascade retires the stored document
        and indexes the dropped page (``Decision.revived``)."""
        return []

    def reattributions(self, doc_id: str, doc: Doc) -> list[tuple[Match, str]]:
        """After the cascade stored ``doc`` as ``doc_id``: dropped pages (:meth:`dropped`)
        whose best original is now ``doc_id`` (the one the forward rule would have chosen had
        both been stored when the page came), each as a :class:`Match` on the dropped page
        (its score against ``doc``) with the original it was recorded under until now; none
        by default (containment implements it). The cascade reports them
        (``Decision.reattributed``) for the store to re-attribute the duplicate record."""
        return []

    def check_and_add(self, doc_id: str, doc: Doc) -> Match | None:
        """Atomically: return the best stored duplicate of ``doc``, or store it and return None
        (started again when a Redis lock was lost mid-step: :func:`~dedup.storage.retry_lost_lock`)."""
        return self._locked_check_and_add(
            doc_id, lambda: self.query(doc), lambda: self.add(doc_id, doc)
        )

    def _locked_check_and_add(
        self, doc_id: str, query: Callable[[], list[Match]], add: Callable[[], None]
    ) -> Match | None:
        """The best match of ``query()`` other than ``doc_id`` itself, else ``add()``: one step
        under this detector's lock, done again from a fresh read when the lock was lost."""

        def step() -> Match | None:
            with self.storage.lock(self.name):
                matches = [m for m in query() if m.doc_id != doc_id]
                if matches:
                    return matches[0]
                add()
                return None

        return retry_lost_lock(self.storage, step, what=f"a {self.name} check-and-add")

    def sync_memory(self) -> None:
        """Bring what this detector keeps in memory in step with its storage, after a step
        whose writes reached the storage (a cascade's, which writes when its lock ends):
        nothing by default (the index is in the storage)."""
        return None

    def adopt_memory(self, other: Detector) -> None:
        """Start from what ``other`` (the same method on another storage) holds in memory:
        nothing by default (the index is in the storage). The local fallback's copy of a
        cascade calls it (:meth:`dedup.cascade.Cascade.local_copy`)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(storage={self.storage!r})"


class StoredFeatures(Protocol):
    """Features a :class:`PostingIndexDetector` stores: ``to_json()`` here, ``from_json(raw)``
    on the class (its ``feature_type``)."""

    def to_json(self) -> str: ...


F = TypeVar("F", bound=StoredFeatures)


class PostingIndexDetector(Detector, Generic[F]):
    """A detector whose index is a hash of features plus posting sets over parts of them.

    Storage: ``<name>:docs`` maps a doc id to its features (``feature_type.to_json()``), and
    every key of :meth:`posting_keys` is a set of the doc ids indexed under it.  A query
    gathers the ids in the query's posting sets (:meth:`candidates`), reads their features
    and keeps those with :meth:`score` ``> 0``, best first (ties: doc id).

    Subclasses set ``feature_type`` (a class with ``to_json()`` and ``from_json(raw)``) and
    implement :meth:`features`, :meth:`posting_keys` and :meth:`score`; they may narrow
    :meth:`candidates` (default: the union of the posting sets) and :meth:`indexed` (default:
    a document with no posting key is not stored).
    """

    feature_type: type[Any]

    @abstractmethod
    def posting_keys(self, feats: F) -> list[str]:
        """The posting-set keys (already namespaced with :meth:`key`) ``feats`` is indexed by."""

    @abstractmethod
    def score(self, query: F, stored: F) -> float:
        """How far ``stored`` duplicates ``query``, in [0, 1]; 0.0 = not a duplicate."""

    def posting_hashes(self, feats: F) -> list[tuple[str, list[int]]] | None:
        """The posting sets of ``feats`` as ``(prefix, hashes)`` groups when their keys are
        ``prefix`` + a hash in hex (:func:`~dedup.storage.hex_keys`; the keys of
        :meth:`posting_keys`, in its order), so the storage reaches them by the integers
        (:meth:`~dedup.storage.IndexStorage.sadd_hashed`); None (the default): by
        :meth:`posting_keys`."""
        return None

    def indexed(self, feats: F) -> bool:
        """Whether a document with ``feats`` is stored at all."""
        return bool(self.posting_keys(feats))

    def candidates(self, feats: F) -> set[str]:
        """Doc ids that may duplicate ``feats``: the union of its posting sets."""
        return self._union(self.posting_keys(feats))

    def _union(self, keys: Iterable[str]) -> set[str]:
        return set().union(*self.storage.smembers_many(keys))

    def stored_features(self, ids: list[str]) -> list[tuple[str, F]]:
        """The stored features of ``ids``, in their order (ids no longer stored left out)."""
        raws = self.storage.hmget(self.key("docs"), ids) if ids else []
        return [(doc_id, self.feature_type.from_json(raw))
                for doc_id, raw in zip(ids, raws, strict=True) if raw is not None]  # fmt: skip

    def query_features(self, feats: F) -> list[Match]:
        """Stored documents that documents with ``feats`` near-duplicate, best first."""
        matches = [Match(doc_id, sc, self.name)
                   for doc_id, stored in self.stored_features(sorted(self.candidates(feats)))
                   if (sc := self.score(feats, stored)) > 0]  # fmt: skip
        matches.sort(key=lambda m: (-m.score, m.doc_id))
        return matches

    def query(self, doc: Doc) -> list[Match]:
        return self.query_features(self.features(doc))

    def add_features(self, doc_id: str, feats: F) -> None:
        """Index ``feats`` under ``doc_id``, replacing what was stored under that id."""
        with self.storage.batch():
            self.remove(doc_id)
            if not self.indexed(feats):
                return
            self.storage.hset(self.key("docs"), doc_id, feats.to_json())
            groups = self.posting_hashes(feats)
            if groups is None:
                self.storage.sadd_many(self.posting_keys(feats), doc_id)
            else:
                for prefix, hashes in groups:
                    self.storage.sadd_hashed(prefix, hashes, doc_id)

    def add(self, doc_id: str, doc: Doc) -> None:
        self.add_features(doc_id, self.features(doc))

    def remove(self, doc_id: str) -> None:
        raw = self.storage.hget(self.key("docs"), doc_id)
        if raw is None:
            return
        feats = self.feature_type.from_json(raw)
        with self.storage.batch():
            groups = self.posting_hashes(feats)
            if groups is None:
                self.storage.srem_many(self.posting_keys(feats), doc_id)
            else:
                for prefix, hashes in groups:
                    self.storage.srem_hashed(prefix, hashes, doc_id)
            self.storage.hdel(self.key("docs"), doc_id)

    def check_and_add(self, doc_id: str, doc: Doc) -> Match | None:
        """Features are computed outside the lock (they are pure); lookup and insert inside."""
        feats = self.features(doc)
        return self._locked_check_and_add(
            doc_id, lambda: self.query_features(feats), lambda: self.add_features(doc_id, feats)
        )


#: name -> detector class, filled by :func:`register` when a method's module is imported.
REGISTRY: dict[str, type[Detector]] = {}

#: name -> module that defines it, so :func:`detector_class` can import it on demand.
MODULES: dict[str, str] = {
    "exact": "dedup.exact",
    "title": "dedup.titlesummary",
    "featurecode": "dedup.featurecode",
    "spotsigs": "dedup.spotsigs",
    "dwdcs": "dedup.dwdcs",
    "containment": "dedup.containment",
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
