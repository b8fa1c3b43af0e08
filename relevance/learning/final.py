"""The final re-judgement: the fetched pages judged again with the crawl's last models.

In calibrated mode a page is judged once, when it is fetched, by the models of that moment:
the first pages by their literal evidence alone (before the self-trained page model's first
training), later ones before the learned contrast has found their sibling section. At the
crawl's end the models have seen the whole crawl. Nigam et al. (2000) label every unlabelled
document again after each EM step with the final classifier; this is the last such step for
the crawl's own decisions: every held page is scored again (P(page) from scratch: the literal
evidence against the contrast topics as they are at the end, and the last page model), and a
page whose decision changes is handed back to the spider, which sends it through the item
pipeline once more: an accepted page the last models reject leaves the corpus (*revoked*), a
rejected page they accept joins it (*late acceptance*, through dedup and cleaning like any
page).

Measured offline before it was built, on replays of recorded crawls
(``python bench/topics.py final``; docs/benchmarks/topics.md): held out (family b seeds
35–37, 30 crawls) page precision +0.017 ± 0.006 at recall −0.004 ± 0.008.

Memory is bounded: the first ``max_pages`` pages judged (the earliest were judged by the least
trained models; later pages are counted as ``unheld``, not kept), at most ``max_bytes`` in
all, each as its item fields and its main text compressed (zlib); the HTML (compressed) only
of a rejected page that some page model could lift over the threshold (the cleaner reads it
when the page joins the corpus; an accepted page's stored row keeps its own). The store
reports what became of each page (:meth:`FinalJudgement.outcome`): only a page in the corpus
can leave it, only a page rejected as off-topic (not a duplicate) can join it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from relevance.learning.rejudge import KEPT_FIELDS, pack, unpack

#: what the store made of a page: not reported yet, in the corpus, not in it
UNKNOWN, IN_CORPUS, NOT_IN_CORPUS = None, True, False


@dataclass
class FinalPage:
    """A fetched page held for the final re-judgement."""

    record: dict[str, Any]
    relevant: bool  # the page decision when it was fetched
    text_z: bytes
    html_z: bytes | None
    stored: bool | None = UNKNOWN  # the store's outcome (in the corpus or not)

    @property
    def url(self) -> str:
        return self.record["url"]

    @property
    def size(self) -> int:
        """Approximate bytes held (compressed texts, the item fields)."""
        return len(self.text_z) + len(self.html_z or b"") + 512

    def text(self) -> str:
        return unpack(self.text_z) or ""

    def html(self) -> str | None:
        return unpack(self.html_z)


@dataclass(frozen=True)
class Change:
    """A page whose decision the last models change: ``accepted`` is the new decision."""

    page: FinalPage
    relevance: float
    parts: dict[str, float]
    accepted: bool


class FinalJudgement:
    """The fetched pages of a crawl, judged again once at its end (module docstring)."""

    def __init__(self, max_pages: int = 20_000, *, max_bytes: int = 48 * 1024 * 1024):
        if max_pages < 1:
            raise ValueError(f"max_pages must be at least 1, not {max_pages}")
        self.max_pages, self.max_bytes = max_pages, max_bytes
        self.pages: dict[str, FinalPage] = {}
        self.bytes = 0
        self.unheld = 0  # pages judged after the caps were reached: not judged again
        self.unknown = 0  # pages whose store outcome was not known at the end
        self.judged = 0
        self.revoked = 0
        self.accepted = 0
        self.done = False

    def __len__(self) -> int:
        return len(self.pages)

    def hold(self, record: Mapping[str, Any], relevant: bool, *, html: str | None) -> bool:
        """Keep a page judged at fetch (``record``: its item's fields; ``relevant``: the
        decision; ``html``: None unless it may join the corpus later). False when the caps
        are reached (the page is counted in ``unheld``) or the judgement is done."""
        if self.done:
            return False
        url = record["url"]
        old = self.pages.get(url)
        if old is None and len(self.pages) >= self.max_pages:  # full: nothing compressed
            self.unheld += 1
            return False
        page = FinalPage(record={k: record.get(k) for k in KEPT_FIELDS}, relevant=relevant,
                         text_z=pack(record.get("text") or "") or b"",
                         html_z=pack(html))  # fmt: skip
        if old is None and self.bytes + page.size > self.max_bytes:
            self.unheld += 1
            return False
        if old is not None:  # the same URL judged again (a rejudged page): the last judgement
            self.bytes -= old.size
        self.pages[url] = page
        self.bytes += page.size
        return True

    def refresh(self, record: Mapping[str, Any]) -> None:
        """Take the item fields of a held page again (set after it was held: its WARC place);
        its texts are not read again."""
        page = self.pages.get(record["url"])
        if page is not None:
            page.record = {k: record.get(k) for k in KEPT_FIELDS}

    def outcome(self, url: str, in_corpus: bool) -> None:
        """What the store made of a held page: in the corpus (a document) or not (off-topic,
        a duplicate, cleaned away)."""
        page = self.pages.get(url)
        if page is not None:
            page.stored = bool(in_corpus)

    def judge(self, rescore: Callable[[FinalPage], tuple[float, dict[str, float], bool]]
              ) -> list[Change]:  # fmt: skip
        """Score every held page again (``rescore``: (P(page), its parts, accepted) with the
        last models) once; the pages whose decision changes, in the order they were held:
        a page in the corpus now rejected (revoked), a page rejected as off-topic now
        accepted (late acceptance). A relevant page the store kept out (a duplicate, cleaned
        away) stays out; a page whose outcome the store has not reported is left as it is
        (``unknown``). The held pages are released."""
        if self.done:
            return []
        self.done = True
        changes = []
        for page in self.pages.values():
            if page.relevant and page.stored is not IN_CORPUS:
                if page.stored is UNKNOWN:
                    self.unknown += 1
                continue  # a duplicate or cleaned away: the last models do not change that
            if not page.relevant and page.stored is UNKNOWN:
                self.unknown += 1
                continue
            p, parts, accepted = rescore(page)
            self.judged += 1
            if accepted != page.relevant:
                changes.append(Change(page, p, parts, accepted))
        self.revoked = sum(1 for c in changes if not c.accepted)
        self.accepted = len(changes) - self.revoked
        self.pages = {}
        self.bytes = 0
        return changes
