"""Formula 3, topicrawl's normalised form against the published one, as a page classifier.

    python bench/formula3.py WEB_DIR [--topic topics/shizheng.toml] [--category 时政] [--strip 时政]

For every article page of a local test web (``python -m sitegen build WEB_DIR``): formula 3
of the page's description (title + meta description + keywords) and of its main text, with
the topic's similarity sources, in both forms of :class:`relevance.page.TopicRelevance`
(``normalized``: w_d = tf, affinity / Z capped at 1; ``paper``: w_d = tf·idf, no Z, no cap).
Prints ROC AUC and precision at recall 0.85 of the description, the text and their mean
(page relevance with description_weight 0.5) for the on-topic category. The page classifier
of the topic is not used: this is formula 3 alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relevance.evaluate import article_texts, precision_at_recall, roc_auc  # noqa: E402
from relevance.page import TopicRelevance  # noqa: E402
from relevance.priority import build_similarity  # noqa: E402
from relevance.topic import load_topic  # noqa: E402
from relevance.weights import CandidateExtractor  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("web", type=Path)
    ap.add_argument("--topic", action="append", default=[])
    ap.add_argument("--category", default="时政")
    ap.add_argument("--strip", action="append", default=[])
    args = ap.parse_args()
    infos, texts, labels = article_texts(args.web, args.category, args.strip)
    strip = f", {' '.join(args.strip)} deleted from every page" if args.strip else ""
    print(f"{len(labels)} article pages, {sum(labels)} {args.category}{strip}")
    print("| topic | form | description AUC / P@R0.85 | text | mean (w = 0.5) |")
    print("|---|---|---|---|---|")
    for path in args.topic or [str(ROOT / "topics" / "shizheng.toml")]:
        topic = load_topic(path)
        sim = build_similarity(topic)
        ext = CandidateExtractor(
            language=topic.language,
            pos=topic.candidates.pos,
            min_length=topic.candidates.min_length,
            topic_words=topic.weights,
        )
        for form in ("normalized", "paper"):
            rel = TopicRelevance(topic.weights, sim, ext, form=form)
            a = rel.relevance_many(infos)
            b = rel.relevance_many(texts)
            if form == "paper":  # put both on one scale before mixing (rank-free: AUC)
                top_a, top_b = max(a) or 1.0, max(b) or 1.0
                a = [x / top_a for x in a]
                b = [x / top_b for x in b]
            m = [(x + y) / 2 for x, y in zip(a, b, strict=True)]
            cells = [
                f"{roc_auc(v, labels):.3f} / {precision_at_recall(v, labels, 0.85):.3f}"
                for v in (a, b, m)
            ]
            print(f"| {Path(path).name} | {form} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
