"""Exact duplicates: a hash of the normalized main text (the cheapest first cascade stage)."""

from __future__ import annotations

import hashlib
import re

from dedup.base import Detector, Doc, Match, register
from dedup.storage import IndexStorage, retry_lost_lock
from dedup.text import joined_tokens, letters, normalize_text
from topicrawl.errors import ConfigError

_NO_SPACE = re.compile(r"\s+")


def text_fingerprint(text: str) -> str:
    """SHA-1 of the text after NFKC, lowercasing and removing all whitespace.

    Whitespace is dropped entirely, so changed line and paragraph breaks (and, in Chinese,
    stray spaces) do not make a copy look different.
    """
    norm = _NO_SPACE.sub("", normalize_text(text))
    return hashlib.sha1(norm.encode("utf-8")).hexdigest()


def token_fingerprint(text: str, lang: str = "zh") -> str | None:
    """SHA-1 of the text's word tokens (:func:`dedup.text.tokenize`: NFKC, lowercased,
    traditional characters simplified, whitespace and punctuation dropped), or None when it
    has none. It reuses the tokenization that SpotSigs (and page relevance) share, so the
    exact stage costs one hash."""
    joined = joined_tokens(text, lang)
    if not joined:
        return None
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()


def letters_fingerprint(text: str) -> str | None:
    """SHA-1 of the text's letters and digits after NFKC, traditional → simplified and
    lower case (:func:`dedup.text.letters`: no segmentation), or None when it has none.
    Punctuation, spacing, width, case and traditional/simplified characters do not count,
    as for :func:`token_fingerprint`, whose tokens are these letters cut into words: on the
    three dedup sets the two decide every pair alike (docs/benchmarks/dedup.md, "Does
    `exact` need segmentation?"), at ~1/14 of the cost."""
    cp = letters(text)
    return hashlib.sha1(cp.tobytes()).hexdigest() if len(cp) else None


#: what the exact stage hashes: the page's word tokens (segmented), or its letters
BASES = ("tokens", "letters")


@register("exact")
class ExactDetector(Detector):
    """Index ``fingerprint -> doc_id`` (hash ``exact:h``) and ``doc_id -> fingerprint``
    (hash ``exact:d``, for removal). A match has score 1.0. Empty texts are never matched.

    The fingerprint is :func:`token_fingerprint` (same words in the same order; punctuation,
    spacing, width, case and traditional/simplified characters do not count). An index built
    with the earlier whole-text hash (:func:`text_fingerprint`) does not match new pages'
    hashes; SpotSigs still finds such copies (J = 1).

    Option ``basis``: ``"tokens"`` (:func:`token_fingerprint`) or ``"letters"``
    (:func:`letters_fingerprint`, no segmentation); None (the default): the index's own basis
    (``exact:basis``, written with the first document; an index of an earlier version, which
    has documents and no mark, hashed tokens), else :data:`DEFAULT_BASIS`. An index keeps the
    basis it was started with: a detector asked for the other one on it raises
    ``ConfigError`` (the two hashes never match each other)."""

    def __init__(self, storage: IndexStorage, *, basis: str | None = None, **params):
        super().__init__(storage, **params)
        if basis is not None and basis not in BASES:
            raise ConfigError(f"exact basis must be one of {', '.join(BASES)}, not {basis!r}")
        self._asked = basis
        self._basis: str | None = None
        self._last: tuple[str, str, str | None] | None = None

    @property
    def basis(self) -> str:
        """What this index hashes (read from the storage once)."""
        if self._basis is None:
            mark = self.storage.get(self.key("basis"))
            stored = (mark.decode() if mark is not None
                      else "tokens" if self.storage.hlen(self.key("d")) else None)  # fmt: skip
            if stored is not None and self._asked is not None and stored != self._asked:
                raise ConfigError(
                    f"the exact index in {self.storage!r} hashes {stored}, not {self._asked}: "
                    f"use another namespace, or exact basis = {stored!r} for this index"
                )
            self._basis = stored or self._asked or DEFAULT_BASIS
        return self._basis

    def features(self, doc: Doc) -> str | None:
        if not doc.text or not doc.text.strip():
            return None
        last = self._last
        if last is not None and last[0] is doc.text and last[1] == doc.lang:
            return last[2]
        fp = self.fingerprint(doc.text, doc.lang)
        self._last = (doc.text, doc.lang, fp)
        return fp

    def fingerprint(self, text: str, lang: str) -> str | None:
        """The hash :meth:`features` keys a text by (:func:`token_fingerprint` or
        :func:`letters_fingerprint`, by :attr:`basis`)."""
        if self.basis == "letters":
            return letters_fingerprint(text)
        return token_fingerprint(text, lang)

    def query(self, doc: Doc) -> list[Match]:
        fp = self.features(doc)
        if fp is None:
            return []
        found = self.storage.hget(self.key("h"), fp)
        return [Match(found.decode(), 1.0, self.name)] if found is not None else []

    def add(self, doc_id: str, doc: Doc) -> None:
        fp = self.features(doc)
        with self.storage.lock(self.name):
            old = self.storage.hget(self.key("d"), doc_id)
            if old is not None and old.decode() != fp:
                self._unlink(doc_id, old.decode())
            if fp is None:
                return
            if self.basis != "tokens" and self.storage.get(self.key("basis")) is None:
                self.storage.set(self.key("basis"), self.basis)
            if self.storage.hget(self.key("h"), fp) is None:
                self.storage.hset(self.key("h"), fp, doc_id)
            self.storage.hset(self.key("d"), doc_id, fp)

    def _unlink(self, doc_id: str, fp: str) -> None:
        owner = self.storage.hget(self.key("h"), fp)
        if owner is not None and owner.decode() == doc_id:
            self.storage.hdel(self.key("h"), fp)
        self.storage.hdel(self.key("d"), doc_id)

    def remove(self, doc_id: str) -> None:
        with self.storage.lock(self.name):
            old = self.storage.hget(self.key("d"), doc_id)
            if old is not None:
                self._unlink(doc_id, old.decode())


