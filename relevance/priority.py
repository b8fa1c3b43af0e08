"""Formula 5 link priority and the crawl decision (Zhou, Wang & Yu 2019, section 3).

    p(url) = α·Rel(f_info, TSet) + β·Rel(a_url, TSet) + λ·struct(url)

f_info is the description information of the page that holds the link (title, meta
description, keywords), a_url the link's anchor text, struct(url) Algorithm 3. A link is
followed when p > threshold (0.2 in the paper).

Description gate (section 3.1): when Rel(f_info) is below ``description_threshold`` the page
is judged irrelevant and its description gets only plain topic-word matching instead of the
semantic score. ``focus = "hard"`` does not follow the links of such pages at all;
``"soft"`` (default) still follows them on their own anchor and structure score. Seeds are
always expanded. Every LinkScore carries the full breakdown.

With a topic ``[classifier]`` every Rel(·) above (description, anchor, page text) becomes
(1 − w)·formula 3 + w·P(topic | text) (:mod:`relevance.classifier`); anchors keep formula 3
alone when ``anchors = false``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from relevance.classifier import TopicClassifier, mix, train_cached
from relevance.linkscore import Link, LinkScore, PageInfo
from relevance.page import TopicRelevance
from relevance.topic import Topic
from relevance.urls import PerHostStructureSample, StructureSample, same_path, structure_sample
from topicrawl.errors import ResourceMissingError  # noqa: F401 (raised by build_similarity)


def build_similarity(topic: Topic):
    """The similarity source a topic names (Algorithm 1 over its sources); no fallback.
    Built by :func:`relevance.combined.build_similarity` (HowNet, Cilin, their hybrid,
    word2vec)."""
    from relevance.combined import build_similarity as _build

    return _build(topic)


def build_relevance(
    topic: Topic,
    sim=None,
    *,
    shared_cache: str | None = None,
    shared_namespace: str = "topicrawl",
) -> TopicRelevance:
    """Formula 3 engine (similarity + candidate extractor + affinity cache) for a topic.

    ``shared_cache``: a Redis URL; word affinities are then shared with every process that
    crawls the same topic (same words, weights and similarity settings), under the key
    prefix ``shared_namespace``. A Redis error falls back to computing the words locally
    (``TopicRelevance.shared_failures``).

    Without ``sim``, a topic whose sources are dictionaries (HowNet, Cilin) reads every
    word's affinity from the start-up cache (:func:`affinity_table`) and loads the
    dictionary only if something asks for ``relevance.sim``; the shared cache is then not
    needed (nothing is computed).
    """
    from relevance.weights import CandidateExtractor

    loaded = sim

    def load():
        nonlocal loaded
        if loaded is None:
            loaded = build_similarity(topic)
        return loaded

    # a dictionary topic's affinities come from the start-up cache: no dictionary to load
    # (not when the caller brings its own source)
    found = affinity_table(topic, load) if sim is None else None
    weights = topic.weights
    extractor = CandidateExtractor(
        language=topic.language,
        pos=topic.candidates.pos,
        min_length=topic.candidates.min_length,
        topic_words=weights,
    )
    shared = None
    if shared_cache:
        from relevance.cache import RedisAffinityCache, topic_fingerprint

        shared = RedisAffinityCache.from_url(
            shared_cache, topic_fingerprint(topic), namespace=shared_namespace
        )
    if found is None:
        load()
    return TopicRelevance(weights, loaded, extractor, shared=shared, form=topic.page_formula3,
                          table=found, similarity=load)  # fmt: skip


def affinity_table(topic: Topic, load: Callable[[], Any]) -> dict[str, float] | None:
    """The raw affinity of every word the topic's dictionary knows, from the start-up cache,
    computed with ``load()``'s source when absent; None for sources without a closed
    vocabulary (word vectors, OpenHowNet) or with the cache off (:mod:`relevance.affinity`)."""
    from relevance.affinity import build_table, cached_table, vocabulary
    from relevance.page import raw_affinity, topic_vector

    def build() -> dict:
        source = load()
        words, scaled = topic_vector(topic.weights)
        return build_table(lambda ws: raw_affinity(source, words, scaled, ws),
                           vocabulary(source), words)  # fmt: skip

    return cached_table(topic, build)


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def build_classifier(topic: Topic, relevance: TopicRelevance) -> TopicClassifier:
    """Train the topic's ``[classifier]`` on its example file, over the candidate words of
    ``relevance`` (raises ResourceMissingError when the file or a label is missing)."""
    c = topic.classifier
    if c is None:
        raise ValueError(f"topic {topic.name!r} has no [classifier] table")
    path = topic.resolve(c.examples)
    classes = topic.resolve(c.classes) if c.classes else None
    # trained once per topic and data (the start-up cache, topicrawl.modelcache)
    return train_cached(path, relevance.extract, positive=c.positive, fmt=c.format,
                        classes=classes, c=c.c)  # fmt: skip


class SemanticLinkScorer:
    """The relevance engine's :class:`relevance.linkscore.LinkScorer` (formula 5)."""

    def __init__(
        self,
        relevance: TopicRelevance,
        *,
        alpha: float = 0.4,
        beta: float = 0.4,
        lam: float = 0.2,
        threshold: float = 0.2,
        focus: str = "soft",
        description_threshold: float = 0.1,
        structure: StructureSample | PerHostStructureSample | None = None,
        description_weight: float = 0.5,
        page_struct_weight: float = 0.5,
        holding_page: bool = True,
        classifier: TopicClassifier | None = None,
        classifier_weight: float = 0.5,
        classify_anchors: bool = True,
    ):
        if focus not in ("soft", "hard"):
            raise ValueError(f"focus must be 'soft' or 'hard', not {focus!r}")
        self.relevance = relevance
        self.alpha, self.beta, self.lam = alpha, beta, lam
        self.threshold = threshold
        self.focus = focus
        self.description_threshold = description_threshold
        if not 0.0 <= description_weight <= 1.0:
            raise ValueError(f"description_weight must be in [0, 1], not {description_weight}")
        self.description_weight = description_weight
        if not 0.0 <= page_struct_weight <= 1.0:
            raise ValueError(f"page_struct_weight must be in [0, 1], not {page_struct_weight}")
        self.page_struct_weight = page_struct_weight
        self.holding_page = holding_page
        if not 0.0 <= classifier_weight <= 1.0:
            raise ValueError(f"classifier_weight must be in [0, 1], not {classifier_weight}")
        self.classifier = classifier
        self.classifier_weight = classifier_weight
        self.classify_anchors = classify_anchors
        self.structure = structure if structure is not None else PerHostStructureSample()
        self._last_page: tuple[str, float, float] | None = None

    @classmethod
    def from_topic(
        cls,
        topic: Topic,
        *,
        sim=None,
        seed: int | None = 0,
        shared_cache: str | None = None,
        shared_namespace: str = "topicrawl",
    ) -> SemanticLinkScorer:
        """Build from a topic file (loads its similarity sources; raises when one is missing).

        ``shared_cache``: optional Redis URL for the cross-process word-affinity cache.
        """
        p, u, c = topic.priority, topic.urls, topic.classifier
        structure = structure_sample(u, seed=seed)
        relevance = build_relevance(
            topic, sim, shared_cache=shared_cache, shared_namespace=shared_namespace
        )
        return cls(
            relevance,
            alpha=p.alpha,
            beta=p.beta,
            lam=p.lam,
            threshold=p.threshold,
            focus=p.focus,
            description_threshold=p.description_threshold,
            structure=structure,
            description_weight=topic.page_description_weight,
            page_struct_weight=topic.page_struct_weight,
            holding_page=u.holding_page,
            classifier=build_classifier(topic, relevance) if c else None,
            classifier_weight=c.weight if c else 0.5,
            classify_anchors=c.anchors if c else True,
        )

    @staticmethod
    def description_text(page: PageInfo) -> str:
        return " ".join(x for x in (page.title, page.description, page.keywords) if x)

    def relevance_texts(
        self, texts: list[str], *, classify: list[bool] | None = None
    ) -> tuple[list[float], list[float], list[float | None]]:
        """Rel of each text: formula 3, mixed with the classifier where ``classify`` says so
        (all texts by default). Returns (scores, formula-3 scores, classifier P or None)."""
        words = [self.relevance.words(t) for t in texts]
        f3 = self.relevance.relevance_word_lists(words)
        probs: list[float | None] = [None] * len(texts)
        if self.classifier is not None and self.classifier_weight > 0:
            idx = [i for i in range(len(texts)) if classify is None or classify[i]]
            found = self.classifier.probability_words([words[i] for i in idx])
            for i, pr in zip(idx, found, strict=True):
                probs[i] = pr
        w = self.classifier_weight
        return [mix(f, pr, w) for f, pr in zip(f3, probs, strict=True)], f3, probs

    def score_links(self, page: PageInfo, links: list[Link]) -> list[LinkScore]:
        rel = self.relevance
        info = self.description_text(page)
        texts = [info] + [lk.anchor for lk in links]
        classify = [True] + [self.classify_anchors] * len(links)
        scores, f3, probs = self.relevance_texts(texts, classify=classify)
        f_sem, anchors = scores[0], scores[1:]
        relevant = f_sem >= self.description_threshold
        f_info = f_sem if relevant else rel.plain_match(info)
        out = []
        st = self.structure
        cold = self.holding_page and relevant and hasattr(st, "has_structure")
        for i, (link, a) in enumerate(zip(links, anchors, strict=True), 1):
            s = st.struct(link.url) if self.lam else 0.0
            source = "sample"
            if self.lam and cold and not s and not st.has_structure(link.url):
                # no majority structure for the link's host yet: the relevant holding page
                # stands in for the sample (Algorithm 2 against it); a link to the same path
                # with other parameters (a calendar's next day) is no evidence of a section
                similar = st.similar(link.url, page.url) and not same_path(link.url, page.url)
                s, source = (1.0 if similar else 0.0), "holding-page"
            p = self.alpha * f_info + self.beta * a + self.lam * s
            p = max(0.0, min(1.0, p))
            if page.is_seed:
                follow, reason = True, "from-seed"
            elif not relevant and self.focus == "hard":
                follow, reason = False, "description-gate"
            else:
                follow = p > self.threshold
                reason = "above-threshold" if follow else "below-threshold"
            breakdown: dict[str, Any] = {
                "method": "semantic",
                "f_info": round(f_info, 4),
                "f_info_semantic": round(f_sem, 4),
                "anchor": round(a, 4),
                "struct": s,
                "struct_source": source,
                "alpha": self.alpha,
                "beta": self.beta,
                "lambda": self.lam,
                "p": round(p, 4),
                "description_relevant": relevant,
                "description_threshold": self.description_threshold,
                "focus": self.focus,
                "threshold": self.threshold,
                "from_seed": page.is_seed,
                "follow": follow,
                "reason": reason,
            }
            if self.classifier is not None:
                breakdown["anchor_formula3"] = round(f3[i], 4)
                breakdown["anchor_classifier"] = _rounded(probs[i])
                breakdown["f_info_classifier"] = _rounded(probs[0])
            out.append(LinkScore(p, follow, breakdown))
        return out

    def page_relevance(self, page: PageInfo) -> float:
        """Formula 3 over the page: w·Rel(f_info) + (1 − w)·Rel(text), w the topic's
        ``[page] description_weight`` (default 0.5, the mean; only the description when there
        is no text, only the text when there is no description); each Rel mixed with the
        topic's classifier when it has one (:meth:`relevance_texts`).

        ``[page] struct_weight`` μ (topicrawl's extension, default 0.5; 0 = the paper's page
        relevance) applies Algorithm 3 to the page itself, as formula 5 does for links: once
        the page's host has a majority structure in its accepted sample (``has_structure``),
        the score is multiplied by 1 + μ when struct(page url) = 1 and by 1 − μ otherwise
        (capped at 1): a page filed where its host keeps its accepted pages needs less textual
        evidence, one filed elsewhere more. Hosts without such a structure (a single-topic
        site with several sections, the start of a crawl) keep the plain score, and so does a
        ``structure`` object without ``has_structure``.
        """
        return self.page_relevance_parts(page)[0]

    def page_relevance_parts(self, page: PageInfo) -> tuple[float, dict[str, float]]:
        """:meth:`page_relevance` and its parts: ``info`` (Rel of title + description +
        keywords), ``text`` (Rel of the main text, absent without text) and ``struct`` (the
        Algorithm 3 factor applied, 1.0 when none)."""
        info = self.description_text(page)
        if not page.text:
            r = r_info = self.relevance_texts([info])[0][0]
            parts = {"info": float(r_info)}
        else:
            r_info, r_text = self.relevance_texts([info, page.text])[0]
            w = self.description_weight if info else 0.0
            r = w * r_info + (1.0 - w) * r_text
            parts = {"info": float(r_info), "text": float(r_text)}
        mu = self.page_struct_weight
        has_structure = getattr(self.structure, "has_structure", None)
        factor = 1.0
        if mu and has_structure is not None and has_structure(page.url):
            factor = 1.0 + mu if self.structure.struct(page.url) else 1.0 - mu
            r = min(1.0, r * factor)
        parts["struct"] = factor
        return r, parts

    def observe_accepted(self, url: str) -> None:
        self.structure.add(url)


def build_scorer(
    topic: Topic,
    *,
    shared_cache: str | None = None,
    shared_namespace: str = "topicrawl",
    seed: int | None = 0,
):
    """The topic's link scorer: ``[priority] mode = "calibrated"`` (default) the calibrated
    scorer with its learned models (:mod:`relevance.calibrated`), ``"paper"`` formula 5
    (its word-affinity cache shared in Redis under ``shared_namespace``)."""
    if topic.priority.mode == "calibrated":
        from relevance.calibrated import CalibratedLinkScorer

        return CalibratedLinkScorer.from_topic(topic, seed=seed)
    return SemanticLinkScorer.from_topic(
        topic, seed=seed, shared_cache=shared_cache, shared_namespace=shared_namespace
    )
