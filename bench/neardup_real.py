"""Build a labelled near-duplicate set from REAL pages: article bodies placed into other real
pages' templates, with the edits reprinting sites make.

    python bench/neardup_real.py --out bench/out/neardup_real [--seed 1] [--cnews 240]

Templates: the real article pages of ``data_path("html", "news_zh")`` (13 sites) and
``data_path("html", "trafilatura_zh")``. In each page the element that holds the article
(the deepest element holding ≥ 80% of the paragraph text that the crawl's extraction finds)
is emptied and refilled with another article's paragraphs; ``<title>`` (its longest part,
the site name kept) and the ``<h1>`` get the new title. Every other part of the page (menus,
related links, footers, the site's own boilerplate) stays. A template is kept only if the
crawl's extraction (``topicrawl.extract.extract_page``) finds ≥ 80% of an inserted test body
again, so a template whose layout the extractor cannot read is not blamed on dedup.

Template *sites* are split at random (seed) into ``tune`` and ``unseen``; every pair uses
templates of one split only: parameters are chosen on ``tune`` pairs, figures reported on
``unseen`` pairs (``pairs_tune.jsonl``, ``pairs_unseen.jsonl``).

Bodies: the real pages' own main texts (``news_zh``, ``trafilatura_zh``) and ``--cnews``
articles of ``corpus/cnews_train.txt`` (10 categories, for same-category negatives).

For each body X (original page: X in template A):

* positive ``reprint``: X in template B of another site with reprint edits
  (``sitegen.reprint.make_reprint``: editor's note, source and editor lines, moved paragraph
  breaks, a few edited characters, rewritten title) and, at random, any of: the last
  paragraphs cut (≤ 20% of the text), advertisement lines inserted between paragraphs,
  the whole page in traditional characters (OpenCC s2t), paragraphs merged or split again;
* negative ``same_category``: another article of the same cnews category (or another real
  page for real bodies) in template B (same event / same topic, different article);
* negative ``same_template``: another article in template A itself (same boilerplate).

Also writes ``antecedent_pages/``: People's Daily pseudo-articles, cnews articles and the
real bodies in the tuning templates, for ``topicrawl dedup learn-antecedents``.

Writes ``pages/*.html``, ``pairs_tune.jsonl``, ``pairs_unseen.jsonl`` (``{"a", "b",
"label", "kind", "edits"}``, paths relative to the file) and ``templates.json``.
Output goes to ``bench/out/`` (gitignored); the pages stay in ``../shared``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import lxml.html  # noqa: E402
from lxml import etree  # noqa: E402

from sitegen.articles import Article, load_articles, split_paragraphs  # noqa: E402
from sitegen.reprint import make_reprint  # noqa: E402
from topicrawl.data import data_path  # noqa: E402
from topicrawl.extract import decode_html, extract_page  # noqa: E402

ADS = (
    "【广告】扫码关注官方微信，第一时间获取最新资讯！",
    "点击下载客户端，阅读更多精彩内容>>",
    "特别推荐：限时优惠活动火热进行中，详情请点击进入。",
    "（本文来源于网络，如有侵权请联系删除）",
    "更多精彩内容，请关注本站微博和微信公众号。",
    "相关阅读：今日热点新闻一览",
)
_WS = re.compile(r"\s+")
_SEP = re.compile(r"(\s*[|｜_＿—–－-]+\s*)")


def _norm(text: str) -> str:
    return _WS.sub("", text or "")


@dataclass
class Template:
    """A real page with its article element located."""

    name: str
    site: str
    html: str

    def fill(self, title: str, paragraphs: list[str]) -> str:
        """The page with its article element, ``<title>`` and ``<h1>`` replaced."""
        root = lxml.html.fromstring(self.html)
        node = _article_node(root)
        if node is None:
            raise ValueError(f"{self.name}: no article element")
        attrib = dict(node.attrib)
        tail = node.tail
        node.clear()
        node.attrib.update(attrib)
        node.tail = tail
        for para in paragraphs:
            p = etree.SubElement(node, "p")
            p.text = para
        for t in root.xpath("//title"):
            t.text = _swap_theme(t.text_content(), title)
            for child in list(t):
                t.remove(child)
        for h in root.xpath("//h1")[:1]:
            for child in list(h):
                h.remove(child)
            h.text = title
        for m in root.xpath("//meta[@name='description' or @property='og:description']"):
            m.set("content", paragraphs[0][:100] if paragraphs else "")
        for m in root.xpath("//meta[@charset or @http-equiv]"):
            m.getparent().remove(m)
        head = root.find("head")
        if head is not None:
            meta = etree.Element("meta", charset="utf-8")
            head.insert(0, meta)
        return lxml.html.tostring(root, encoding="unicode", doctype="<!DOCTYPE html>")


def _swap_theme(old: str, title: str) -> str:
    parts = [p for p in _SEP.split(old or "") if p]
    words = [i for i, p in enumerate(parts) if not _SEP.fullmatch(p)]
    if not words:
        return title
    longest = max(words, key=lambda i: len(parts[i].strip()))
    parts[longest] = title
    return "".join(parts)


def _article_node(root) -> etree._Element | None:
    """The deepest element holding ≥ 80% of the text of the page's <p> elements (mostly the
    article), after the extraction picked them as main text (see :func:`load_template`)."""
    paras = [p for p in root.iter("p") if len(_norm(p.text_content())) >= 15]
    if not paras:
        return None
    weight: dict = defaultdict(int)
    total = 0
    for p in paras:
        n = len(_norm(p.text_content()))
        total += n
        for anc in p.iterancestors():
            weight[anc] += n
    best = None
    for node, w in weight.items():
        if w >= 0.8 * total and node.tag not in ("html", "body"):
            depth = sum(1 for _ in node.iterancestors())
            if best is None or depth > best[0]:
                best = (depth, node)
    if best is None:
        cands = [n for n in weight if n.tag not in ("html", "body")]
        if not cands:
            return None
        return max(cands, key=lambda n: weight[n])
    return best[1]


def load_real_pages() -> list[tuple[str, str, str]]:
    """``(name, site, html)`` of every real article page (list pages excluded)."""
    out = []
    news = data_path("html", "news_zh")
    for path in sorted(news.glob("*/*.html")):
        if path.parent.name == "list_pages":
            continue
        html, _ = decode_html(path.read_bytes())
        out.append((f"{path.parent.name}/{path.stem}", path.parent.name, html))
    for path in sorted(data_path("html", "trafilatura_zh").glob("*.html")):
        html, _ = decode_html(path.read_bytes())
        site = path.name.split(".")[0]
        out.append((f"traf/{path.stem}", f"traf-{site}", html))
    return out


TEST_BODY = [
    "这是一段用来检验模板的测试正文，它描述了一座城市在过去一年里的交通变化和市民的出行方式。",
    "地铁新线路开通以后，早高峰的拥堵明显缓解，公交线路也随之调整，更多的人选择步行和骑车。",
    "市交通部门表示，明年还将继续优化线路，增加夜间班次，并在主要路口设置更多的非机动车道。",
]


def load_template(name: str, site: str, html: str) -> Template | None:
    """A usable template, or None when the extraction cannot read an inserted body back."""
    tpl = Template(name, site, html)
    try:
        page = tpl.fill("模板检验用的一条新闻标题", TEST_BODY)
    except (ValueError, etree.ParserError):
        return None
    got = _norm(extract_page(page).text)
    want = _norm("".join(TEST_BODY))
    found = sum(len(_norm(p)) for p in TEST_BODY if _norm(p) in got)
    return tpl if found >= 0.8 * len(want) else None


def real_bodies(pages: list[tuple[str, str, str]]) -> list[Article]:
    """The real pages' main texts as articles (category ``real``)."""
    out = []
    for name, _site, html in pages:
        ex = extract_page(html)
        # the article's sentences only: menus and link lists the extraction kept are dropped
        paras = [
            p.strip()
            for p in ex.text.split("\n")
            if len(_norm(p)) >= 40 or (len(_norm(p)) >= 15 and re.search("[。！？]", p))
        ]
        if sum(len(_norm(p)) for p in paras) < 200 or not ex.title:
            continue
        if len(paras) < 2:
            paras = split_paragraphs("".join(paras))
        title = max((p for p in _SEP.split(ex.title) if not _SEP.fullmatch(p)), key=len).strip()
        art_id = f"real-{name.replace('/', '-')}"
        out.append(Article(art_id, "real", title, paras, None, date(2020, 1, 1)))
    return out


