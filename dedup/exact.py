"""Exact duplicates: a hash of the normalized main text (the cheapest first cascade stage)."""

from __future__ import annotations

import hashlib
import re

from dedup.base import Detector, Doc, Match, register
from dedup.storage import IndexStorage
from dedup.text import normalize_text

_NO_SPACE = re.compile(r"\s+")


def text_fingerprint(text: str) -> str:
    """SHA-1 of the text after NFKC, lowercasing and removing all whitespace.

    Whitespace is dropped entirely, so changed line and paragraph breaks (and, in Chinese,
    stray spaces) do not make a copy look different.
    """
    norm = _NO_SPACE.sub("", normalize_text(text))
    return hashlib.sha1(norm.encode("utf-8")).hexdigest()


@register("exact")
class ExactDetector(Detector):
    """Index ``fingerprint -> doc_id`` (hash ``exact:h``) and ``doc_id -> fingerprint``
    (hash ``exact:d``, for removal). A match has score 1.0. Empty texts are never matched."""

    def __init__(self, storage: IndexStorage, **params):
        super().__init__(storage, **params)

    def features(self, doc: Doc) -> str | None:
        return text_fingerprint(doc.text) if doc.text and doc.text.strip() else None

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
