"""Re-judgement of rejected pages when the self-trained page model is retrained.

In calibrated mode a page is judged once, when it is fetched: P(page) = combine(P_lit,
P_model) against ``[page] threshold``. Before the page model's first training P_model is
absent and P(page) is P_lit alone, and every later training changes P_model; a page that was
off-topic to an early model stays rejected although the model learned since would accept it
(recall lost early in a crawl). Nigam et al. 2000 label the unlabelled documents again at every
EM step; this is that step for the crawl's own decisions: a bounded set of recently rejected
pages is kept and, after each retraining, scored again with the new model in one batch — P_lit
does not change (the literal evidence is the topic's words), only P_model. Those at or above
the threshold are handed back to the spider, which accepts them through the same dedup and
store path as any page (``crawler.spiders.topic.TopicSpider``).

Memory is bounded: at most ``max_pages`` pages (the oldest leave first), each as the counts of
its first ``max_words`` candidate words (:func:`relevance.learning.selftrain.bag`, as the
page model's reservoir keeps them), its item fields, and its main text and HTML compressed
(zlib; the store pipeline's cleaner reads the HTML, and the stored row keeps it), at most
``max_bytes`` in all. A page that no page model could lift to the threshold (combine(P_lit, 1)
below it) is not kept. Pages are never un-accepted.
"""

from __future__ import annotations

import base64
import json
import logging
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from relevance.learning.selftrain import Bag, bag, bag_counts, bag_of_counts
from topicrawl.files import write_atomic

log = logging.getLogger(__name__)

#: item fields kept for a held page (all but the page's HTML, text and judgement)
KEPT_FIELDS = ("url", "final_url", "host", "status", "fetched_at", "depth", "parent_url",
               "anchor", "title", "description", "keywords", "language", "charset",
               "published", "link_score", "relevance", "relevance_parts", "etag",
               "last_modified", "content_type", "recrawled", "warc_file", "warc_offset",
               "warc_length")  # fmt: skip

#: the buffer's file in JOBDIR (written at close, read at a resume)
HELD_FILE = "topicrawl-rejudge.json"


@dataclass
class HeldPage:
    """A rejected page kept for re-judgement."""

    url: str
    words: Bag
    literal: float
    record: dict[str, Any]
    text_z: bytes
    html_z: bytes | None

    @property
    def size(self) -> int:
        """Approximate bytes held (compressed texts, the word counts)."""
        return len(self.text_z) + len(self.html_z or b"") + 8 * len(self.words[0]) + 512

    def text(self) -> str:
        return unpack(self.text_z) or ""

    def html(self) -> str | None:
        return unpack(self.html_z)


def pack(s: str | None) -> bytes | None:
    """A text held in memory: zlib-compressed UTF-8 (None stays None)."""
    return None if s is None else zlib.compress(s.encode("utf-8"), 6)


def unpack(z: bytes | None) -> str | None:
    """The text of :func:`pack`."""
    return None if z is None else zlib.decompress(z).decode("utf-8")


