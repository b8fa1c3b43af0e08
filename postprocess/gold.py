"""Gold main text for Chinese pages and token-level F1 against it.

Two sources of gold text:

- the local test web (``sitegen``): the generator knows every article's body (the ``body``
  paragraphs of the ground truth); a reprint's added editor's note and ``来源：``/``责任编辑：``
  lines (written by ``sitegen.reprint.make_reprint``) and the heading of an added commentary
  (``【记者观察】``…, ``sitegen.reprint.add_commentary``), recognised here by their exact
  generator formats, not by a cleaning rule, are boilerplate, not gold. So are the remnants
  of the source corpus's own web pages that THUCNews kept in its article texts (the
  generator renders them as body paragraphs): a related-news list from its
  ``相关新闻：``/``相关阅读：``/``相关报道：`` paragraph to the end, and a comment link
  ``我要评论`` at the very end;
- real pages from ``../shared/data/html`` with main text written by hand, one UTF-8 file per
  page under ``bench/gold/zh/`` named after the page's path (``news_zh/163/1.html`` →
  ``news_zh__163__1.txt``); the pages themselves stay in the shared data.

Token F1 is the article-extraction-benchmark's measure (bag of tokens: precision = common /
predicted, recall = common / gold, multiset intersection), with Chinese tokenised into
**characters**: every CJK character is a token, a run of Latin letters or of digits is one
token, punctuation and whitespace are not tokens. Empty gold and empty prediction score 1.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GOLD_DIR",
    "GoldDoc",
    "TokenScore",
    "gold_tokens",
    "real_gold",
    "sitegen_gold",
    "token_f1",
]

#: Hand-written gold text of the real pages (``news_zh__163__1.txt`` …).
GOLD_DIR = Path(__file__).resolve().parent.parent / "bench" / "gold" / "zh"

_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[A-Za-z\u00c0-\u024f]+|\d+")


def gold_tokens(text: str) -> list[str]:
    """Tokens for Chinese F1: CJK characters one by one, Latin words and digit runs whole,
    lower-cased; punctuation and whitespace dropped."""
    return [t.lower() for t in _TOKEN.findall(text or "")]


@dataclass(frozen=True)
class TokenScore:
    precision: float
    recall: float
    f1: float


def token_f1(predicted: str | None, gold: str) -> TokenScore:
    """Bag-of-tokens precision, recall and F1 of ``predicted`` against ``gold``."""
    p, g = Counter(gold_tokens(predicted or "")), Counter(gold_tokens(gold))
    if not p and not g:
        return TokenScore(1.0, 1.0, 1.0)
    common = sum((p & g).values())
    if not common:
        return TokenScore(0.0, 0.0, 0.0)
    prec, rec = common / sum(p.values()), common / sum(g.values())
    return TokenScore(prec, rec, 2 * prec * rec / (prec + rec))


@dataclass
class GoldDoc:
    """One page with its gold main text; ``group`` is the template (family a/b) or site."""

    name: str
    group: str
    family: str
    url: str | None
    body: bytes
    header_charset: str | None
    gold: str


def _reprint_extras() -> re.Pattern[str]:
    from sitegen.reprint import COMMENTARY_HEADINGS, EDITOR_NOTES

    notes = [re.escape(n).replace(re.escape("{src}"), r".{1,20}") for n in EDITOR_NOTES]
    heads = [re.escape(h) for h in COMMENTARY_HEADINGS]
    return re.compile(r"^(?:" + "|".join(notes + heads) + r"|来源：.{1,20}|责任编辑：.{1,8})$")


#: The source corpus's related-news list (a paragraph that starts with its heading) and
#: comment link at the end of an article text.
_SOURCE_RELATED = re.compile(r"^\s*相关(?:新闻|阅读|报道)\s*[:：]")
_SOURCE_COMMENT = re.compile(r"\s*我要评论\s*$")


def _source_remnants_cut(paras: list[str]) -> list[str]:
    """``paras`` without the source corpus's trailing related-news list and comment link."""
    for i, p in enumerate(paras):
        if _SOURCE_RELATED.match(p):
            paras = paras[:i]
            break
    if paras:
        last = _SOURCE_COMMENT.sub("", paras[-1])
        paras = [*paras[:-1], last] if last.strip() else paras[:-1]
    return paras