def _t2s():
    import opencc

    return opencc.OpenCC("s2t")


def reprint(art: Article, rng: random.Random, conv) -> tuple[Article, list[str]]:
    """A reprint of ``art`` with the basic reprint edits plus a random subset of the others."""
    rep = make_reprint(art, rng, edits=rng.randint(1, 4))
    edits = ["note/source/editor", "rebreak", "chars", "title"]
    paras = list(rep.paragraphs)
    body = [p for p in paras if not p.startswith(("来源：", "责任编辑："))]
    tail = paras[len(body) :]
    if rng.random() < 0.35:  # truncation: drop trailing paragraphs, at most 20% of the text
        total = sum(len(p) for p in body)
        cut = 0
        while len(body) > 2 and cut + len(body[-1]) <= 0.2 * total:
            cut += len(body.pop())
        if cut:
            edits.append("truncated")
    if rng.random() < 0.4:  # inserted ads
        for _ in range(rng.randint(1, 3)):
            body.insert(rng.randint(1, max(1, len(body) - 1)), rng.choice(ADS))
        edits.append("ads")
    if rng.random() < 0.3:  # re-paragraphing: everything re-split to other lengths
        body = split_paragraphs("".join(body), target=rng.choice((80, 240, 400)))
        edits.append("reparagraph")
    title = rep.title
    paras = body + tail
    if rng.random() < 0.15:
        paras = [conv.convert(p) for p in paras]
        title = conv.convert(title)
        edits.append("traditional")
    return rep.with_changes(title=title, paragraphs=paras), edits


