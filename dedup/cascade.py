"""The dedup cascade: an ordered chain of detectors where the first match decides.

Cheap checks go first (exact hash, title + summary), then the near-duplicate methods
(feature code, SpotSigs, DWDCS). A page is checked against every method in order; the
first method that finds a stored duplicate decides. A page no method matches is added to
every method's index. The whole check-and-add runs under ``storage.lock("cascade")``, so
it is atomic across processes that share the storage. That lock is the scale-out's lock on
the shared index (:mod:`dedup.storage`), not part of a paper's algorithm; on Redis it is a
short lease whose loss (the holder stalled past it) refuses the step's writes, and the
step is started again on a fresh read (:func:`dedup.storage.retry_lost_lock`).

Configuration (a dict, e.g. the ``[dedup]`` section of a topic file or the crawl
settings)::

    {"methods": ["exact", "title", "spotsigs"],           # order = cascade order
     "backend": {"type": "sqlite", "path": "dedup.sqlite", "namespace": "crawl"},
     "spotsigs": {"tau": 0.5},                             # options per method
     "keep": "first"}                                      # or "longer" / "earlier"

A method may also be given inline as ``{"name": "spotsigs", "tau": 0.5}``.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dedup.base import Detector, Doc, Match, make_detector
from dedup.storage import IndexStorage, MemoryStorage, make_storage, retry_lost_lock
from topicrawl.errors import ConfigError, StorageError

#: The default chain: the exact hash, then SpotSigs, then containment (dedup/containment.py:
#: a reprint with extra material of its own, which resemblance misses). The title + summary
#: check is cheap but matches hard negatives (half an article keeps the title): see
#: docs/benchmarks/dedup.md before putting it first.
DEFAULT_METHODS = ("exact", "spotsigs", "containment")
KEEP_POLICIES = ("first", "longer", "earlier")
#: the default chain's options that segment only the pages that have a SpotSigs candidate
#: (issue 13, item 5): exact hashes letters, SpotSigs' candidates come from a MinHash LSH of
#: stand-ins for its signatures found in the letters without segmenting (an antecedent and
#: the letters after it) and it verifies them on spot signatures computed only then
#: (docs/benchmarks/dedup.md, "2026-11-27, session 34")
LETTER_OPTIONS: dict[str, dict[str, Any]] = {
    "exact": {"basis": "letters"},
    "spotsigs": {"candidates": "letters"},
}
#: the options of the chain before :data:`LETTER_OPTIONS` (every page segmented; SpotSigs'
#: own LSH over its signatures): what benchmarks compare against
EAGER_OPTIONS: dict[str, dict[str, Any]] = {
    "exact": {"basis": "tokens"},
    "spotsigs": {"candidates": "signatures"},
}
#: whether a new index takes :data:`LETTER_OPTIONS` when the config does not set them (an
#: index that exists keeps what it was started with: :func:`_new_index`). Not on a storage
#: that ``falls_back_locally`` (Redis: the scale-out): the letter candidates keep no log, so
#: through an outage a worker's local copy would hold no SpotSigs document
#: (:class:`LocalFallback`); such an index keeps :data:`EAGER_OPTIONS` unless asked
LETTERS_BY_DEFAULT = True


def _new_index(storage: IndexStorage, name: str) -> bool:
    """Whether ``name``'s index in ``storage`` holds nothing yet (so a default may choose
    its basis or candidate stage); False when the storage does not answer (the detector
    then reads its index's own choice on first use)."""
    try:
        if name == "exact":
            return storage.get("exact:basis") is None and not storage.hlen("exact:d")
        if name == "spotsigs":
            return storage.get("spotsigs:config") is None
    except StorageError:
        return False
    return False


@dataclass(frozen=True)
class Decision:
    """Outcome of :meth:`Cascade.check_and_add`.

    ``duplicate``: the stored document the new one duplicates (the new one was not stored).
    ``replaced``: with ``keep="longer"``/``"earlier"``, or with ``keep="first"`` when the match
    says so (``Match.replaces``: the new one is the original of a stored reprint with extras), the
    stored document that the new one displaced; that earlier document is now a duplicate of
    the new one.
    """

    duplicate: Match | None = None
    replaced: Match | None = None
    #: with ``keep="first"``: other stored documents the step took out of the index as
    #: reprints with extras of the new document (``Match.replaces``; containment's reverse
    #: direction): each is now a duplicate of the kept copy, ``duplicate.doc_id`` when the
    #: new document is a duplicate, else the new document
    retired: tuple[Match, ...] = ()
    #: stored reprints with extras of *another* stored document that this step's document,
    #: once stored, showed up (:meth:`Detector.recheck_reprints`: containment's deferred
    #: re-check, the ``spliced`` guard met only now): ``(match, original id)``, each taken
    #: out of the index as a duplicate of that original
    deferred: tuple[tuple[Match, str], ...] = ()
    #: with ``keep="first"``, when the new document was stored: pages dropped earlier (as a
    #: new page's duplicate, or taken out of the index as replaced, retired or deferred)
    #: whose best original this document is (:meth:`Detector.reattributions`:
    #: containment's reverse direction for a page no longer indexed): ``(match on the
    #: dropped page, the original it was recorded under)``; each is now a duplicate of the
    #: new document (the store re-attributes its duplicate record)
    reattributed: tuple[tuple[Match, str], ...] = ()
    #: with ``keep="first"``, when the new document was stored: pages dropped earlier as the
    #: duplicate of a stored document that this document showed to be their reprint with
    #: extras (:meth:`Detector.revivals`: a source met after its commentary page, before the
    #: articles the page spliced in): ``(match on the stored document, the dropped page's
    #: id)``; the stored document left every index as a duplicate of the dropped page, which
    #: is indexed now (the store takes it back into the corpus)
    revived: tuple[tuple[Match, str], ...] = ()

    @property
    def kept(self) -> str | None:
        """The stored copy a retired document is a duplicate of: the document the new one
        duplicates, else None (the new document itself)."""
        return None if self.duplicate is None else self.duplicate.doc_id


def _doc_meta(doc: Doc) -> str:
    return json.dumps({"len": len(doc.text or ""), "published": doc.published})


class Cascade:
    """Run detectors in order; the first match decides. Counts matches per method."""

    def __init__(
        self,
        storage: IndexStorage,
        methods: Sequence[str | Mapping[str, Any]] = DEFAULT_METHODS,
        *,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        keep: str = "first",
    ):
        if keep not in KEEP_POLICIES:
            raise ConfigError(f"dedup keep must be one of {', '.join(KEEP_POLICIES)}, not {keep!r}")
        if not methods:
            raise ConfigError("the dedup cascade needs at least one method")
        options = options or {}
        self.storage = storage
        self.keep = keep
        self._spec = (list(methods), {k: dict(v) for k, v in options.items()})  # local_copy
        self.detectors: list[Detector] = []
        for m in methods:
            if isinstance(m, Mapping):
                params = dict(m)
                name = params.pop("name", None)
                if not name:
                    raise ConfigError(f"a dedup method given as a table needs a 'name': {m!r}")
            else:
                name, params = str(m), dict(options.get(str(m), {}))
            if any(d.name == name for d in self.detectors):
                raise ConfigError(f"dedup method {name!r} is listed twice")
            if LETTERS_BY_DEFAULT and name in LETTER_OPTIONS and not storage.falls_back_locally:
                unset = {k: v for k, v in LETTER_OPTIONS[name].items() if k not in params}
                if unset and _new_index(storage, name):
                    params.update(unset)
            self.detectors.append(make_detector(name, storage, **params))
        self.counts: Counter[str] = Counter()
        self.checked = 0

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any] | None = None, *, storage: IndexStorage | None = None
    ) -> Cascade:
        """Build from a config dict (see the module docstring)."""
        config = dict(config or {})
        methods = config.pop("methods", DEFAULT_METHODS)
        if isinstance(methods, str):
            methods = [m.strip() for m in methods.split(",") if m.strip()]
        backend = config.pop("backend", None)
        keep = config.pop("keep", "first")
        if storage is None:
            storage = make_storage(backend)
        names = {m if isinstance(m, str) else m.get("name") for m in methods}
        unknown = [k for k in config if k not in names]
        if unknown:
            raise ConfigError(
                f"dedup config has options for methods not in 'methods': {', '.join(unknown)}"
            )
        return cls(storage, methods, options=config, keep=keep)

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.detectors]

    def local_copy(self) -> Cascade:
        """The same methods, options and keep policy on a new in-memory storage, each
        detector starting from what this cascade's holds in memory (SpotSigs: the index it
        replayed from the storage's log, shared: :meth:`Detector.adopt_memory`)."""
        methods, options = self._spec
        options = {k: dict(v) for k, v in options.items()}
        for det in self.detectors:  # the same basis and candidate stage as the shared index
            if det.name == "spotsigs":
                from dedup.spotsigs import LetterCandidatesSpotSigs

                lazy = isinstance(det, LetterCandidatesSpotSigs)
                options.setdefault("spotsigs", {})["candidates"] = "letters" if lazy else "signatures"
            elif det.name == "exact" and getattr(det, "_basis", None):
                options.setdefault("exact", {})["basis"] = det._basis
        methods = [dict(m, **options.get(m.get("name"), {})) if isinstance(m, Mapping) else m
                   for m in methods]  # fmt: skip
        copy = Cascade(MemoryStorage(self.storage.namespace), methods, options=options,
                       keep=self.keep)  # fmt: skip
        for mine, theirs in zip(self.detectors, copy.detectors, strict=True):
            theirs.adopt_memory(mine)
        return copy

    def query(self, doc: Doc) -> Match | None:
        """The first method's best match for ``doc``, without storing anything."""
        for det in self.detectors:
            matches = det.query(doc)
            if matches:
                return matches[0]
        return None

    def add(self, doc_id: str, doc: Doc) -> None:
        """Index ``doc`` in every method (and, unless ``keep="first"``, which never reads
        them, its length and date for the keep policy)."""
        retry_lost_lock(self.storage, lambda: self._add(doc_id, doc), what="a dedup add")
        self._sync_memory()

    def _add(self, doc_id: str, doc: Doc) -> None:
        with self.storage.lock("cascade"):
            for det in self.detectors:
                det.add(doc_id, doc)
            if self.keep != "first":
                self.storage.hset("cascade:meta", doc_id, _doc_meta(doc))

    def remove(self, doc_id: str) -> None:
        """Drop ``doc_id`` from every method (recrawl, retention)."""
        retry_lost_lock(self.storage, lambda: self._remove(doc_id), what="a dedup removal")
        self._sync_memory()

    def _remove(self, doc_id: str) -> None:
        with self.storage.lock("cascade"):
            for det in self.detectors:
                det.remove(doc_id)
            self.storage.hdel("cascade:meta", doc_id)

    def _new_wins(self, doc: Doc, old_id: str) -> bool:
        if self.keep == "first":
            return False
        raw = self.storage.hget("cascade:meta", old_id)
        if raw is None:
            return False
        old = json.loads(raw)
        if self.keep == "longer":
            return len(doc.text or "") > old["len"]
        # earlier: the copy published first is the original; unknown dates never win
        return bool(doc.published and (not old["published"] or doc.published < old["published"]))

    def check_and_add(self, doc_id: str, doc: Doc) -> Decision:
        """Atomically find the first method's duplicate of ``doc`` or store ``doc``.

        With ``keep="longer"`` (or ``"earlier"``), a new document that is longer (published
        earlier) than the stored one it duplicates replaces it in every index, and the
        decision reports the displaced document in ``replaced``. With ``keep="first"`` (the
        default), a match with ``replaces`` (the new document is the original the stored one
        reprints with extras: containment's reverse direction, issue 17 item 3) replaces the
        stored one the same way, so the index and the corpus hold the original whichever came
        first; under "longer"/"earlier" that policy decides, as for any match (the corpus
        then holds the longer / earlier copy in both orders).

        With ``keep="first"``, once a method matched, every method is asked for the stored
        reprints with extras of ``doc`` (:meth:`Detector.reprints_of`: containment's reverse
        direction, with its ``spliced`` guard). When the matched document is one of them, the
        pair is that method's but the direction is containment's: ``doc`` replaces it (SpotSigs
        pairs a source with its reprint with a short spliced block before containment is
        asked). The others leave the index as duplicates of the copy kept
        (``Decision.retired``: a reprint with extras stored before the documents it spliced
        in, which the guard could not see then).

        On Redis, when the cascade's lock expired during the step (the worker stalled past
        its time to live), nothing the step wrote reaches the index and the step starts
        again from a fresh read; the decision returned is the one that was written.
        """
        decision, method = retry_lost_lock(
            self.storage, lambda: self._check_and_add(doc_id, doc), what="a dedup check-and-add"
        )
        self.checked += 1
        if method is not None:
            self.counts[method] += 1
        if decision.duplicate is None:
            self._sync_memory()
        return decision

    def _sync_memory(self) -> None:
        """The step's writes are in the storage (unless inside an outer lock, which sends
        them when it ends): the detectors' in-memory mirrors take them now."""
        if not self.storage.holding():
            for det in self.detectors:
                det.sync_memory()

    def _reprints_of(self, doc_id: str, doc: Doc) -> list[Match]:
        """Every method's stored reprints with extras of ``doc`` (:meth:`Detector.reprints_of`),
        best first, each document once."""
        out: dict[str, Match] = {}
        for det in self.detectors:
            for m in det.reprints_of(doc):
                if m.doc_id != doc_id:
                    out.setdefault(m.doc_id, m)
        return sorted(out.values(), key=lambda m: (-m.score, m.doc_id))

    def _check_and_add(self, doc_id: str, doc: Doc) -> tuple[Decision, str | None]:
        with self.storage.lock("cascade"):
            for det in self.detectors:
                matches = [m for m in det.query(doc) if m.doc_id != doc_id]
                if not matches:
                    continue
                match, name, retired = matches[0], det.name, ()
                if self.keep == "first":
                    # which copy is the original is the reverse direction's to say, whichever
                    # method found the pair; and every other stored reprint with extras of
                    # this text leaves the index with it (Decision.retired)
                    extras = self._reprints_of(doc_id, doc)
                    same = next((m for m in extras if m.doc_id == match.doc_id), None)
                    if same is not None and not match.replaces:
                        match, name = same, same.method
                    retired = tuple(m for m in extras if m.doc_id != match.doc_id)
                replace = (match.replaces and self.keep == "first") or self._new_wins(
                    doc, match.doc_id
                )
                kept = doc_id if replace else match.doc_id
                for m in retired:
                    self._dropped(m.doc_id, kept, original_doc=doc if replace else None)
                    self._remove(m.doc_id)
                if replace:
                    self._dropped(match.doc_id, doc_id, original_doc=doc)
                    self._remove(match.doc_id)
                    self._add(doc_id, doc)
                    deferred = self._recheck(doc_id, doc)
                    return Decision(
                        replaced=match,
                        retired=retired,
                        deferred=deferred,
                        reattributed=self._reattribute(doc_id, doc),
                        revived=self._revive(doc_id, doc),
                    ), name
                self._dropped(doc_id, match.doc_id, doc)
                return Decision(duplicate=match, retired=retired), name
            self._add(doc_id, doc)
            deferred = self._recheck(doc_id, doc)
            return Decision(deferred=deferred, reattributed=self._reattribute(doc_id, doc),
                            revived=self._revive(doc_id, doc)), None  # fmt: skip

    def _dropped(self, doc_id: str, original: str, doc: Doc | None = None,
                 original_doc: Doc | None = None) -> None:  # fmt: skip
        """With ``keep="first"``: every method hears that ``doc_id`` is now a duplicate of
        ``original`` (:meth:`Detector.dropped`; ``doc`` when it was never stored, else
        before it leaves the index; ``original_doc``: the new document, not stored yet)."""
        if self.keep == "first":
            for det in self.detectors:
                det.dropped(doc_id, original, doc, original_doc)

    def _reattribute(self, doc_id: str, doc: Doc) -> tuple[tuple[Match, str], ...]:
        """With ``keep="first"``, after ``doc`` was stored: the dropped pages whose best
        original it now is (:meth:`Detector.reattributions`), each page once, best first."""
        if self.keep != "first":
            return ()
        out: dict[str, tuple[Match, str]] = {}
        for det in self.detectors:
            for m, before in det.reattributions(doc_id, doc):
                if m.doc_id != doc_id and before != doc_id:
                    out.setdefault(m.doc_id, (m, before))
        return tuple(sorted(out.values(), key=lambda x: (-x[0].score, x[0].doc_id)))

    def _revive(self, doc_id: str, doc: Doc) -> tuple[tuple[Match, str], ...]:
        """With ``keep="first"``, after ``doc`` was stored: every method's dropped pages that
        ``doc`` showed to be the original of the stored document they were dropped for
        (:meth:`Detector.revivals`): that document leaves every index as the dropped page's
        duplicate, and the dropped page is indexed (each page once; not re-checked itself)."""
        if self.keep != "first":
            return ()
        out: dict[str, tuple[Match, str, Doc]] = {}
        gone: set[str] = set()
        for det in self.detectors:
            for m, page, page_doc in det.revivals(doc_id, doc):
                if page in out or m.doc_id in gone or doc_id in (page, m.doc_id):
                    continue
                out[page] = (m, page, page_doc)
                gone.add(m.doc_id)
        for m, page, page_doc in out.values():
            self._dropped(m.doc_id, page, original_doc=page_doc)
            self._remove(m.doc_id)
            self._add(page, page_doc)
        return tuple((m, page) for m, page, _ in out.values())

    def _recheck(self, doc_id: str, doc: Doc) -> tuple[tuple[Match, str], ...]:
        """With ``keep="first"``, after ``doc`` was stored: every method's stored reprints with
        extras that ``doc`` showed up (:meth:`Detector.recheck_reprints`), taken out of every
        index (each document once)."""
        if self.keep != "first":
            return ()
        out: dict[str, tuple[Match, str]] = {}
        for det in self.detectors:
            for m, original in det.recheck_reprints(doc_id, doc):
                if m.doc_id not in out and m.doc_id != doc_id:
                    out[m.doc_id] = (m, original)
        for gone, (_, original) in out.items():
            self._dropped(gone, original)
            self._remove(gone)
        return tuple(out.values())

    def __repr__(self) -> str:
        return f"Cascade({self.names}, storage={self.storage!r}, keep={self.keep!r})"


