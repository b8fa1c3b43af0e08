"""Build the labelled Chinese near-duplicate set (none exists publicly).

    python bench/neardup_zh.py --out bench/out/neardup_zh [--per-category 20] [--seed 1]

Sources: the labelled articles of ``data_path("corpus", "cnews_train.txt")`` and the real
news pages of ``data_path("html", "news_zh")``. Pages are rendered with the test web's
templates and reprint generator (``sitegen.templates.render_article``,
``sitegen.reprint``), so this set and the local test web agree on what a reprint is.

For each sampled article, rendered on one site:

* positive (label 1): a reprint (``make_reprint``: editor's note, source and editor lines,
  moved paragraph breaks, edited characters, rewritten title) on a site with another
  template;
* negative (label 0): another article of the same category;
* positive (label 1, kind ``commentary``): a reprint with long added commentary
  (``add_commentary``) — it contains the article, so it is a duplicate by issue 17, item 3
  (label 0, a hard negative by the feature-code paper's definition, before that issue: sets
  built earlier are labelled so, and their figures are not comparable);
* hard negative (label 0): a reprint cut to its first half (``cut_half``).

For each real page with a main text: the real page against a reprint of its text on a test
web template (label 1), and against another real page (label 0).

Writes ``pages/*.html``, ``pairs.jsonl`` (``{"a", "b", "label", "kind"}``, paths relative to
the file) and ``groups.jsonl`` (each original with its positive copies).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sitegen.articles import CATEGORIES, Article, load_articles, split_paragraphs  # noqa: E402
from sitegen.reprint import add_commentary, cut_half, make_reprint  # noqa: E402
from sitegen.sites import domain_site, portal_sites  # noqa: E402
from sitegen.templates import PageContext, Site, render_article  # noqa: E402
from topicrawl.data import data_path  # noqa: E402


def _section(site: Site, category: str, rng: random.Random) -> str | None:
    secs = sorted(s for s, (_, c) in site.sections.items() if c == category)
    return rng.choice(secs) if secs else None


def _sites() -> list[Site]:
    sites = portal_sites(list(CATEGORIES), count=4)
    sites += [domain_site(c) for c in CATEGORIES]
    return sites


class Writer:
    def __init__(self, out: Path):
        self.out = out
        (out / "pages").mkdir(parents=True, exist_ok=True)
        self.pairs: list[dict] = []
        self.groups: list[dict] = []
        self.n = 0

    def page(self, name: str, html: str) -> str:
        rel = f"pages/{name}.html"
        (self.out / rel).write_text(html, "utf-8")
        self.n += 1
        return rel

    def pair(self, a: str, b: str, label: int, kind: str) -> None:
        self.pairs.append({"a": a, "b": b, "label": label, "kind": kind})

    def close(self) -> None:
        with (self.out / "pairs.jsonl").open("w", encoding="utf-8") as fh:
            for p in self.pairs:
                fh.write(json.dumps(p, ensure_ascii=False) + "\n")
        with (self.out / "groups.jsonl").open("w", encoding="utf-8") as fh:
            for g in self.groups:
                fh.write(json.dumps(g, ensure_ascii=False) + "\n")


def render(article: Article, site: Site, rng: random.Random, others: list[Article]) -> str:
    """Render ``article`` on ``site`` with the usual surrounding links (related, hot)."""
    section = _section(site, article.category, rng) or sorted(site.sections)[0]
    links = [(site.url(f"/a/{rng.randrange(10**6)}.html"), o.title) for o in others]
    ctx = PageContext(
        charset=site.charset,
        related=links[:4],
        hot=links[4:10],
        ad_id=rng.randrange(1000),
    )
    return render_article(article, site, ctx, section=section, author=rng.choice(("", "本报记者")))


def build(out: Path, *, per_category: int = 20, seed: int = 1, real_pages: bool = True) -> Writer:
    rng = random.Random(seed)
    articles = load_articles()
    by_cat: dict[str, list[Article]] = {}
    for a in articles:
        if len(a.text) >= 200:
            by_cat.setdefault(a.category, []).append(a)
    sites = _sites()
    w = Writer(out)
    for cat in CATEGORIES:
        pool = by_cat.get(cat, [])
        chosen = rng.sample(pool, min(per_category, len(pool)))
        hosts = [s for s in sites if cat in s.categories]
        for art in chosen:
            site = rng.choice(hosts)
            other_sites = [s for s in hosts if s.template != site.template] or hosts
            noise = rng.sample(articles, 10)
            orig = w.page(f"{art.id}", render(art, site, rng, noise))
            rep = make_reprint(art, rng)
            rep_site = rng.choice(other_sites)
            rep_path = w.page(f"{art.id}-rep", render(rep, rep_site, rng, rng.sample(articles, 10)))
            w.pair(orig, rep_path, 1, "reprint")
            group = {"original": orig, "copies": [rep_path], "category": cat}
            w.groups.append(group)
            neg = rng.choice([a for a in pool if a.id != art.id])
            neg_path = w.page(
                f"{art.id}-neg-{neg.id}",
                render(neg, rng.choice(other_sites), rng, rng.sample(articles, 10)),
            )
            w.pair(orig, neg_path, 0, "same-category")
            half = cut_half(make_reprint(art, rng))
            half_path = w.page(
                f"{art.id}-half",
                render(half, rng.choice(other_sites), rng, rng.sample(articles, 10)),
            )
            w.pair(orig, half_path, 0, "cut-half")
            others = [a.text for a in rng.sample(pool, min(6, len(pool))) if a.id != art.id]
            comm = add_commentary(make_reprint(art, rng), rng, others)
            comm_path = w.page(
                f"{art.id}-comm",
                render(comm, rng.choice(other_sites), rng, rng.sample(articles, 10)),
            )
            w.pair(orig, comm_path, 1, "commentary")  # issue 17, item 3: a copy
            group["copies"].append(comm_path)
    if real_pages:
        _real_pairs(w, rng, sites, articles)
    w.close()
    return w


def _real_pairs(w: Writer, rng: random.Random, sites: list[Site], articles: list[Article]) -> None:
    """Real news pages against a reprint of their text on a test-web template, and against
    another real page."""
    from topicrawl.extract import decode_html, extract_page

    root = data_path("html", "news_zh")
    real = []
    for path in sorted(root.rglob("*.html")):
        if "list_pages" in path.parts:
            continue
        html, _ = decode_html(path.read_bytes())
        ex = extract_page(html)
        if ex.language != "zh" or len(ex.text) < 300:
            continue
        real.append((path, html, ex))
    for i, (path, html, ex) in enumerate(real):
        name = f"real-{path.parent.name}-{path.stem}"
        orig = w.page(name, html)
        paras = [p for line in ex.text.split("\n") for p in split_paragraphs(line) if p.strip()]
        art = Article(
            id=name,
            category="时政",
            title=ex.title.split("_")[0].split("|")[0].strip() or "新闻",
            paragraphs=paras,
            source=None,
            published=date(2019, 1, 1),
        )
        rep = make_reprint(art, rng)
        site = rng.choice([s for s in sites if "时政" in s.categories])
        rep_path = w.page(f"{name}-rep", render(rep, site, rng, rng.sample(articles, 10)))
        w.pair(orig, rep_path, 1, "real-reprint")
        w.groups.append({"original": orig, "copies": [rep_path], "category": "real"})
        other = real[(i + 1 + rng.randrange(len(real) - 1)) % len(real)]
        w.pair(orig, f"pages/real-{other[0].parent.name}-{other[0].stem}.html", 0, "real-other")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "neardup_zh"))
    ap.add_argument("--per-category", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-real", action="store_true", help="skip the real news_zh pages")
    args = ap.parse_args(argv)
    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    out = Path(args.out)
    w = build(out, per_category=args.per_category, seed=args.seed, real_pages=not args.no_real)
    kinds: dict[str, int] = {}
    for p in w.pairs:
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + 1
    print(f"{w.n} pages, {len(w.pairs)} pairs {kinds} -> {out / 'pairs.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