def peoples_daily_articles(per_article: int = 6) -> list[Article]:
    """People's Daily (January 1998, segmented) as pseudo-articles of ``per_article``
    consecutive paragraphs (the file has no article boundaries), first line as the title."""
    path = data_path("corpus", "peoples_daily_199801.txt")
    lines = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            words = [tok.rsplit("/", 1)[0] for tok in line.split()]
            if words:
                lines.append("".join(words))
    out = []
    for i in range(0, len(lines) - per_article, per_article):
        chunk = lines[i : i + per_article]
        out.append(Article(f"pd{i}", "pd", chunk[0][:40], chunk[1:], None, date(1998, 1, 1)))
    return out


def antecedent_pages(
    out: Path,
    templates: list[Template],
    bodies: list[Article],
    articles: list[Article],
    rng: random.Random,
    *,
    count: int,
) -> dict[str, int]:
    """Pages for ``topicrawl dedup learn-antecedents``: People's Daily, cnews and the real
    pages' bodies in the *tuning* templates only (t1 = main text, t2 = whole page)."""
    out.mkdir(parents=True, exist_ok=True)
    pd = peoples_daily_articles()
    picks = {
        "peoples_daily": rng.sample(pd, min(count, len(pd))),
        "cnews": rng.sample(articles, min(count, len(articles))),
        "real": bodies,
    }
    n = 0
    for kind, arts in picks.items():
        for art in arts:
            n += 1
            tpl = rng.choice(templates)
            (out / f"{kind}-{n:05d}.html").write_text(tpl.fill(art.title, art.paragraphs), "utf-8")
    return {k: len(v) for k, v in picks.items()}