class LocalFallback:
    """Check-and-add against a local copy of a cascade while its storage fails (Redis down).

    The copy (:meth:`Cascade.local_copy`) is built at the first local check: SpotSigs starts
    from the documents the worker had replayed from the shared index, the other methods from
    the documents added during the outage only. Documents added (and removed) locally are
    remembered; :meth:`write_back` applies them to the shared cascade once its storage
    answers, so that the other workers see them, and drops the copy.
    """

    def __init__(self, shared: Cascade):
        self.shared = shared
        self.local: Cascade | None = None
        #: ``("add", doc_id, doc)`` / ``("remove", doc_id, None)``, oldest first
        self.pending: deque[tuple[str, str, Doc | None]] = deque()

    @property
    def active(self) -> bool:
        """Pages are checked locally (the shared storage failed and was not written back)."""
        return self.local is not None

    def _copy(self) -> Cascade:
        if self.local is None:
            self.local = self.shared.local_copy()
        return self.local

    def check_and_add(self, doc_id: str, doc: Doc) -> Decision:
        """:meth:`Cascade.check_and_add` on the local copy; what it stores is remembered."""
        decision = self._copy().check_and_add(doc_id, doc)
        for gone in (decision.replaced, *decision.retired, *(m for m, _ in decision.deferred)):
            if gone is not None:
                self.pending.append(("remove", gone.doc_id, None))
        if decision.duplicate is None:
            self.pending.append(("add", doc_id, doc))
        # (the local copy starts with no remembered dropped pages: decision.revived is
        # always empty here)
        return decision

    def remove(self, doc_id: str) -> None:
        self._copy().remove(doc_id)
        self.pending.append(("remove", doc_id, None))

    def write_back(self) -> int:
        """Apply the remembered additions and removals to the shared cascade, oldest first,
        and leave local mode. Raises ``StorageError`` while the storage still fails (what was
        not written stays remembered). Returns the documents added."""
        added = 0
        while self.pending:
            op, doc_id, doc = self.pending[0]
            if op == "add":
                assert doc is not None
                self.shared.add(doc_id, doc)
                added += 1
            else:
                self.shared.remove(doc_id)
            self.pending.popleft()
        self.local = None
        return added
