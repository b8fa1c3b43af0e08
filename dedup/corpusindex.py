"""Named dedup indexes of an existing corpus: a new crawl drops what the corpus already holds.

``topicrawl dedup index --name NAME --from-run ID`` (or ``--from-jsonl FILE``) adds the
corpus documents to the index ``NAME``: the crawl's own cascade (the same methods and
options, e.g. exact hash then SpotSigs) under the storage namespace ``<ns>:index:NAME`` of
a backend of :func:`dedup.storage.make_storage` (default: the SQLite file
``topicrawl-dedup-indexes.sqlite``; Redis for a scale-out). A crawl with
``TOPICRAWL_DEDUP_INDEX=NAME`` queries it (read only) before its own cascade: a page that
matches a corpus document is recorded as its duplicate, with method ``corpus:<method>``.
Adding a run after it was crawled (``--from-run``) extends the corpus across runs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from dedup.base import Doc, Match
from dedup.cascade import DEFAULT_METHODS, Cascade
from dedup.storage import IndexStorage, make_storage, retry_lost_lock
from topicrawl.errors import ConfigError

DEFAULT_BACKEND: dict[str, Any] = {"type": "sqlite", "path": "topicrawl-dedup-indexes.sqlite"}
IDS_KEY = "corpus:ids"  # doc id -> 1 for every indexed document
META_KEY = "corpusindex:meta"
#: prefix of the method recorded for a page that duplicates a corpus document
CORPUS_METHOD = "corpus:"


def index_storage(name: str, backend: Mapping[str, Any] | None = None) -> IndexStorage:
    """The storage of the named index ``name`` in ``backend`` (default :data:`DEFAULT_BACKEND`)."""
    if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ConfigError(
            f"dedup index name {name!r}: use letters, digits, '-', '_' or '.' (e.g. corpus-2026)"
        )
    config = dict(backend or DEFAULT_BACKEND)
    config["namespace"] = f"{config.get('namespace', 'topicrawl')}:index:{name}"
    return make_storage(config)


class CorpusIndex:
    """A named, persistent dedup cascade of corpus documents (see the module docstring)."""

    def __init__(self, storage: IndexStorage, name: str, meta: dict[str, Any]):
        self.storage = storage
        self.name = name
        self.meta = meta
        self.cascade = Cascade(storage, meta["methods"], options=meta.get("options") or {})

    @classmethod
    def open(
        cls,
        name: str,
        backend: Mapping[str, Any] | None = None,
        *,
        create: bool = False,
        methods: list[str] | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        text: str = "main",
    ) -> CorpusIndex:
        """Open the index ``name``; with ``create``, make it (with ``methods``/``options``)
        when it does not exist. An existing index keeps the methods it was built with."""
        storage = index_storage(name, backend)
        raw = storage.get(META_KEY)
        if raw is not None:
            meta = json.loads(raw)
            if methods and list(methods) != meta["methods"]:
                storage.close()
                raise ConfigError(
                    f"dedup index {name!r} was built with methods {','.join(meta['methods'])}, "
                    f"not {','.join(methods)}: use another --name or the same methods"
                )
            return cls(storage, name, meta)
        if not create:
            where = dict(backend or DEFAULT_BACKEND)
            storage.close()
            raise ConfigError(
                f"no dedup index named {name!r} in {where}: build it with "
                f"topicrawl dedup index --name {name} --from-run ID (or --from-jsonl FILE)"
            )
        meta = {"methods": list(methods or DEFAULT_METHODS),
                "options": {k: dict(v) for k, v in (options or {}).items()},
                "text": text, "documents": 0, "sources": []}  # fmt: skip
        index = cls(storage, name, meta)  # validates the methods before anything is written
        storage.set_json(META_KEY, meta)
        return index

    def __len__(self) -> int:
        return int(self.meta.get("documents", 0))

    def query(self, doc: Doc) -> Match | None:
        """The corpus document ``doc`` duplicates (first method that matches), or None."""
        return self.cascade.query(doc)

    def add_many(
        self, docs: Iterable[tuple[str, Doc]], *, source: str = "", batch_size: int = 200
    ) -> dict[str, int]:
        """Index ``(doc_id, doc)`` pairs (a doc id already present is skipped, so adding the
        same run twice changes nothing); returns ``{"added", "present", "empty"}``."""
        counts = {"added": 0, "present": 0, "empty": 0}
        batch: list[tuple[str, Doc]] = []

        tried: set[str] = set()  # added by an attempt of this batch that lost its lock

        def step() -> Counter[str]:
            done: Counter[str] = Counter()
            with self.storage.lock("cascade"):
                for doc_id, doc in batch:
                    # the index's own record of its documents: the cascade keeps no
                    # per-document metadata with keep="first"
                    if self.storage.hget(IDS_KEY, doc_id) is not None:
                        done["added" if doc_id in tried else "present"] += 1
                        continue
                    tried.add(doc_id)
                    self.cascade.add(doc_id, doc)
                    self.storage.hset(IDS_KEY, doc_id, 1)
                    done["added"] += 1
            return done

        def flush() -> None:
            # a lost Redis lock: the batch again (the documents already written are present)
            done = retry_lost_lock(self.storage, step, what="a corpus index batch")
            counts["present"] += done["present"]
            counts["added"] += done["added"]
            batch.clear()
            tried.clear()

        for doc_id, doc in docs:
            if not (doc.text or "").strip():
                counts["empty"] += 1
                continue
            batch.append((doc_id, doc))
            if len(batch) >= batch_size:
                flush()
        if batch:
            flush()
        self.meta["documents"] = int(self.meta.get("documents", 0)) + counts["added"]
        if source:
            self.meta.setdefault("sources", []).append({"source": source, **counts})
        self.storage.set_json(META_KEY, self.meta)
        return counts

    def close(self) -> None:
        self.storage.close()

    def __repr__(self) -> str:
        return f"CorpusIndex({self.name!r}, {len(self)} documents, {self.cascade!r})"