class RejudgeBuffer:
    """Recently rejected pages, scored again after every retraining of the page model."""

    def __init__(self, max_pages: int = 2000, *, max_words: int = 2000,
                 max_bytes: int = 64 * 1024 * 1024, min_literal: float = 0.0):  # fmt: skip
        if max_pages < 1:
            raise ValueError(f"max_pages must be at least 1, not {max_pages}")
        self.max_pages, self.max_words, self.max_bytes = max_pages, max_words, max_bytes
        #: a page whose P_lit is below this is not kept (its literal evidence is too weak
        #: for a re-judgement to be trusted: the page model confuses sibling categories)
        self.min_literal = min_literal
        self.pages: OrderedDict[str, HeldPage] = OrderedDict()
        self.bytes = 0
        self.held = 0  # pages ever kept
        self.evicted = 0  # pages that left unjudged (the cap)
        self.accepted = 0  # pages accepted on re-judgement
        self.rounds = 0  # re-judgements (one per retraining)

    def __len__(self) -> int:
        return len(self.pages)

    def __contains__(self, url: object) -> bool:
        return url in self.pages

    def hold(self, record: Mapping[str, Any], words: Sequence[str], literal: float, *,
             html: str | None) -> bool:  # fmt: skip
        """Keep a rejected page: its item fields (``record``, a PageItem's), its candidate
        words, P_lit, and its HTML (None: a document, no links). Returns False (not kept)
        when P_lit is below ``min_literal`` or the page alone is larger than ``max_bytes``."""
        if literal < self.min_literal:
            return False
        url = record["url"]
        held = HeldPage(
            url=url,
            words=bag(words[: self.max_words]),
            literal=float(literal),
            record={k: record.get(k) for k in KEPT_FIELDS},
            text_z=pack(record.get("text") or "") or b"",
            html_z=pack(html),
        )
        if held.size > self.max_bytes:
            return False
        self._drop(url)
        self.pages[url] = held
        self.bytes += held.size
        self.held += 1
        self.evicted += self._trim()
        return True

    def _trim(self) -> int:
        """Drop the oldest pages while over ``max_pages`` or ``max_bytes``; how many."""
        dropped = 0
        while len(self.pages) > self.max_pages or self.bytes > self.max_bytes:
            self._drop(next(iter(self.pages)))
            dropped += 1
        return dropped

    def _drop(self, url: str) -> HeldPage | None:
        held = self.pages.pop(url, None)
        if held is not None:
            self.bytes -= held.size
        return held

    def rejudge(
        self,
        score: Callable[[list[float], list[Bag]], list[tuple[float, float | None]]],
        threshold: float,
    ) -> list[tuple[HeldPage, float, float | None]]:
        """Score every held page again in one batch — ``score(literals, bags)`` gives
        (P(page), P_model or None) per page with the current model
        (:meth:`~relevance.learning.selftrain.SelfTrainingPageModel.probability_bags`)
        — and take out those at or above ``threshold``: (page, P(page), P_model), oldest
        first."""
        self.rounds += 1
        if not self.pages:
            return []
        held = list(self.pages.values())
        scores = score([h.literal for h in held], [h.words for h in held])
        out = []
        for h, (p, model) in zip(held, scores, strict=True):
            if p >= threshold:
                self._drop(h.url)
                out.append((h, p, model))
        self.accepted += len(out)
        return out

    # -- state (JOBDIR) ---------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        """The held pages as JSON (compressed texts in base64), for a JOBDIR resume."""

        def b64(b: bytes | None) -> str | None:
            return None if b is None else base64.b64encode(b).decode("ascii")

        pages = []
        for h in self.pages.values():
            rec = dict(h.record)
            if isinstance(rec.get("fetched_at"), datetime):
                rec["fetched_at"] = rec["fetched_at"].isoformat()
            pages.append({"words": bag_counts(h.words), "literal": h.literal, "record": rec,
                          "text": b64(h.text_z), "html": b64(h.html_z)})  # fmt: skip
        return {"kind": "rejudge-buffer", "v": 1, "pages": pages,
                "counters": [self.held, self.evicted, self.accepted, self.rounds]}  # fmt: skip

    def load_state(self, state: Any) -> int:
        """Take the pages of a :meth:`to_state` (validated whole first: ValueError, nothing
        changed); returns how many were restored. The caps of this buffer apply."""
        if not isinstance(state, dict) or state.get("kind") != "rejudge-buffer":
            raise ValueError("not a re-judgement buffer")
        raw = state.get("pages")
        if not isinstance(raw, list):
            raise ValueError("bad pages")
        parsed = []
        try:
            for entry in raw[-self.max_pages :]:
                rec = dict(entry["record"])
                if not isinstance(rec.get("url"), str) or set(rec) - set(KEPT_FIELDS):
                    raise ValueError("bad record")
                if isinstance(rec.get("fetched_at"), str):
                    rec["fetched_at"] = datetime.fromisoformat(rec["fetched_at"])
                counts = entry["words"]
                if not all(isinstance(w, str) and type(k) is int and k > 0
                           for w, k in counts.items()):  # fmt: skip
                    raise ValueError("bad word counts")
                literal = float(entry["literal"])
                text_z = base64.b64decode(entry["text"]) if entry["text"] else b""
                html_z = base64.b64decode(entry["html"]) if entry["html"] else None
                for z in (text_z, html_z):  # readable now, not at the re-judgement
                    if z:
                        zlib.decompress(z).decode("utf-8")
                parsed.append(HeldPage(rec["url"], bag_of_counts(counts), literal, rec,
                                       text_z, html_z))  # fmt: skip
        except (KeyError, TypeError, AttributeError, ValueError, zlib.error) as exc:
            raise ValueError(f"bad held page: {exc}") from None
        for h in parsed:
            self._drop(h.url)
            self.pages[h.url] = h
            self.bytes += h.size
        self._trim()
        counters = state.get("counters")
        if (
            isinstance(counters, list)
            and len(counters) == 4
            and all(type(x) is int and x >= 0 for x in counters)
        ):
            self.held, self.evicted, self.accepted, self.rounds = counters
        return len(parsed)


def save_held(jobdir: str | Path, buffer: RejudgeBuffer) -> Path:
    """Write the held pages to ``JOBDIR/topicrawl-rejudge.json`` (atomically)."""
    return write_atomic(Path(jobdir) / HELD_FILE,
                        json.dumps(buffer.to_state(), ensure_ascii=False))  # fmt: skip


def load_held(jobdir: str | Path, buffer: RejudgeBuffer) -> int:
    """Read the held pages of a stopped crawl back (a resume); a missing file restores
    nothing, a malformed one is refused whole (logged). Returns the pages restored."""
    path = Path(jobdir) / HELD_FILE
    if not path.is_file():
        return 0
    try:
        return buffer.load_state(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        log.warning("rejected pages to judge again not restored from %s: %s", path, exc)
        return 0
