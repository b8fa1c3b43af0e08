"""The calibrated scorer (topicrawl, issue 10): relevance that works for a words-only topic.

``[priority] mode = "calibrated"`` (the default; ``"paper"`` keeps Zhou, Wang & Yu's formula 3
and 5, :mod:`relevance.priority`). Every score is a probability, so one threshold means the
same for every topic:

* **page relevance** P(page) = combine(P_lit(page), P_model(page)): P_lit the calibrated
  literal topic-word evidence of the head and the text (:mod:`relevance.evidence`), P_model
  the self-trained page model (:mod:`relevance.learning.selftrain`, Nigam et al. 2000) that
  the crawl trains on its own pages, pseudo-labelled by P_lit; the rule is ``[learning]
  combine`` (:mod:`relevance.combine`; "mean": (1 − w)·P_lit + w·P_model, w = ``[learning]
  weight``). P_lit is taken against contrast topics (:mod:`relevance.evidence`): the topic
  file's ``[learning] contrast`` lists and those learned from the web's sections (a page's
  breadcrumb, with ``section_meta`` else its menu's current item or its metadata's section,
  else its URL directory: ``learn_contrast``, :mod:`relevance.learning.contrast`);
  with ``section_negatives`` the pages of those learned contrast sections are the page model's
  negatives (co-training: the section view labels the text view). Before the model has its first training (too few confident pages of either
  class), and for a text with no word it knows, P_lit alone. A page is accepted at ``[page]
  threshold`` (0.5); with ``[learning] calibrate_accept``, when the isotonic calibration of
  P(page) (:mod:`relevance.acceptance`) is at least the threshold — the acceptance only; links
  keep P(page).
* **link priority** P(link) = σ(logit(prior) + Σ_f w_f): the prior = β·P(anchor) +
  α·P(holding page), P(anchor) the same mix on the anchor text; the sparse weights w_f of
  the online link model (:mod:`relevance.learning.linkmodel`, ACHE / Chakrabarti et al.
  2002) learned from the relevance of every fetched page, labelling the link that led to it.
  With ``[learning] anchor_context = k`` the literal anchor evidence of a link is at least
  the mean P_lit(anchor) of the links within k places of it in the page's document order
  (:func:`anchor_context`): the apprentice's text-at-a-DOM-offset features of Chakrabarti
  et al. 2002 reduced to the neighbouring anchors, so a headline without a topic word in a
  block of on-topic headlines (a section's list, a section's box on a portal page) and the
  section link heading that block rise with it.

Word similarity (formula 3) is not used in this mode: the topic is expanded by the page model,
from the crawled pages themselves, only where the literal evidence is confident.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from relevance.acceptance import AcceptanceMap
from relevance.combine import combiner
from relevance.evidence import LiteralEvidence
from relevance.learning.base import retrain_due
from relevance.learning.contrast import LearnedContrast
from relevance.learning.domains import DomainProfile
from relevance.learning.final import Change, FinalJudgement
from relevance.learning.labels import UserLabels
from relevance.learning.linkmodel import OnlineLinkModel, link_features
from relevance.learning.mixture import ScoreMixture
from relevance.learning.rejudge import HeldPage, RejudgeBuffer
from relevance.learning.selftrain import Bag, SelfTrainingPageModel
from relevance.linkscore import Link, LinkScore, PageInfo
from relevance.page import memoised_words
from topicrawl.errors import ResourceMissingError

#: anchor texts whose judgement :meth:`CalibratedLinkScorer._anchor_judgements` remembers
#: (≈ 200 bytes each beside the words memo; emptied when full)
ANCHOR_MEMO = 1 << 14


class CalibratedLinkScorer:
    """Calibrated page and link relevance with the self-trained page model and the online
    link model (a :class:`relevance.linkscore.LinkScorer`)."""

    def __init__(
        self,
        extract,
        evidence: LiteralEvidence,
        *,
        page_model: SelfTrainingPageModel | None = None,
        link_model: OnlineLinkModel | None = None,
        model_weight: float = 0.5,
        combine: str = "mean",
        alpha: float = 0.3,
        beta: float = 0.7,
        threshold: float = 0.0,
        context: int = 0,
        context_use: str = "prior",
        memo_size: int = 100_000,
        memo_chars: int = 200,
    ):
        if not 0.0 <= model_weight <= 1.0:
            raise ValueError(f"model weight must be in [0, 1], not {model_weight}")
        self.extract = extract
        self.evidence = evidence
        self.page_model = page_model
        self.link_model = link_model
        self.model_weight = model_weight
        self.combine = combine
        self._combine = combiner(combine, weight=model_weight)
        self.alpha, self.beta, self.threshold = alpha, beta, threshold
        if context < 0:
            raise ValueError(f"anchor context must be >= 0, not {context}")
        if context_use not in ("prior", "feature"):
            raise ValueError(f"anchor context use must be prior or feature, not {context_use!r}")
        self.context = context
        #: "feature" (and a link model): the context is a feature the link model learns
        self.context_feature = context > 0 and context_use == "feature" and link_model is not None
        self.memo_size, self.memo_chars = memo_size, memo_chars
        self.labels: UserLabels | None = None
        #: scale-out: the stream of training examples shared with the other workers
        #: (crawler.sharedlearn.SharedLearningStream), set by the spider
        self.shared: Any = None
        self._words: dict[str, list[str]] = {}
        #: anchor text -> (its words, P_lit, P_model), valid while the models that decide them
        #: are the ones in ``_anchors_by`` (:meth:`_anchor_judgements`)
        self._anchors: dict[str, tuple[list[str], float, float | None]] = {}
        self._anchors_by: tuple[Any, Any, float] | None = None
        self._last: tuple[str, float, list[str], float] | None = None  # url, P, words, P_lit
        self._last_features: tuple[float, float, float] = (0.0, 0.0, 0.0)  # of the last page
        #: rejected pages judged again after each retraining of the page model
        #: (``[learning] rejudge``; relevance.learning.rejudge), None: off
        self.rejudge: RejudgeBuffer | None = None
        self._rejudged_at = 0  # the page model's trainings at the last re-judgement
        #: the fetched pages judged again with the last models at the crawl's end
        #: (``[learning] final_judgement``; relevance.learning.final), None: off
        self.final: FinalJudgement | None = None
        #: contrast topics learned from the fetched pages (``[learning] learn_contrast``;
        #: relevance.learning.contrast), None: off; the topic file's own contrast lists
        self.learned_contrast: LearnedContrast | None = None
        self.fixed_contrast: list[dict[str, float]] = []
        self._raw: tuple[str, float] | None = None  # url, P_lit against the topic alone
        self._contrast_since = 0  # pages observed since the last rebuild (no page model)
        #: the calibration map of the acceptance (``[learning] calibrate_accept``;
        #: relevance.acceptance), None: a page is accepted on P(page) itself
        self.accept_map: AcceptanceMap | None = None
        #: ``[learning] accept_mixture``: the crawl's own calibration of P(page), a mixture
        #: model of its fetched pages' scores (relevance.learning.mixture), None: off; it
        #: accepts at ``accept_threshold`` (the topic's ``[page] threshold``)
        self.accept_mixture: ScoreMixture | None = None
        self.accept_threshold = 0.5
        #: ``[learning] section_negatives``: the pages of the learned contrast's sections are
        #: the page model's negatives (co-training: the section view labels the text view)
        self.section_negatives = False
        #: ``[learning] domain_veto``: HowNet domains of the topic against a page's
        #: (:mod:`relevance.learning.domains`); None: off
        self.domain_profile: DomainProfile | None = None
        #: ``domain_labels``: a vetoed pseudo-positive is no positive of the page model;
        #: ``domain_accept`` > 0: a vetoed page is accepted only with P_model at least this
        self.domain_labels = True
        self.domain_accept = 0.0
        self._domain_vetoed: tuple[str, bool] = ("", False)

    @classmethod
    def from_topic(cls, topic, *, seed: int | None = 0, **_: Any) -> CalibratedLinkScorer:
        """Build from a topic file: its words, ``[learning]`` and ``[priority]`` settings, its
        ``[classifier]`` examples and background text as seeds of the page model, and a model
        saved by ``topicrawl topic learn`` as the starting model."""
        from relevance.weights import CandidateExtractor

        lc = topic.learning
        extract = CandidateExtractor(
            language=topic.language,
            pos=topic.candidates.pos,
            min_length=topic.candidates.min_length,
            topic_words=topic.weights,
        )
        fixed = contrast_weights(topic)
        evidence = LiteralEvidence(topic.weights, extract, contrast=fixed,
                                   contrast_weight=lc.contrast_weight)  # fmt: skip
        page_model = None
        if lc.self_train:
            page_model = SelfTrainingPageModel(
                positive=lc.positive,
                negative=lc.negative,
                retrain_every=lc.retrain_every,
                c=lc.c,
                em_lambda=lc.em_lambda,
                em_steps=lc.em_steps,
                seed=seed or 0,
            )
            seed_model(page_model, topic, extract)
        link_model = (OnlineLinkModel(learning_rate=lc.link_rate, gate=lc.link_gate,
                                       gate_scope=lc.link_gate_scope)
                      if lc.link_model else None)  # fmt: skip
        p = topic.priority
        scorer = cls(
            extract,
            evidence,
            page_model=page_model,
            link_model=link_model,
            model_weight=lc.weight,
            combine=lc.combine,
            alpha=p.alpha,
            beta=p.beta,
            threshold=p.threshold,
            context=lc.anchor_context,
            context_use=lc.anchor_context_use,
        )
        scorer.fixed_contrast = fixed
        if lc.calibrate_accept:
            scorer.accept_map = AcceptanceMap()
        if lc.accept_mixture:
            scorer.accept_mixture = ScoreMixture(
                lc.accept_mixture, seed=seed or 0, cut=lc.accept_mixture_cut or None
            )
            scorer.accept_threshold = topic.page_threshold
        if lc.learn_contrast:
            scorer.learned_contrast = LearnedContrast(
                topic.weights, ratio=lc.contrast_ratio, positive=lc.positive,
                breadcrumbs=lc.contrast_breadcrumbs, meta=lc.section_meta,
                against_crawl=lc.contrast_against_crawl, seed=seed or 0)  # fmt: skip
        scorer.section_negatives = lc.section_negatives
        if page_model is not None and lc.domain_veto > 0:
            from relevance.learning.domains import load_domains

            try:
                domains = load_domains()
            except (ResourceMissingError, OSError) as exc:  # never a crawl without its veto
                raise ResourceMissingError(
                    f"[learning] domain_veto needs HowNet's glossary.dat ({exc}): install the "
                    "shared data's hownet/ (TOPICRAWL_DATA) or set domain_veto = 0"
                ) from exc
            scorer.domain_profile = DomainProfile(topic.weights, domains,
                                                  veto=lc.domain_veto, min_words=lc.domain_min)  # fmt: skip
            page_model.veto_negative = lc.domain_negative
            scorer.domain_labels, scorer.domain_accept = lc.domain_labels, lc.domain_accept
        if page_model is not None and lc.rejudge > 0:
            scorer.rejudge = RejudgeBuffer(lc.rejudge, max_words=page_model.max_words,
                                           min_literal=lc.rejudge_literal)  # fmt: skip
        if lc.final_judgement > 0:
            scorer.final = FinalJudgement(lc.final_judgement)
        return scorer

    # -- texts ------------------------------------------------------------------------------
    def words(self, text: str) -> list[str]:
        """Candidate words of a text (memoised for short texts; do not modify the list)."""
        return memoised_words(self._words, self.extract, text, self.memo_size, self.memo_chars)

    @staticmethod
    def description_text(page: PageInfo) -> str:
        return " ".join(x for x in (page.title, page.description, page.keywords) if x)

    def _model(self, docs: Sequence[Any], *, bags: bool = False) -> list[float | None]:
        """P_model of word lists (of word counts, :func:`~relevance.learning.selftrain.bag`,
        with ``bags``); None each while the model is off or untrained."""
        m = self.page_model
        if m is None or not m.ready or self.model_weight <= 0:
            return [None] * len(docs)
        return m.probability_bags(docs) if bags else m.probability_words(docs)

    def _mix(self, lit: float, model: float | None) -> float:
        return self._combine(lit, model)

    # -- pages ------------------------------------------------------------------------------
    def page_scores(self, page: PageInfo) -> tuple[float, float, float | None]:
        """(P(page), P_lit, P_model or None) of a page."""
        head = self.words(self.description_text(page))
        text = self.extract(page.text) if page.text else []
        evidence = self.evidence.page(head, text)
        lit = self.evidence.page_probability(evidence)
        if self.learned_contrast is not None:
            self._raw = (page.url, self.evidence.page_probability(evidence, contrast=False))
        self._last_features = evidence.features()
        words = head + text
        model = self._model([words])[0]
        p = self._mix(lit, model)
        self._last = (page.url, p, words, lit)
        dp = self.domain_profile
        self._domain_vetoed = (page.url, dp is not None and dp.vetoes(words))
        return p, lit, model

    def domain_rejected(self, page_url: str, model: float | None) -> bool:
        """``[learning] domain_accept``: the page just scored is rejected whatever its P(page)
        — its HowNet domain words lie outside the topic's (``domain_veto``, ``domain_min``)
        and its P_model is under ``domain_accept`` (absent: 0)."""
        return (self.domain_accept > 0 and self._domain_vetoed == (page_url, True)
                and (model or 0.0) < self.domain_accept)  # fmt: skip

    def page_relevance(self, page: PageInfo) -> float:
        return self.page_scores(page)[0]

    def page_relevance_parts(self, page: PageInfo) -> tuple[float, dict[str, float]]:
        """:meth:`page_relevance` and its parts: the topic-word evidence of the head (title,
        description, keywords) and of the text and the text's density (the features of the
        literal model), ``literal`` (its probability) and ``model`` (the self-trained page
        model, absent until it is ready)."""
        p, lit, model = self.page_scores(page)
        head, text, density = self._last_features
        parts = {"head": float(head), "text": float(text), "density": float(density),
                 "literal": float(lit)}  # fmt: skip
        if model is not None:
            parts["model"] = float(model)
        if self.accept_map is not None or self.accept_mixture is not None:
            parts["accept"] = float(self.acceptance(p))
        if self.domain_rejected(page.url, model):  # P(page) stays (links, link model)
            parts["accept"] = 0.0
            parts["domain_veto"] = 1.0
        return p, parts

    def acceptance(self, relevance: float) -> float:
        """The value a page is accepted on (at ``[page] threshold``): P(page) itself, or its
        calibrated probability of being on-topic with ``[learning] calibrate_accept``; with
        ``accept_mixture``, at least the posterior of the top component of the crawl's score
        mixture (:meth:`ScoreMixture.acceptance`)."""
        value = relevance if self.accept_map is None else self.accept_map(relevance)
        m = self.accept_mixture
        if m is not None:
            value = max(value, m.acceptance(relevance, self.accept_threshold))
        return value

    def accept_cut(self, threshold: float) -> float:
        """The smallest P(page) accepted at ``threshold`` (:meth:`acceptance` is monotone;
        with ``accept_mixture``, the mixture's cut as it is now)."""
        cut = threshold if self.accept_map is None else self.accept_map.cut(threshold)
        m = self.accept_mixture
        if m is not None and threshold == self.accept_threshold:
            cut = min(cut, m.cut(threshold))
        return cut

    def observe_page(self, page: PageInfo, relevance: float, link: dict | None) -> None:
        """A fetched page: it trains the page model (pseudo-labelled by its literal evidence,
        or labelled by the user) and labels the link that led to it for the link model."""
        if self._last is not None and self._last[0] == page.url:
            words, lit = self._last[2], self._last[3]
        else:
            self.page_scores(page)
            assert self._last is not None
            words, lit = self._last[2], self._last[3]
        label = self.labels.lookup(page.url) if self.labels else None
        if self.accept_mixture is not None and not page.is_seed:  # judged already
            self.accept_mixture.observe(relevance)
        shared = self.shared
        retrained = False
        lc = self.learned_contrast
        # the page's host and section key, found once (one parse of its URL)
        keyed = (lc.host_and_section(page.url, page.section, page.section_nav,
                                     page.section_label) if lc is not None else None)  # fmt: skip
        raw = self._raw[1] if self._raw is not None and self._raw[0] == page.url else lit
        if self.page_model is not None:
            section = None
            if self.section_negatives and lc is not None and keyed is not None:
                section = keyed[1]
                self.page_model.negative_sections = lc.contrast_keys
            veto = (self.domain_labels and label is None and lit >= self.page_model.positive
                    and self._domain_vetoed == (page.url, True))  # fmt: skip
            retrained = self.page_model.observe(words, lit, label, section, veto)
            if shared is not None:  # with its host and section for the others' contrast
                host, key = keyed if keyed is not None else (None, None)
                shared.publish_page(words, lit, label, key, host, raw)
        if keyed is not None:
            self._observe_contrast(words, raw, retrained, keyed)
        if self.link_model is not None and link and link.get("features"):
            outcome = relevance if label is None else float(label)
            prior = float(link.get("prior", 0.5))
            self.link_model.observe(prior, link["features"], outcome)
            if shared is not None:
                shared.publish_link(prior, link["features"], outcome)
        if shared is not None and shared.due():  # the other workers' pages and outcomes
            shared.sync(self.page_model, self.link_model, lc)

    def _observe_contrast(self, words: list[str], raw: float, retrained: bool,
                          keyed: tuple[str, str | None]) -> None:  # fmt: skip
        """The page joins the learned contrast's pages with its P_lit against the topic
        alone (``raw``); the contrast topics are rebuilt when the page model retrained
        (without one, or while it has not trained yet — no confident negatives — on the page
        model's schedule: every 10 pages, at least a quarter of the pages seen)."""
        lc = self.learned_contrast
        assert lc is not None
        lc.observe_keyed(*keyed, words, raw)
        self._contrast_since += 1
        untrained = self.page_model is None or self.page_model.trainings == 0
        due = untrained and retrain_due(self._contrast_since, lc.seen, 10)
        if retrained or due:
            self._contrast_since = 0
            self.evidence.set_contrast(self.fixed_contrast + lc.rebuild())

    def set_labels(self, labels: UserLabels) -> None:
        """A user's labels (the console's): they override the pseudo-label of a page and the
        outcome of the link that led to it."""
        self.labels = labels if len(labels) else None

    def observe_accepted(self, url: str) -> None:
        return None

    # -- re-judgement (relevance.learning.rejudge) ---------------------------------------------
    def last_judged(self, page_url: str) -> tuple[list[str], float] | None:
        """(candidate words, P_lit) of ``page_url`` when it is the page scored last."""
        if self._last is None or self._last[0] != page_url:
            return None
        return self._last[2], self._last[3]

    def hold_rejected(self, record: dict[str, Any], judged: tuple[list[str], float],
                      html: str | None, threshold: float) -> bool:  # fmt: skip
        """Keep a page that was not accepted (``record``: its item; ``judged``: its
        :meth:`last_judged`) to judge it again after the next retraining; not kept when
        re-judgement is off or when no P_model could lift it to ``threshold``
        (combine(P_lit, 1) below it). Returns whether it was kept."""
        words, lit = judged
        if self.rejudge is None or self._mix(lit, 1.0) < self.accept_cut(threshold):
            return False
        return self.rejudge.hold(record, words, lit, html=html)

    def rejudge_due(self) -> bool:
        """The page model was trained since the last re-judgement."""
        m = self.page_model
        return self.rejudge is not None and m is not None and m.trainings != self._rejudged_at

    def rejudge_pages(self, threshold: float) -> list[tuple[HeldPage, float, float | None]]:
        """Score the held pages with the current page model in one batch; those accepted at
        ``threshold`` (:meth:`accept_cut`) leave the buffer: (page, P(page), P_model). Empty
        when not due."""
        if not self.rejudge_due():
            return []
        assert self.rejudge is not None and self.page_model is not None
        self._rejudged_at = self.page_model.trainings

        def score(literals: list[float], bags: list[Bag]) -> list[tuple[float, float | None]]:
            models = self._model(bags, bags=True)
            return [(self._mix(lit, p), p) for lit, p in zip(literals, models, strict=True)]

        return self.rejudge.rejudge(score, self.accept_cut(threshold))

    # -- the final re-judgement (relevance.learning.final) ----------------------------------------
    def final_candidate(self, page_url: str, relevant: bool, threshold: float) -> bool | None:
        """Whether the page scored last (``page_url``) is held for the final re-judgement:
        None (not held: off, or rejected with literal evidence no page model could lift to
        ``threshold`` whatever the contrast topics, combine(P_lit against the topic alone, 1)
        below it), False (held without its HTML: accepted) or True (held with it)."""
        if self.final is None or self.final.done:
            return None
        if relevant:
            return False
        if self._last is None or self._last[0] != page_url:
            return None
        raw = self._raw[1] if self._raw is not None and self._raw[0] == page_url else self._last[3]
        return True if self._mix(raw, 1.0) >= self.accept_cut(threshold) else None

    def final_changes(self, threshold: float) -> list[Change]:
        """Judge the held pages again with the models as they are now, once: the pages whose
        decision at ``threshold`` (:meth:`acceptance`) changes (empty when off or done)."""
        if self.final is None:
            return []

        def rescore(page: Any) -> tuple[float, dict[str, float], bool]:
            r = page.record
            info = PageInfo(url=r.get("final_url") or r["url"], title=r.get("title"),
                            description=r.get("description"), keywords=r.get("keywords"),
                            text=page.text())  # fmt: skip
            p, parts = self.page_relevance_parts(info)
            return p, parts, self.acceptance(p) >= threshold

        return self.final.judge(rescore)

    def set_page_relevance(self, url: str, relevance: float, literal: float) -> None:
        """The relevance of the page whose links :meth:`score_links` scores next (a page
        judged again: its links are scored with its new P(page) as the holding page's)."""
        self._last = (url, relevance, [], literal)

    # -- links ------------------------------------------------------------------------------
    def _context_literal(self, lit: float, context: float) -> float:
        """A link's literal anchor evidence with its anchor context (``[learning]
        anchor_context``, in the prior): the larger of the two, so the context never lowers
        the link's own evidence."""
        if not self.context or self.context_feature:
            return lit
        return max(lit, context)

    def score_links(self, page: PageInfo, links: list[Link]) -> list[LinkScore]:
        if self._last is not None and self._last[0] == page.url:
            parent = self._last[1]
        else:
            head = self.words(self.description_text(page))
            parent = self._mix(self.evidence.page_probability(self.evidence.page(head, [])),
                               self._model([head])[0])  # fmt: skip
        judged = self._anchor_judgements([lk.anchor for lk in links])
        anchors = [j[0] for j in judged]
        lits = [j[1] for j in judged]
        models = [j[2] for j in judged]
        contexts = anchor_context(lits, self.context) if self.context else None
        out = []
        for i, (link, words, model) in enumerate(zip(links, anchors, models, strict=True)):
            lit = lits[i]
            ctx = contexts[i] if contexts is not None else 0.0
            feats = link_features(link.url, words)
            if self.context_feature:
                feats.append(context_feature(ctx))
            anchor = self._mix(self._context_literal(lit, ctx), model)
            prior = min(1.0, max(0.0, self.alpha * parent + self.beta * anchor))
            p = prior if self.link_model is None else self.link_model.probability(prior, feats)
            if page.is_seed:
                follow, reason = True, "from-seed"
            else:
                follow = p > self.threshold
                reason = "above-threshold" if follow else "below-threshold"
            breakdown: dict[str, Any] = {
                "method": "calibrated",
                "parent": round(parent, 4),
                "anchor": round(anchor, 4),
                "anchor_literal": round(lit, 4),
                "anchor_context": round(ctx, 4),
                "anchor_model": None if model is None else round(model, 4),
                "prior": round(prior, 4),
                "p": round(p, 4),
                "threshold": self.threshold,
                "from_seed": page.is_seed,
                "follow": follow,
                "reason": reason,
                "features": feats,
            }
            out.append(LinkScore(p, follow, breakdown))
        return out

    def _anchor_judgements(self, texts: Sequence[str]) -> list[tuple[list[str], float,
                                                                    float | None]]:  # fmt: skip
        """(candidate words, P_lit, P_model) of each anchor text, as :meth:`score_links` used
        to compute them a link at a time, memoised by text: a site's menu and headline anchors
        recur on every page. What decides them — the literal evidence's contrast topics and
        the page model's table and intercept — is replaced, never changed in place, when a
        model is rebuilt, so the memo holds while those objects are the same and is emptied
        when one is replaced (or at :data:`ANCHOR_MEMO` texts); texts longer than
        ``memo_chars`` are not memoised (as :meth:`words`)."""
        m = self.page_model
        by = (self.evidence.contrast, None if m is None else m.terms,
              0.0 if m is None else m.intercept)  # fmt: skip
        was = self._anchors_by
        memo = self._anchors
        if was is None or was[0] is not by[0] or was[1] is not by[1] or was[2] != by[2]:
            memo.clear()
            self._anchors_by = by
        out: list[tuple[list[str], float, float | None]] = [None] * len(texts)  # type: ignore[list-item]
        todo: list[int] = []
        for i, text in enumerate(texts):
            found = memo.get(text)
            if found is None:
                todo.append(i)
            else:
                out[i] = found
        if todo:
            words = [self.words(texts[i]) for i in todo]
            models = self._model(words)
            probability = self.evidence.anchor_probability
            if len(memo) + len(todo) > ANCHOR_MEMO:
                memo.clear()
            for i, w, model in zip(todo, words, models, strict=True):
                out[i] = found = (w, probability(w), model)
                if len(texts[i]) <= self.memo_chars:
                    memo[texts[i]] = found
        return out

    def rescore(self, link: dict, anchor: str) -> float | None:
        """The score of a queued link with the current models, from its stored breakdown
        (holding page P, anchor text, features); None when the breakdown lacks them."""
        try:
            parent, feats = float(link["parent"]), link["features"]
        except (KeyError, TypeError, ValueError):
            return None
        _, lit, model = self._anchor_judgements([anchor])[0]
        try:  # the neighbours' evidence when the link was found (0 when absent)
            ctx = float(link.get("anchor_context") or 0.0)
        except (TypeError, ValueError):
            ctx = 0.0
        anchor_p = self._mix(self._context_literal(lit, ctx), model)
        prior = min(1.0, max(0.0, self.alpha * parent + self.beta * anchor_p))
        return prior if self.link_model is None else self.link_model.probability(prior, feats)

    # -- state ------------------------------------------------------------------------------
    def learned_state(self) -> dict[str, Any]:
        """The models of the run, as JSON (stored with the run)."""
        out: dict[str, Any] = {}
        if self.page_model is not None:
            out["page_model"] = self.page_model.to_state()
        if self.link_model is not None:
            out["link_model"] = self.link_model.to_state()
        if self.learned_contrast is not None:
            out["learned_contrast"] = self.learned_contrast.to_state()
        return out


def anchor_context(literals: Sequence[float], window: int) -> list[float]:
    """Per link, the mean of the other links' anchor evidence within ``window`` places of it
    in document order (``literals``: P_lit(anchor) of a page's links in that order); 0 for a
    page's only link. Linear in the links: a sliding sum."""
    n = len(literals)
    if window <= 0 or n < 2:
        return [0.0] * n
    prefix = [0.0]
    for v in literals:
        prefix.append(prefix[-1] + v)
    out = []
    for i in range(n):
        lo, hi = max(0, i - window), min(n, i + window + 1)
        k = hi - lo - 1
        out.append((prefix[hi] - prefix[lo] - literals[i]) / k if k else 0.0)
    return out


def context_feature(context: float) -> str:
    """The link model's feature of a link's anchor context (``anchor_context_use =
    "feature"``): its calibrated value in three bins, below 0.2, below 0.5, at least 0.5."""
    return "c:hi" if context >= 0.5 else "c:mid" if context >= 0.2 else "c:lo"


#: the shipped generic contrast set: one words-only topic per THUCNews headline class
#: (``python bench/topicfiles.py --contrast``), named by ``[learning] contrast = "thucnews"``
GENERIC_CONTRAST = Path(__file__).resolve().parent.parent / "topics" / "contrast" / "thucnews"
#: a generic contrast topic sharing at least this share of its words with the topic is dropped
GENERIC_OVERLAP = 0.2


def contrast_weights(topic) -> list[dict[str, float]]:
    """The word weights of the topic's ``[learning] contrast`` topics: every topic file of a
    directory whose name is not the topic's, or the files of a comma-separated list;
    ``thucnews`` is the shipped generic set, less its topics that share at least
    ``GENERIC_OVERLAP`` of their words with the topic."""
    from relevance.topic import load_topic
    from topicrawl.errors import TopicFileError

    spec = topic.learning.contrast.strip()
    if not spec:
        return []
    paths = []
    generic: set[Path] = set()
    for part in (x.strip() for x in spec.split(",") if x.strip()):
        if part == "thucnews":
            found = sorted(GENERIC_CONTRAST.glob("*.toml"))
            generic.update(found)
            paths += found
            continue
        path = topic.resolve(part)
        assert path is not None
        if path.is_dir():
            paths += sorted(path.glob("*.toml"))
        elif path.exists():
            paths.append(path)
        else:
            raise TopicFileError(f"[learning] contrast: {path} is neither a topic file nor a "
                                 "directory of them; fix the path or leave contrast empty",
                                 path=str(topic.path) if topic.path else None)  # fmt: skip
    out = []
    for path in paths:
        other = load_topic(path)
        if other.name == topic.name or not other.weights:
            continue
        shared = len(set(other.weights) & set(topic.weights))
        if path in generic and shared >= GENERIC_OVERLAP * len(other.weights):
            continue
        out.append(dict(other.weights))
    return out


def seed_model(model: SelfTrainingPageModel, topic, extract) -> None:
    """Labelled examples (``[classifier]``), background negatives (``[learning] background``)
    and a saved model (``[learning] model``) seed the page model."""
    from relevance.classifier import CLASSIFIER_CODE, read_examples
    from topicrawl import modelcache

    lc = topic.learning
    c = topic.classifier
    describe = getattr(extract, "cache_key", None)
    code = ("relevance.calibrated", "relevance.classifier", "relevance.learning.background",
            *CLASSIFIER_CODE)  # fmt: skip

    def segmented(kind: str, parts: dict, files: list, read) -> dict:
        """The segmented examples of a file, through the start-up cache (topicrawl.modelcache):
        segmenting 10,000 headlines is most of this mode's start-up."""
        if describe is None or not modelcache.enabled():
            return read()
        try:
            key = modelcache.cache_key(kind, {**parts, "tokenize": describe()}, files=files,
                                       code=code)  # fmt: skip
        except OSError:  # a missing file: the reader names it
            return read()
        return modelcache.cached(kind, key, read)

    if c is not None:
        classes = topic.resolve(c.classes) if c.classes else None
        path = topic.resolve(c.examples)

        def read_labelled() -> dict:
            ex = read_examples(path, positive=c.positive, fmt=c.format, classes=classes)
            return {"docs": [extract(t) for t in ex.texts], "positive": ex.positive.tolist()}

        got = segmented("example-words", {"positive": sorted(c.positive), "format": c.format},
                        [path] + ([classes] if classes else []), read_labelled)  # fmt: skip
        model.add_examples(got["docs"], [bool(y) for y in got["positive"]])
    if lc.background:
        from relevance.learning.background import read_background

        bg = topic.resolve(lc.background)

        def read_bg() -> dict:
            return {"docs": [extract(t) for t in read_background(bg, limit=lc.background_limit)]}

        docs = segmented("background-words", {"limit": lc.background_limit}, [bg], read_bg)["docs"]
        model.add_examples(docs, [False] * len(docs), weight=lc.background_weight)
    if lc.model:
        saved = SelfTrainingPageModel.load(topic.resolve(lc.model))
        model.terms, model.intercept = saved.terms, saved.intercept  # type: ignore[attr-defined]