def build(out: Path, *, seed: int = 1, cnews: int = 240, antecedents: int = 300) -> dict:
    rng = random.Random(seed)
    pages = load_real_pages()
    templates = [t for t in (load_template(*p) for p in pages) if t is not None]
    sites = sorted({t.site for t in templates})
    rng.shuffle(sites)
    unseen_sites = set(sites[: len(sites) // 2])
    split_of = {t.name: ("unseen" if t.site in unseen_sites else "tune") for t in templates}
    by_split: dict[str, list[Template]] = defaultdict(list)
    for t in templates:
        by_split[split_of[t.name]].append(t)

    bodies = real_bodies(pages)
    articles = load_articles()
    by_cat: dict[str, list[Article]] = defaultdict(list)
    for a in articles:
        by_cat[a.category].append(a)
    long_enough = [a for a in articles if len(_norm(a.text)) >= 200]
    sample = rng.sample(long_enough, cnews)
    conv = _t2s()
    pages_dir = out / "pages"
    pages_dir.mkdir(parents=True, exist_ok=True)
    files = {s: (out / f"pairs_{s}.jsonl").open("w", encoding="utf-8") for s in ("tune", "unseen")}
    counts: dict[str, int] = defaultdict(int)
    n = 0

    def write(tpl: Template, art: Article) -> str:
        nonlocal n
        n += 1
        name = f"pages/{n:05d}.html"
        (out / name).write_text(tpl.fill(art.title, art.paragraphs), "utf-8")
        return name

    for i, art in enumerate(bodies + sample):
        split = "unseen" if i % 2 else "tune"
        pool = by_split[split]
        ta = rng.choice(pool)
        others = [t for t in pool if t.site != ta.site]
        if not others:
            continue
        tb = rng.choice(others)
        a = write(ta, art)
        rep, edits = reprint(art, rng, conv)
        rows = [{"a": a, "b": write(tb, rep), "label": 1, "kind": "reprint", "edits": edits}]
        if art.category == "real":
            other = rng.choice([b for b in bodies if b.id != art.id])
        else:
            other = rng.choice([b for b in by_cat[art.category] if b.id != art.id])
        rows.append({"a": a, "b": write(tb, other), "label": 0, "kind": "same_category"})
        other2 = rng.choice([b for b in (bodies if art.category == "real" else sample)
                             if b.id not in (art.id, other.id)])  # fmt: skip
        rows.append({"a": a, "b": write(ta, other2), "label": 0, "kind": "same_template"})
        for row in rows:
            files[split].write(json.dumps(row, ensure_ascii=False) + "\n")
            counts[f"{split}/{row['kind']}"] += 1
    for fh in files.values():
        fh.close()
    learn = antecedent_pages(out / "antecedent_pages", by_split["tune"], bodies, articles,
                             rng, count=antecedents)  # fmt: skip
    info = {
        "seed": seed,
        "templates": {t.name: split_of[t.name] for t in templates},
        "rejected_templates": sorted({p[0] for p in pages} - {t.name for t in templates}),
        "unseen_sites": sorted(unseen_sites),
        "tune_sites": sorted(set(sites) - unseen_sites),
        "real_bodies": len(bodies),
        "cnews_bodies": len(sample),
        "pairs": dict(sorted(counts.items())),
        "antecedent_pages": learn,
    }
    (out / "templates.json").write_text(json.dumps(info, ensure_ascii=False, indent=1), "utf-8")
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "neardup_real")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cnews", type=int, default=240, help="cnews articles used as bodies")
    ap.add_argument("--antecedent-pages", type=int, default=300,
                    help="People's Daily and cnews pages each for learn-antecedents")  # fmt: skip
    args = ap.parse_args(argv)
    info = build(args.out, seed=args.seed, cnews=args.cnews, antecedents=args.antecedent_pages)
    print(json.dumps({k: v for k, v in info.items() if k != "templates"}, ensure_ascii=False,
                     indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