def sitegen_gold(web: Path) -> Iterator[GoldDoc]:
    """The article pages of a built local test web (family a or b) with their gold text."""
    from sitegen.build import article_bodies

    web = Path(web)
    truth = json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))
    family = truth.get("family", "a")
    templates = {s["host"]: s.get("template", "?") for s in truth["sites"]}
    extras = _reprint_extras()
    for url, page, body, header in article_bodies(web, truth):
        if "body" not in page:
            raise ValueError(f"{web} was built before the ground truth had article bodies")
        paras = [p for p in page["body"] if not (page.get("reprint_of") or page.get(
            "near_miss")) or not extras.match(p)]  # fmt: skip
        paras = _source_remnants_cut(paras)
        yield GoldDoc(url, templates[page["host"]], family, url, body, header, "\n".join(paras))


def real_gold(data_root: Path, gold_dir: Path = GOLD_DIR) -> Iterator[GoldDoc]:
    """The real pages of the shared data that have a hand-written gold file."""
    for path in sorted(gold_dir.glob("*.txt")):
        rel = path.stem.split("__")
        page = Path(data_root, "html", *rel[:-1], rel[-1] + ".html")
        site = rel[1] if rel[0] == "news_zh" else rel[-1].split(".")[0]
        yield GoldDoc(
            "/".join(rel) + ".html",
            site,
            rel[0],
            None,
            page.read_bytes(),
            None,
            path.read_text(encoding="utf-8").strip(),
        )


def crawl_text(doc: GoldDoc) -> tuple[str, str]:
    """What the crawl does with a page: decode it and extract the main text (the spider's
    ``topicrawl.extract.extract_page``); returns ``(html, text)``."""
    from topicrawl.extract import decode_html, extract_page

    html, _ = decode_html(doc.body, doc.header_charset)
    return html, extract_page(html, doc.url).text


@dataclass
class GroupScore:
    group: str
    family: str
    docs: int
    mean_f1: float
    share_95: float  # share of documents with F1 >= 0.95
    worst: list[tuple[str, float]]


def summarize(rows: list[tuple[GoldDoc, TokenScore]]) -> list[GroupScore]:
    """Mean F1, share of documents with F1 ≥ 0.95 and the three worst, per group."""
    groups: dict[tuple[str, str], list[tuple[GoldDoc, TokenScore]]] = {}
    for d, s in rows:
        groups.setdefault((d.family, d.group), []).append((d, s))
    out = []
    for (family, group), items in sorted(groups.items()):
        f1s = [s.f1 for _, s in items]
        worst = sorted(((d.name, s.f1) for d, s in items), key=lambda x: x[1])[:3]
        out.append(
            GroupScore(group, family, len(items), sum(f1s) / len(f1s),
                       sum(f >= 0.95 for f in f1s) / len(f1s), worst)  # fmt: skip
        )
    return out


# -- the article-extraction-benchmark's measure (English pages) ------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)


def shingle_counts(true: str, pred: str, n: int = 4) -> tuple[float, float, float]:
    """The article-extraction-benchmark's per-document (tp, fp, fn): multiset matching of
    ``n``-grams of ``\\w+`` tokens, normalised to sum 1 so long texts weigh no more."""

    def grams(text: str) -> Counter[tuple[str, ...]]:
        toks = _WORD.findall(text or "")
        return Counter(tuple(toks[i : i + n]) for i in range(max(1, len(toks) - n + 1))
                       if toks[i : i + n])  # fmt: skip

    t, p = grams(true), grams(pred)
    tp = float(sum((t & p).values()))
    fp, fn = float(sum((p - t).values())), float(sum((t - p).values()))
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s else (0.0, 0.0, 0.0)


def benchmark_prf(counts: list[tuple[float, float, float]]) -> TokenScore:
    """Mean precision and mean recall over documents, F1 of the two means (the benchmark's
    ``metrics_from_tp_fp_fns``)."""

    def prec(tp: float, fp: float, fn: float) -> float:
        return 1.0 if fp == fn == 0 else (0.0 if tp == fp == 0 else tp / (tp + fp))

    def rec(tp: float, fp: float, fn: float) -> float:
        return 1.0 if fp == fn == 0 else (0.0 if tp == fn == 0 else tp / (tp + fn))

    ps = [prec(*c) for c in counts if c[0] + c[1] > 0]
    rs = [rec(*c) for c in counts if c[0] + c[2] > 0]
    p = sum(ps) / len(ps) if ps else 0.0
    r = sum(rs) / len(rs) if rs else 0.0
    return TokenScore(p, r, 2 * p * r / (p + r) if p + r else 0.0)
