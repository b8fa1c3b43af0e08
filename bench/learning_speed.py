"""Speed of the calibrated mode's link scoring, retraining included, against jieba.

    python bench/learning_speed.py [--pages 400] [--family a] [--seed 0]

Replays the article and list pages of a local test web (``bench/topics.py``'s cached
extraction) through :class:`relevance.calibrated.CalibratedLinkScorer` of the words-only 体育
topic as a crawl would: for each page its relevance, ``observe_page`` (the page model is
retrained on its schedule, the link model updated) and ``score_links`` on links whose anchors
are the titles of other pages. The same texts (head + anchors, and the main text) are then
segmented with ``jieba.lcut``; the ratio is the figure (target ≤ 2×, issue 10). scikit-learn is imported before timing (a one-time load). Both sides
segment every text afresh (the scorer's memo of short texts is cleared per page).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    import jieba

    from bench.topics import topic_paths, web_pages
    from relevance.calibrated import CalibratedLinkScorer
    from relevance.linkscore import Link, PageInfo
    from relevance.topic import load_topic
    from topicrawl import segment

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--links", type=int, default=30, help="links per page")
    ap.add_argument("--family", default="a")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows = web_pages(args.family, args.seed)
    rnd = random.Random(0)
    rnd.shuffle(rows)
    rows = rows[: args.pages]
    titles = [r["title"] for r in rows]
    pages = [
        (PageInfo(r["url"], r["title"], r["description"], r["keywords"], r["text"]),
         [Link(f"http://x.cn/{i}/{j}.html", rnd.choice(titles)) for j in range(args.links)])
        for i, r in enumerate(rows)
    ]  # fmt: skip
    scorer = CalibratedLinkScorer.from_topic(load_topic(topic_paths()["体育"]))
    jieba.lcut("预热")
    import sklearn.linear_model  # noqa: F401 - loaded once per process, like HowNet: not timed

    m = scorer.page_model
    spent = [0.0]
    retrain = m.retrain

    def timed_retrain() -> bool:
        t = time.perf_counter()
        try:
            return retrain()
        finally:
            spent[0] += time.perf_counter() - t

    m.retrain = timed_retrain  # type: ignore[method-assign]
    t0 = time.perf_counter()
    for page, links in pages:
        scorer._words.clear()  # noqa: SLF001 - segment afresh, as jieba does below
        segment.memo_clear()
        r = scorer.page_relevance(page)
        scores = scorer.score_links(page, links)
        scorer.observe_page(page, r, scores[0].breakdown)
    t_score = time.perf_counter() - t0
    t0 = time.perf_counter()
    for page, links in pages:
        jieba.lcut(scorer.description_text(page))
        jieba.lcut(page.text)
        for lk in links:
            jieba.lcut(lk.anchor)
    t_jieba = time.perf_counter() - t0
    print(f"{len(pages)} pages x {args.links} links: calibrated scoring (page relevance, "
          f"{m.trainings} page-model trainings, link model) {t_score:.2f} s; jieba.lcut of the "
          f"same texts {t_jieba:.2f} s; ratio {t_score / t_jieba:.2f}x (target <= 2x); "
          f"of which page-model training {spent[0]:.2f} s (without it "
          f"{(t_score - spent[0]) / t_jieba:.2f}x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
