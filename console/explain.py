"""Why a page scored what it scored: its relevance per part under the run's topic snapshot.

The relevance engine of the topic the run crawled with (its ``crawl_runs.topic_text``) is
built once per snapshot (the similarity sources and the classifier load: seconds) and kept
for the next pages. Each part of the page (title, meta description, keywords, main text) gets
formula 3, the classifier's probability and their mix
(:meth:`relevance.priority.SemanticLinkScorer.relevance_texts`); the page score
recomputed from them is w·Rel(f_info) + (1 − w)·Rel(text) (``page_relevance``) without the
URL-structure factor μ, which depended on the crawl's sample at the moment the page came.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from relevance.linkscore import PageInfo
from relevance.priority import SemanticLinkScorer, build_similarity
from relevance.topic import Topic, parse_topic
from topicrawl.errors import TopicrawlError


class PageExplainer:
    """Per-part relevance of stored pages; a few topic engines are cached."""

    def __init__(self, base_dir: str | Path, cache: int = 2):
        self.base_dir = Path(base_dir)  # relative paths of a snapshot resolve here
        self.cache = cache
        self._scorers: OrderedDict[str, SemanticLinkScorer] = OrderedDict()
        self._sims: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._sims_lock = threading.RLock()

    def similarity(self, topic: Topic) -> Any:
        """The topic's similarity source (Algorithm 1 over its sources), loaded once per
        distinct ``[similarity]``/``[hownet]`` configuration and shared by every engine."""
        key = repr((topic.similarity, topic.hownet, str(topic.base_dir)))
        with self._sims_lock:
            if key not in self._sims:
                self._sims[key] = build_similarity(topic)
                while len(self._sims) > self.cache:
                    self._sims.popitem(last=False)
            return self._sims[key]

    def suggest(self, topic: Topic, topn: int = 20, per_word: int = 10) -> list[dict[str, Any]]:
        """New topic words: Σ_t w_t·Sim(cand, t)² over each topic word's ``per_word`` most
        similar words, scaled to the best (the scores of ``topicrawl topic suggest``)."""
        sim = self.similarity(topic)
        weights = topic.weights
        scores: dict[str, float] = {}
        for word, wt in weights.items():
            for cand, s in sim.most_similar(word, topn=per_word):
                if cand in weights or cand in topic.overrides:
                    continue
                scores[cand] = scores.get(cand, 0.0) + wt * s * s
        if not scores:
            return []
        top = max(scores.values())
        ranked = sorted(scores.items(), key=lambda t: (-t[1], t[0]))[:topn]
        return [{"word": w, "score": round(s / top, 4)} for w, s in ranked]

    def scorer(self, topic_text: str) -> SemanticLinkScorer:
        key = hashlib.sha256(topic_text.encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._scorers:
                self._scorers.move_to_end(key)
                return self._scorers[key]
            topic = parse_topic(topic_text, path=str(self.base_dir / "run-snapshot.toml"))
            scorer = SemanticLinkScorer.from_topic(topic, sim=self.similarity(topic))
            self._scorers[key] = scorer
            while len(self._scorers) > self.cache:
                self._scorers.popitem(last=False)
            return scorer

    def explain(self, topic_text: str, page: dict[str, Any]) -> dict[str, Any]:
        """``{"parts": [{part, text, formula3, classifier, relevance}], "page": score,
        "description_weight": w}`` or ``{"error": message}`` when the engine cannot load."""
        if not topic_text:
            return {"error": "the run stored no topic snapshot"}
        try:
            scorer = self.scorer(topic_text)
        except (TopicrawlError, OSError, ValueError) as exc:
            return {"error": f"cannot build the run's relevance engine: {exc}"}
        parts = [
            ("title", page.get("title") or ""),
            ("description", page.get("description") or ""),
            ("keywords", page.get("keywords") or ""),
        ]
        info = PageInfo(
            url=page["url"], title=parts[0][1], description=parts[1][1], keywords=parts[2][1],
            text=page.get("text") or "",
        )  # fmt: skip
        f_info = scorer.description_text(info)
        texts = [t for _, t in parts] + [f_info, info.text]
        with self._lock:  # the engine's memos are not thread-safe
            scores, f3, probs = scorer.relevance_texts(texts)
        names = [n for n, _ in parts] + ["f_info (title + description + keywords)", "main text"]
        rows = [
            {"part": name, "chars": len(text), "formula3": round(f, 4),
             "classifier": None if p is None else round(p, 4), "relevance": round(s, 4)}
            for name, text, s, f, p in zip(names, texts, scores, f3, probs, strict=True)
        ]  # fmt: skip
        w = scorer.description_weight if f_info else 0.0
        if not info.text:
            page_score = scores[3]
        else:
            page_score = w * scores[3] + (1 - w) * scores[4]
        return {
            "parts": rows,
            "page": round(page_score, 4),
            "description_weight": w,
            "classifier": scorer.classifier is not None,
            "classifier_weight": scorer.classifier_weight if scorer.classifier else None,
        }
