"""A topic's word affinities over a whole dictionary, computed once and cached on disk.

Formula 3's inner sum, the topic affinity aff(d) = Σ_t w_t·Sim(d, t)² of a word d
(:mod:`relevance.page`), depends only on d and on the topic. A dictionary source (HowNet,
Tongyici Cilin, their hybrid) knows a closed vocabulary: a word it lacks is similar to
nothing but itself, so its affinity is w_d when d is a topic word and 0 otherwise. The
affinity of every word is therefore known once the dictionary's words (and the topic's) are
scored: one vectorised pass (HowNet's 53,335 words against a 33-word topic: ≈ 0.8 s), of
which only the words above the similarity cut (Th2) are kept — 619 for
``topics/shizheng.toml``.

The table is kept in the start-up cache (:mod:`topicrawl.modelcache`: JSON, keyed by the
topic's similarity fingerprint and word order, the dictionary files' SHA-256 and this code),
so a crawl of an unchanged topic starts without loading the dictionary at all: no HowNet
parse to unpickle (≈ 0.3 s, ≈ 50 MB). Word vectors have no closed vocabulary (a fastText
model gives a vector to any word) and OpenHowNet's resources are not files of ours: topics
that use them load their sources as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: the sources whose vocabulary is closed and whose files are known
CLOSED_SOURCES = frozenset({"hownet", "cilin"})
#: the code a table depends on (a changed implementation never reads an old table)
CODE = ("relevance.affinity", "relevance.page", "relevance.combined", "relevance.hownet",
        "relevance.cilin")  # fmt: skip


def dictionary_files(topic) -> list[Path] | None:
    """The files of a topic's similarity sources when every source is a closed-vocabulary
    dictionary (HowNet: glossary.dat and WHOLE.DAT; Cilin: its text file), else None. None
    also when a file is missing (loading the source then raises its own error)."""
    s = topic.similarity
    if not s.sources or set(s.sources) - CLOSED_SOURCES:
        return None
    from relevance import cilin, hownet
    from topicrawl.errors import ResourceMissingError

    files: list[Path] = []
    try:  # the files the sources' loaders read (relevance.combined.build_similarity)
        if "hownet" in s.sources:
            files += hownet.dictionary_files(topic.resolve(s.hownet))
        if "cilin" in s.sources:
            files.append(cilin.dictionary_file(topic.resolve(getattr(s, "cilin", ""))))
    except ResourceMissingError:
        return None
    return files if all(f.is_file() for f in files) else None


def vocabulary(sim: Any) -> list[str]:
    """Every word a :class:`relevance.combined.CombinedSimilarity` over dictionaries knows
    (the hybrid's two dictionaries together), sorted."""
    source = sim.dictionary
    parts = [source.hownet, source.cilin] if hasattr(source, "cilin") else [source]
    words: set[str] = set()
    for part in parts:
        words.update(part.words)
    return sorted(words)


def build_table(raw_affinity: Callable[[list[str]], np.ndarray], words: list[str],
                topic_words: list[str]) -> dict[str, list]:  # fmt: skip
    """The non-zero raw affinities of ``words`` and the topic's own words, as stored:
    ``{"words": [...], "raw": [...]}`` (float32 values, exact through JSON)."""
    every = list(dict.fromkeys([*topic_words, *words]))
    raw = raw_affinity(every)
    keep = np.flatnonzero(raw)
    return {"words": [every[i] for i in keep], "raw": [float(raw[i]) for i in keep]}


def cached_table(topic, build: Callable[[], dict[str, list]]) -> dict[str, float] | None:
    """The topic's affinity table from the start-up cache, built by ``build()`` when absent;
    None when the topic's sources are not closed dictionaries or the cache is off."""
    from relevance.cache import topic_fingerprint
    from topicrawl import modelcache

    files = dictionary_files(topic)
    if files is None or not modelcache.enabled():
        return None
    parts = {"fingerprint": topic_fingerprint(topic), "order": list(topic.weights)}
    key = modelcache.cache_key("affinity", parts, files=files, code=CODE)
    value = modelcache.cached("affinity", key, build)
    words, raw = value.get("words"), value.get("raw")
    if not isinstance(words, list) or not isinstance(raw, list) or len(words) != len(raw):
        return None
    return dict(zip(words, raw, strict=True))
