"""Contrast topics learned from the crawl itself (issue 10): the web's own sections.

``[learning] contrast`` (:mod:`relevance.evidence`) needs the word lists of the other topics a
page may belong to instead — the sibling sections of a portal — which a user's words-only
topic does not have. :class:`LearnedContrast` finds them among the pages the crawl fetched:

* **sections**: a page's section is the section its breadcrumb names (``当前位置：首页 >
  体育 > 正文``: the last link that is neither the page nor home,
  :func:`topicrawl.extract.breadcrumb_section`), keyed by the page's host and that link's
  path (:func:`section_key`: ``news.example.com/sports`` of ``/sports/index.html``) — sites
  whose article URLs name no section (``/article.php?id=7``, ``/a/3f9c…``) commonly have one;
  without a breadcrumb, its host and the first directory of its URL path
  (``news.example.com/sports`` of ``/sports/2019/04/11/938061.html``; :func:`url_section`);
  a URL without a directory (``/article.php?id=7``) has none. With ``meta`` (``[learning]
  section_meta``), a page without a breadcrumb takes the section its menu marks current
  (:func:`topicrawl.extract.nav_section`, keyed as a breadcrumb link), else the one its
  metadata states (OpenGraph ``article:section``, JSON-LD ``articleSection``:
  :func:`topicrawl.extract.meta_section`, a label keyed ``host/§label`` by
  :func:`label_key`), before its URL directory — the sections of sites whose URLs and
  pages name them nowhere else (``/a/3f9c…``, ``/posts/author-3/``). A host needs two sections of
  at least ``min_pages`` fetched pages, or it has no section structure: one group alone is
  the host's template, whose words are on every page of the host, the topic's pages too.
* **their evidence**: the mean literal topic-word probability P_lit (against the topic
  alone, without contrast) of a section's fetched pages. A section of at least ``min_pages``
  pages whose mean is at most ``ratio`` × the best section's becomes a **contrast topic**.
* **their words**: the ``top`` words most over-represented in the section's pages against
  the topic-positive pages (P_lit ≥ ``positive``) of the same host outside the contrast
  sections, by the z-score of the log-odds ratio with a Dirichlet prior (Monroe, Colaresi &
  Quinn 2008, "Fightin' words", eq. 16–22, on document frequencies); a word must occur in
  ``min_df`` of the section's pages. The topic's own words never count, nor do the host's
  template words (they are on its topic pages too). With ``against_crawl`` (off by default:
  not a held-out gain, docs/benchmarks/topics.md) a word must also be over-represented,
  by the same z-score and ``min_z``, against every kept page outside the contrast sections
  (all hosts): a word common across the crawl (发展, 提供, 了解), which a section of 5–10
  pages may hold more often than the host's few topic pages by chance, is no word of the
  section's own and would pull on-topic pages toward the contrast; a word's score is the
  lower of its two z-scores. A section whose host has fewer than
  ``min_pages`` topic-positive pages elsewhere (a section that mixes the topic with the
  rest, as a blog's ``/posts/``) is no contrast topic.

A web without such sections, or one whose sections all carry the topic's evidence alike (a
single-topic site), gets no contrast. :meth:`LearnedContrast.rebuild` runs when the page model
retrains (a geometric schedule: every 10 pages, then every quarter of the pages seen);
observing a page keeps its word set — nothing per link.

Tried and dropped on the choosing family (docs/benchmarks/topics.md, "Learned contrast"):
groups by k-means of the pages' words instead of URL sections (they mix categories and lose
recall), and sections inherited from the seed page's menu links (a focused crawl reaches
almost no page through a menu).
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from relevance.learning.base import LearnedModel, reservoir_put


def url_section(url: str) -> str | None:
    """``host/first-directory`` of a URL whose path has a directory (None: none)."""
    return _host_section(url)[1]


def _host_section(url: str) -> tuple[str, str | None]:
    """A URL's host and :func:`url_section`, from one parse."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    segs = parts.path.split("/")
    return host, (f"{host}/{segs[1]}" if len(segs) >= 3 and segs[1] else None)


#: a section link's last path segment that names the section's index page, not a section
_INDEX_FILE = re.compile(r"^(?:index|default|main)\.[a-z]{2,5}$", re.IGNORECASE)
#: the longest section key kept (a hostile page's breadcrumb link may be long)
MAX_SECTION_KEY = 200


def section_key(host: str, section_url: str) -> str | None:
    """The section key of a page of ``host`` whose breadcrumb names ``section_url``: the host
    and the link's path without its index file and trailing slash, then its query
    (``news.example.com/sports`` of ``http://news.example.com/sports/index.html``; another
    host's link keeps its host: ``news.example.com/sports.example.com/nba``). The key starts
    with the page's host, as :func:`url_section`'s do, and is cut at
    :data:`MAX_SECTION_KEY` characters; None for a link to a home page."""
    try:
        parts = urlsplit(section_url)
        target = parts.hostname or host
    except ValueError:
        return None
    path = parts.path
    head, _, last = path.rpartition("/")
    if _INDEX_FILE.match(last):
        path = head
    path = path.rstrip("/")
    if not path and not parts.query:
        return None
    where = path if target == host else f"/{target}{path}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{where}{query}"[:MAX_SECTION_KEY]