#: the basis of a new exact index (``basis=None``)
DEFAULT_BASIS = "tokens"


class CorpusTextIndex:
    """Exact duplicates among corpus texts: the cleaned text a document keeps.

    The cascade runs on a page's main text, before cleaning; two pages whose main texts
    differ only in what cleaning removes (a date heading, a byline, a breadcrumb: a path
    calendar's days) have the same corpus text, and this index catches them. Keys
    ``exact:clean:h`` (:func:`text_fingerprint` -> doc id: NFKC, case and whitespace do not
    count) and ``exact:clean:d`` (doc id -> fingerprint, for removal), in the cascade's
    storage; the first document with a text keeps it."""

    name = "exact:clean"

    def __init__(self, storage: IndexStorage):
        self.storage = storage

    def check_and_add(self, doc_id: str, text: str) -> Match | None:
        """The stored document with the same corpus text as ``text`` (another id), or None
        after recording ``text`` under ``doc_id``. An empty text is never matched."""
        if not text or not text.strip():
            return None
        fp = text_fingerprint(text)
        h, d = f"{self.name}:h", f"{self.name}:d"

        def step() -> Match | None:
            with self.storage.lock(self.name):
                owner = self.storage.hget(h, fp)
                if owner is not None and owner.decode() != doc_id:
                    return Match(owner.decode(), 1.0, ExactDetector.name)
                old = self.storage.hget(d, doc_id)
                if old is not None and old.decode() != fp:
                    self._unlink(doc_id, old.decode())
                self.storage.hset(h, fp, doc_id)
                self.storage.hset(d, doc_id, fp)
            return None

        return retry_lost_lock(self.storage, step, what="a corpus-text check-and-add")

    def _unlink(self, doc_id: str, fp: str) -> None:
        owner = self.storage.hget(f"{self.name}:h", fp)
        if owner is not None and owner.decode() == doc_id:
            self.storage.hdel(f"{self.name}:h", fp)
        self.storage.hdel(f"{self.name}:d", doc_id)

    def remove(self, doc_id: str) -> None:
        """Forget ``doc_id``'s text (a recrawled page that changed)."""
        with self.storage.lock(self.name):
            old = self.storage.hget(f"{self.name}:d", doc_id)
            if old is not None:
                self._unlink(doc_id, old.decode())
