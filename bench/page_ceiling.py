"""Page-relevance ceiling of a single-topic site: which on-topic articles the page model rejects.

    python bench/page_ceiling.py [--category 时政] [--topic topics/shizheng.toml]
                                 [--webs a0,a1,a2,a3,a4,b0,b1,b2] [--scale large] [--show 10]
                                 [--th2 0.8,0.7]

Offline, no crawl: builds each web (``a3`` = family a, seed 3; into ``bench/out/web_ceiling``,
rebuilt for each web), extracts every article page as the crawler does (``decode_html``,
``extract_page``) and scores it with the topic's page relevance (the shipped scorer; the
Algorithm 3 factor is 1, as on a single-topic site whose sample has no majority structure).
Prints, per web: the on-topic articles of the category's single-topic site under the page
threshold (its page-relevance ceiling: the best corpus recall any discovery can reach there)
with the parts of their score (formula 3 and classifier P of the description and the text),
and over every article page of the web the precision and recall at the threshold and at the
lowest threshold that would accept every on-topic article of that site (what admitting them
by threshold would cost).

``--th2 0.8,0.7`` also compares the topic with other similarity cuts (``[similarity] th2``,
variant files written into ``bench/out/page_ceiling/``): per web and variant, ROC AUC,
precision at recall 0.85 and 0.95, and at the threshold where 90 % of the web's on-topic
articles pass (chosen per variant, so the scales compare) the precision and the single-topic
site's recall. An exploration, not a tuning: nothing is shipped from it.

Nothing is tuned here: the topic file is used as shipped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relevance.linkscore import PageInfo  # noqa: E402
from relevance.priority import SemanticLinkScorer  # noqa: E402
from relevance.topic import load_topic  # noqa: E402
from sitegen.build import article_bodies, build_web  # noqa: E402
from topicrawl.extract import decode_html, extract_page  # noqa: E402

OUT = ROOT / "bench" / "out"


def precision_recall(
    scores: list[float], labels: list[bool], threshold: float
) -> tuple[float, float]:
    """Precision and recall of ``score >= threshold`` over labelled pages."""
    sel = [y for s, y in zip(scores, labels, strict=True) if s >= threshold]
    pos = sum(labels)
    return (sum(sel) / len(sel) if sel else 0.0), (sum(sel) / pos if pos else 0.0)


#: a built web: the single-topic site's host, the article pages, their on-topic labels and
#: the indexes of the site's on-topic pages
Loaded = tuple[str, list[PageInfo], list[bool], list[int]]


def load_web(web: str, category: str, *, scale: str) -> Loaded:
    """Build ``web`` (``a3``: family a, seed 3), extract its article pages as the crawler does:
    (the single-topic site's host, pages, on-topic labels, indexes of the site's on-topic
    pages)."""
    family, seed = web[0], int(web[1:])
    out = OUT / "web_ceiling"
    truth = build_web(out, scale=scale, seed=seed, family=family)
    domain = next(s for s in truth["sites"]
                  if s["kind"] == "domain" and category in s["categories"])  # fmt: skip
    host = urlsplit(domain["home"]).hostname or ""
    pages, labels, hosts = [], [], []
    for url, page, body, header in article_bodies(out, truth):
        html, _ = decode_html(body, header)
        ex = extract_page(html, url)
        pages.append(PageInfo(url, ex.title, ex.description, ex.keywords, ex.text))
        labels.append(page["category"] == category)
        hosts.append(urlsplit(url).hostname)
    site = [i for i, h in enumerate(hosts) if h == host and labels[i]]
    return host, pages, labels, site


def ceiling(web: str, loaded: Loaded, category: str, scorer: SemanticLinkScorer,
            threshold: float, *, show: int) -> dict[str, object]:  # fmt: skip
    """The single-topic site's rejected articles and the whole web's figures."""
    host, pages, labels, site = loaded
    scores = [scorer.page_relevance(p) for p in pages]
    rejected = sorted((i for i in site if scores[i] < threshold), key=lambda i: scores[i])
    need = min(scores[i] for i in site)
    p, r = precision_recall(scores, labels, threshold)
    p_need, r_need = precision_recall(scores, labels, need)
    print(f"\n{web} ({host}): {len(site)} {category} articles on the site, "
          f"{len(rejected)} under {threshold} -> ceiling {1 - len(rejected) / len(site):.3f}; "
          f"whole web ({len(pages)} articles, {sum(labels)} {category}): at {threshold} "
          f"precision {p:.3f} recall {r:.3f}; at {need:.3f} (all of the site) "
          f"precision {p_need:.3f} recall {r_need:.3f}")  # fmt: skip
    for i in rejected[:show]:
        pg = pages[i]
        _, f3, prob = scorer.relevance_texts([scorer.description_text(pg), pg.text])
        pr = ["-" if x is None else f"{x:.3f}" for x in prob]
        title = pg.title.split("—")[0].split("_")[0][:40]
        print(f"  {scores[i]:.3f}  info f3 {f3[0]:.3f} P {pr[0]}  text f3 {f3[1]:.3f} P {pr[1]}"
              f"  {len(pg.text)} chars  {title}")  # fmt: skip
    return {"web": web, "site": len(site), "rejected": len(rejected), "precision": p,
            "recall": r, "need": need, "precision_need": p_need, "recall_need": r_need}  # fmt: skip


def compare(web: str, loaded: Loaded, scorers: dict[str, SemanticLinkScorer]) -> list[str]:
    """Table rows: each topic variant's ranking of the web's article pages (``--th2``)."""
    from bench.harvest import precision_at_recall, roc_auc

    _, pages, labels, site = loaded
    rows = []
    for name, scorer in scorers.items():
        scores = [scorer.page_relevance(p) for p in pages]
        on = sorted((x for x, y in zip(scores, labels, strict=True) if y), reverse=True)
        t90 = on[int(0.9 * len(on)) - 1]  # 90 % of the web's on-topic articles pass
        p90, _ = precision_recall(scores, labels, t90)
        site90 = sum(1 for i in site if scores[i] >= t90) / len(site)
        rows.append(f"| {web} | {name} | {roc_auc(scores, labels):.3f} | "
                    f"{precision_at_recall(scores, labels, 0.85):.3f} | "
                    f"{precision_at_recall(scores, labels, 0.95):.3f} | "
                    f"{t90:.3f}: {p90:.3f}, {site90:.3f} |")  # fmt: skip
    return rows


def th2_variants(path: str, values: list[str]) -> dict[str, SemanticLinkScorer]:
    """The topic and its variants with ``[similarity] th2`` set to each value."""
    from relevance.topicedit import set_value

    out = OUT / "page_ceiling"
    out.mkdir(parents=True, exist_ok=True)
    topic = load_topic(path)
    scorers = {f"th2 {topic.similarity.th2} (file)": SemanticLinkScorer.from_topic(topic)}
    text = Path(path).read_text(encoding="utf-8")
    for value in values:
        dest = out / f"{Path(path).stem}_th2_{value}.toml"
        dest.write_text(set_value(text, "similarity.th2", value, path=str(dest)), encoding="utf-8")
        scorers[f"th2 {value}"] = SemanticLinkScorer.from_topic(load_topic(dest))
    return scorers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--category", default="时政")
    ap.add_argument("--topic", default=str(ROOT / "topics" / "shizheng.toml"))
    ap.add_argument("--webs", default="a0,a1,a2,a3,a4,b0,b1,b2")
    ap.add_argument("--scale", default="large")
    ap.add_argument("--show", type=int, default=10, help="rejected articles listed per web")
    ap.add_argument("--th2", default="", help="compare topic variants with these th2 values")
    args = ap.parse_args(argv)
    topic = load_topic(args.topic)
    scorer = SemanticLinkScorer.from_topic(topic)
    variants = th2_variants(args.topic, args.th2.split(",")) if args.th2 else {}
    rows, compared = [], []
    for web in args.webs.split(","):
        loaded = load_web(web, args.category, scale=args.scale)
        rows.append(ceiling(web, loaded, args.category, scorer, topic.page_threshold,
                            show=args.show))  # fmt: skip
        if variants:
            compared += compare(web, loaded, variants)
    print(
        "\n| web | site articles | under threshold | ceiling | web precision / recall at "
        "threshold | lowest site score | web precision / recall there |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ceil = 1 - r["rejected"] / r["site"]
        print(f"| {r['web']} | {r['site']} | {r['rejected']} | {ceil:.3f} | "
              f"{r['precision']:.3f} / {r['recall']:.3f} | {r['need']:.3f} | "
              f"{r['precision_need']:.3f} / {r['recall_need']:.3f} |")  # fmt: skip
    if compared:
        print("\n| web | topic | ROC AUC | precision at recall 0.85 | precision at recall 0.95 "
              "| at web recall 0.90: threshold: precision, site recall |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        print("\n".join(compared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