#: the mark between the host and a metadata label in a section key (no URL path has it
#: unescaped, so a label's key is never a URL section's)
LABEL_MARK = "§"


def label_key(host: str, label: str) -> str | None:
    """The section key of a page of ``host`` whose metadata states the section ``label``
    (``news.example.com/§娱乐``): the host, :data:`LABEL_MARK` and the label with blanks
    collapsed and case folded, cut at :data:`MAX_SECTION_KEY` characters; None for a blank
    label."""
    label = " ".join(label.split()).casefold()
    if not label:
        return None
    return f"{host}/{LABEL_MARK}{label}"[:MAX_SECTION_KEY]


class LearnedContrast(LearnedModel):
    """The fetched pages' sections and the contrast topics they yield."""

    kind: ClassVar[str] = "learned-contrast"

    def __init__(
        self,
        topic_words: Iterable[str],
        *,
        ratio: float = 0.7,
        min_pages: int = 5,
        positive: float = 0.7,
        top: int = 30,
        min_df: float = 0.2,
        prior: float = 0.5,
        min_z: float = 2.0,
        max_pages: int = 2000,
        max_words: int = 600,
        breadcrumbs: bool = True,
        meta: bool = False,
        against_crawl: bool = False,
        seed: int = 0,
    ):
        if not 0.0 <= ratio <= 1.0:
            raise ValueError(f"learned contrast ratio must be in [0, 1], not {ratio}")
        self.topic_words = frozenset(topic_words)
        self.ratio, self.min_pages, self.positive = ratio, max(1, min_pages), positive
        self.top, self.min_df, self.prior, self.min_z = top, min_df, prior, min_z
        self.max_pages, self.max_words = max_pages, max_words
        #: a page's section is the one its breadcrumb names, when it has one
        self.breadcrumbs = breadcrumbs
        #: without a breadcrumb, the section its menu marks current, else its metadata's
        self.meta = meta
        #: a contrast word must also stand out against the crawl's pages outside the sections
        self.against_crawl = against_crawl
        self._rng = random.Random(seed)
        #: the kept pages (a uniform sample): their host, their section, their words other
        #: than the topic's, their P_lit against the topic alone
        self.pages: list[tuple[str, str | None, frozenset[str], float]] = []
        self.seen = 0
        #: the last rebuild: every section's (pages, mean P_lit) and the contrast topics
        self.sections: dict[str, tuple[int, float]] = {}
        self.topics: dict[str, dict[str, float]] = {}
        self._keys: frozenset[str] = frozenset()
        self._keys_of: dict[str, dict[str, float]] | None = None

    def observe(self, url: str, words: Sequence[str], literal: float,
                section: str | None = None, nav: str | None = None,
                label: str | None = None) -> None:  # fmt: skip
        """A fetched page: its URL, its candidate words, its P_lit against the topic alone and
        the sections it names (:meth:`host_and_section`)."""
        self.observe_keyed(*self.host_and_section(url, section, nav, label), words, literal)

    def observe_keyed(self, host: str, section: str | None, words: Sequence[str],
                      literal: float) -> None:  # fmt: skip
        """:meth:`observe` with the page's host and section key found already
        (:meth:`host_and_section`)."""
        self.seen += 1
        reservoir_put(self.pages, (host, section, frozenset(words[: self.max_words])
                                   - self.topic_words, literal),
                      self.seen, self.max_pages, self._rng)  # fmt: skip

    def section_of(self, url: str, section: str | None = None, nav: str | None = None,
                   label: str | None = None) -> str | None:  # fmt: skip
        """The section key of a page (:meth:`host_and_section`); None: it has none."""
        return self.host_and_section(url, section, nav, label)[1]

    def host_and_section(self, url: str, section: str | None, nav: str | None = None,
                         label: str | None = None) -> tuple[str, str | None]:  # fmt: skip
        """A page's host and section key, from one parse of its URL: :func:`section_key` of
        the section its breadcrumb names (``section``, with ``breadcrumbs``); with ``meta``,
        else of its menu's current item (``nav``), else :func:`label_key` of the section its
        metadata states (``label``); else :func:`url_section`."""
        host, by_url = _host_section(url)
        key = section_key(host, section) if section and self.breadcrumbs else None
        if key is None and self.meta:
            key = section_key(host, nav) if nav else None
            if key is None and label:
                key = label_key(host, label)
        return host, key or by_url

    @property
    def contrast_keys(self) -> frozenset[str]:
        """The sections that are contrast topics since the last :meth:`rebuild` (made again
        only when the topics were replaced: the page model asks every page)."""
        if self._keys_of is not self.topics:
            self._keys, self._keys_of = frozenset(self.topics), self.topics
        return self._keys

    def contrast_sections(self, sections: Mapping[str, tuple[int, float]]) -> list[str]:
        """The sections of at least ``min_pages`` pages whose mean P_lit is at most ``ratio``
        × the best such section's, on hosts with two such sections or more."""
        ev = {s: m for s, (n, m) in sections.items() if n >= self.min_pages}
        best = max(ev.values(), default=0.0)
        if len(ev) < 2 or best <= 0.0:
            return []
        hosts = Counter(s.split("/", 1)[0] for s in ev)
        return sorted(s for s, m in ev.items()
                      if m <= self.ratio * best and hosts[s.split("/", 1)[0]] >= 2)  # fmt: skip

    def rebuild(self) -> list[dict[str, float]]:
        """Recompute the sections' evidence and the contrast topics; their word weights (all
        1), one dict a topic (empty: no contrast)."""
        sizes: Counter = Counter()
        sums: Counter = Counter()
        for _, s, _, lit in self.pages:
            if s is not None:
                sizes[s] += 1
                sums[s] += lit
        self.sections = {s: (n, sums[s] / n) for s, n in sizes.items()}
        contrast = self.contrast_sections(self.sections)
        dfs: dict[str, Counter] = {s: Counter() for s in contrast}
        hosts = {s.split("/", 1)[0] for s in contrast}
        ref_df: dict[str, Counter] = {h: Counter() for h in hosts}  # the host's positives
        ref_n: Counter = Counter()
        rest_df: Counter = Counter()  # every page outside the contrast sections
        rest_n = 0
        for host, s, words, lit in self.pages:
            if s in dfs:
                dfs[s].update(words)
                continue
            if self.against_crawl:
                rest_df.update(words)
                rest_n += 1
            if host in ref_df and lit >= self.positive:
                ref_df[host].update(words)
                ref_n[host] += 1
        topics: dict[str, dict[str, float]] = {}
        for s in contrast:
            host = s.split("/", 1)[0]
            if ref_n[host] < self.min_pages:  # the host's topic pages are in the section
                continue
            rest = (rest_df, rest_n) if self.against_crawl else (None, 0)
            words = self.distinctive(dfs[s], sizes[s], ref_df[host], ref_n[host], *rest)
            if words:
                topics[s] = {w: 1.0 for w in words}
        self.topics = topics
        return list(topics.values())

    def distinctive(self, df: Mapping[str, int], n: int, ref_df: Mapping[str, int],
                    ref_n: int, rest_df: Mapping[str, int] | None = None,
                    rest_n: int = 0) -> list[str]:  # fmt: skip
        """The ``top`` words of a section's pages (``df`` of ``n`` pages) most over-represented
        against the reference pages (``ref_df`` of ``ref_n``) and, when given, against the rest
        of the crawl (``rest_df`` of ``rest_n``), by the z-score of the log-odds ratio with a
        Dirichlet prior (Monroe et al. 2008); in at least ``min_df`` of the pages, the lower
        z-score ≥ ``min_z``."""
        floor = max(2, math.ceil(self.min_df * n))
        scored = []
        for w, c in df.items():
            if c < floor or w in self.topic_words:
                continue
            z = self.log_odds_z(c, n, ref_df.get(w, 0), ref_n)
            if rest_df is not None and rest_n > 0 and z >= self.min_z:
                z = min(z, self.log_odds_z(c, n, rest_df.get(w, 0), rest_n))
            if z >= self.min_z:
                scored.append((z, w))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [w for _, w in scored[: self.top]]

    def log_odds_z(self, c: int, n: int, r: int, ref_n: int) -> float:
        """The z-score of the log-odds ratio of a word in ``c`` of ``n`` pages against ``r``
        of ``ref_n``, with a Dirichlet prior ``prior`` (Monroe et al. 2008, eq. 16–22)."""
        a = self.prior
        r = min(r, ref_n)
        delta = math.log((c + a) / (n - c + a)) - math.log((r + a) / (ref_n - r + a))
        return delta / math.sqrt(1 / (c + a) + 1 / (n - c + a) + 1 / (r + a) + 1 / (ref_n - r + a))

    # -- state ------------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The sections and contrast topics of the last rebuild (not the pages)."""
        return {"kind": self.kind, "ratio": self.ratio, "seen": self.seen,
                "sections": {s: [n, round(m, 4)] for s, (n, m) in self.sections.items()},
                "topics": {s: sorted(t) for s, t in self.topics.items()}}  # fmt: skip

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> LearnedContrast:
        model = cls((), ratio=float(state["ratio"]))
        model.seen = int(state.get("seen", 0))
        model.sections = {str(s): (int(n), float(m)) for s, (n, m) in state["sections"].items()}
        model.topics = {str(s): {str(w): 1.0 for w in ws} for s, ws in state["topics"].items()}
        return model
