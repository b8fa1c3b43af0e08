"""Relevance-engine benchmark: speed, word similarity, URL structure and link-priority AUC.

    python bench/relevance.py [--scale large] [--write docs/benchmarks/relevance.md]

Figures (all measured side by side in one run; timings are the best of several repeats on
a shared machine):

1. speed — scoring one link (anchor + description of its page) with SemanticLinkScorer
   against a 500-word topic, once the words are cached, versus jieba-segmenting the same
   text; the topic affinity of never-seen words against the 500 topic words (words/s);
2. word similarity — Spearman and coverage on wordsim-297 of HowNet (Liu Qun 2002),
   word2vec (trained on People's Daily + cnews into .cache/, once) and Algorithm 1;
3. URL structure — Algorithm 3's struct(url) as a predictor of "same category" with the
   `paper` and the `path` mode of Algorithm 2, on the local test web's article URLs;
4. link priority — ROC AUC of formula 5 on every link to an article of the local test web
   (offline: links extracted from the generated HTML), labels = target page's category is
   时政, against the keyword best-first baseline; page relevance as a 时政 classifier.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relevance.evaluate import (  # noqa: E402
    evaluate_similarity,
    precision_recall_f1,
    read_pairs,
    roc_auc,
)
from relevance.hownet import HowNetSimilarity  # noqa: E402
from relevance.linkscore import KeywordLinkScorer, Link, PageInfo  # noqa: E402
from relevance.priority import SemanticLinkScorer  # noqa: E402
from relevance.topic import load_topic, parse_topic  # noqa: E402
from relevance.urls import StructureSample  # noqa: E402
from topicrawl.data import data_path  # noqa: E402

CACHE = ROOT / ".cache"
VECTORS = CACHE / "vectors" / "zh_news.kv"  # People's Daily + cnews (word similarity, speed)
# People's Daily only: the local test web is generated from the cnews articles, so vectors
# trained on cnews would have seen the test pages; the AUC uses these instead.
VECTORS_PD = CACHE / "vectors" / "pd199801.kv"
CATEGORY = "时政"


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def ensure_vectors(path: Path = VECTORS) -> Path:
    if not path.exists():
        from relevance.vectors import train_vectors

        corpora = [data_path("corpus", "peoples_daily_199801.txt")]
        if path == VECTORS:
            corpora.append(data_path("corpus", "cnews_train.txt"))
        print(f"training word2vec into {path} (once) ...", flush=True)
        train_vectors(corpora, path, model="word2vec", epochs=10, min_count=3)
    return path


def topic_500(sources: list[str]) -> str:
    terms = [
        w.strip()
        for w in data_path("topics", "dangjian_terms.txt").read_text(encoding="utf-8").splitlines()
        if w.strip()
    ][:500]
    words = "\n".join(f'"{w}" = 1.0' for w in terms)
    src = ", ".join(f'"{s}"' for s in sources)
    vec = f'vectors = "{VECTORS}"\n' if "word2vec" in sources else ""
    return f'name = "党建500"\n[words]\n{words}\n[similarity]\nsources = [{src}]\n{vec}'


# --- 1. speed -----------------------------------------------------------------------------


def bench_speed(out: list[str], hownet: HowNetSimilarity, sources: list[str], label: str) -> None:
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    topic = parse_topic(topic_500(sources))
    sim = None
    if sources == ["hownet"]:
        from relevance.combined import CombinedSimilarity

        sim = CombinedSimilarity(hownet, None)
    t0 = time.perf_counter()
    scorer = SemanticLinkScorer.from_topic(topic, sim=sim)
    startup = time.perf_counter() - t0
    rel = scorer.relevance

    titles = [
        line.split("\t")[0]
        for line in data_path("corpus", "thucnews_titles_dev.txt")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    rng = random.Random(0)
    rng.shuffle(titles)
    pages = [
        PageInfo(url=f"http://x/{i}", title=titles[i], description=titles[i + 1000])
        for i in range(300)
    ]
    sections = ["politics", "finance", "sports", "ent", "tech"]
    links = [
        [
            Link(
                f"http://news.x.cn/{sections[i % 5]}/2019/{i % 12 + 1:02d}/{i}.html",
                titles[i + 2000],
            )
        ]
        for i in range(300)
    ]
    for i in range(20):  # a full Algorithm 3 sample, so struct(url) is really computed
        scorer.observe_accepted(f"http://news.x.cn/politics/2019/10/{1000 + i}.html")
    texts = [
        f"{p.title} {p.description} {lk[0].anchor}" for p, lk in zip(pages, links, strict=True)
    ]

    for p, lk in zip(pages, links, strict=True):  # warm the word cache
        scorer.score_links(p, lk)

    st = scorer.structure
    samples = list(st.samples.values()) if hasattr(st, "samples") else [st]

    def score_all():
        # word affinities cached; the texts segmented and struct(url) computed afresh (the
        # memos of short texts' candidate words and of struct would skip both)
        rel._words.clear()
        for sample in samples:
            sample._memo.clear()
        for p, lk in zip(pages, links, strict=True):
            scorer.score_links(p, lk)

    def seg_all():
        for t in texts:
            jieba.lcut(t)

    t_score = t_seg = float("inf")
    for _ in range(5):  # interleaved, so both see the same machine load
        t_score = min(t_score, best(score_all, 1))
        t_seg = min(t_seg, best(seg_all, 1))
    n = len(pages)

    # never-seen words (HowNet glossary words not cached yet): in batches of 200, as a page's
    # new words arrive together, and one at a time; best of 3 rounds of fresh words
    known = set(rel._aff)
    pool = [w for w in hownet.words if w not in known and len(w) >= 2]
    rng.shuffle(pool)
    rate_batch = rate_single = 0.0
    for r in range(3):
        words = pool[r * 2300 : (r + 1) * 2300]
        t = time.perf_counter()
        for lo in range(0, 2000, 200):
            rel.affinities(words[lo : lo + 200])
        rate_batch = max(rate_batch, 2000 / (time.perf_counter() - t))
        t = time.perf_counter()
        for w in words[2000:]:
            rel.affinity(w)
        rate_single = max(rate_single, 300 / (time.perf_counter() - t))
    out += [
        f"### Speed, topic of 500 words, sources: {label}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| scorer start-up (load sources, topic words' affinities) | {startup:.2f} s |",
        f"| score one link (description + anchor + struct over a full sample of 20), words "
        f"cached | {1e6 * t_score / n:.0f} µs |",
        f"| jieba.lcut of the same text | {1e6 * t_seg / n:.0f} µs |",
        f"| **ratio scoring / segmentation** (target ≤ 2) | **{t_score / t_seg:.2f}** |",
        f"| never-seen words, batches of 200 (target ≥ 2,000/s) | **{rate_batch:,.0f} words/s** |",
        f"| never-seen words, one at a time | {rate_single:,.0f} words/s |",
        "",
    ]
    print("\n".join(out[-11:]), flush=True)


# --- 2. word similarity -------------------------------------------------------------------


def bench_wordsim(out: list[str], hownet: HowNetSimilarity) -> None:
    from relevance.combined import CombinedSimilarity
    from relevance.vectors import VectorSimilarity

    pairs = read_pairs(data_path("wordsim", "wordsim-297.txt"))
    vec = VectorSimilarity.from_path(ensure_vectors())
    rows = [("HowNet (Liu Qun 2002)", hownet), ("word2vec", vec)]
    for beta in (0.5,):
        rows.append(
            (
                f"Algorithm 1 (α=0.8, β={beta}, Th1=Th2=0.1)",
                CombinedSimilarity(hownet, vec, beta=beta),
            )
        )
    out += [
        "### Word similarity on wordsim-297 (297 pairs)",
        "",
        "word2vec: skip-gram, 100 dimensions, 10 epochs on People's Daily 1998-01 + cnews "
        f"({len(vec)} words).",
        "",
        "| source | Spearman (covered pairs) | coverage | Spearman (all pairs, 0 if uncovered) |",
        "|---|---|---|---|",
    ]
    for name, src in rows:
        r = evaluate_similarity(name, pairs, src.similarity, src.__contains__)
        out.append(
            f"| {name} | {r.spearman_covered:.3f} | {r.covered}/{r.pairs} | {r.spearman_all:.3f} |"
        )
    out.append("")
    print("\n".join(out[-8:]), flush=True)


# --- the local test web -------------------------------------------------------------------


def load_web(scale: str, seed: int) -> tuple[Path, dict]:
    from sitegen.build import build_web

    web = CACHE / f"bench-web-{scale}-{seed}"
    gt = web / "ground_truth.json"
    if not gt.exists():
        print(f"building the local test web ({scale}) into {web} ...", flush=True)
        build_web(web, scale=scale, seed=seed)
    return web, json.loads(gt.read_text(encoding="utf-8"))


def extract_pages(web: Path, truth: dict) -> list[tuple[PageInfo, list[Link], str, dict]]:
    """(page info, links, text, truth entry) of every HTML page of the test web."""
    from urllib.parse import urljoin

    import lxml.html

    responses = json.loads((web / "responses.json").read_text(encoding="utf-8"))
    out = []
    for url, entry in truth["pages"].items():
        resp = responses.get(url)
        if not resp or "html" not in resp.get("content_type", "") or not resp.get("file"):
            continue
        data = (web / resp["file"]).read_bytes()
        text = data.decode(entry.get("encoding") or "utf-8", errors="replace")
        try:
            doc = lxml.html.fromstring(text)
        except Exception:
            continue

        def meta(name: str, doc=doc) -> str:
            v = doc.xpath(f'//meta[@name="{name}"]/@content')
            return v[0] if v else ""

        title = (doc.findtext(".//title") or "").strip()
        links = []
        for a in doc.iter("a"):
            href = a.get("href")
            if not href or href.startswith(("javascript:", "#", "mailto:")):
                continue
            anchor = " ".join(a.text_content().split()) or a.get("title") or ""
            if not anchor:
                for img in a.iter("img"):
                    anchor = img.get("alt") or ""
            links.append(Link(urljoin(url, href).split("#")[0], anchor))
        body = " ".join(" ".join(p.text_content().split()) for p in doc.iter("p"))
        info = PageInfo(
            url=url,
            title=title,
            description=meta("description"),
            keywords=meta("keywords"),
            text=body[:3000],
        )
        out.append((info, links, body, entry))
    return out


# --- 3. URL structure ---------------------------------------------------------------------


def _struct_prf(arts, pos, mode, th, rng) -> tuple[float, float, float]:
    ps, rs, fs = [], [], []
    for rep in range(5):
        s = StructureSample(20, seed=rep, threshold=th, mode=mode)
        sample_src = pos[:]
        rng.shuffle(sample_src)
        used = set(sample_src[: len(sample_src) // 2])
        for u in sample_src[: len(sample_src) // 2]:
            s.add(u)
        kept = [(u, c) for u, c in arts if u not in used]
        p, r, f = precision_recall_f1(
            [s.struct(u) == 1.0 for u, _ in kept], [c == CATEGORY for _, c in kept]
        )
        ps.append(p)
        rs.append(r)
        fs.append(f)
    return statistics.mean(ps), statistics.mean(rs), statistics.mean(fs)


def bench_urls(out: list[str], truth: dict) -> None:
    from collections import Counter
    from urllib.parse import urlsplit

    arts = [
        (u, e["category"])
        for u, e in truth["pages"].items()
        if e["kind"] == "article" and e["category"]
    ]
    cats_of: dict[str, set] = {}
    for u, c in arts:
        cats_of.setdefault(urlsplit(u).hostname, set()).add(c)
    # the portal (several categories) with the most on-topic articles
    host = Counter(
        urlsplit(u).hostname
        for u, c in arts
        if c == CATEGORY and len(cats_of[urlsplit(u).hostname]) > 1
    ).most_common(1)[0][0]
    scenarios = [
        ("all sites", arts),
        (f"one site ({host})", [(u, c) for u, c in arts if urlsplit(u).hostname == host]),
    ]
    rng = random.Random(1)
    out += [
        "### URL structure (Algorithm 3 over Algorithm 2)",
        "",
        'struct(url) = 1 as a predictor of "same category as the sample": the sample is n = 20 '
        f"(reservoir) of half the {CATEGORY} article URLs, tested on all other article URLs; "
        "mean of 5 draws. Scores are character-bigram Jaccard per URL part.",
        "",
        "| URLs | mode | threshold | precision | recall | F1 |",
        "|---|---|---|---|---|---|",
    ]
    for name, sub in scenarios:
        pos = [u for u, c in sub if c == CATEGORY]
        for mode, th in (("paper", 0.75), ("path", 0.6), ("path", 0.75), ("path", 0.85)):
            p, r, f = _struct_prf(sub, pos, mode, th, rng)
            out.append(
                f"| {name}: {len(sub)} ({len(pos)} {CATEGORY}) | {mode} | {th} | {p:.3f} | "
                f"{r:.3f} | {f:.3f} |"
            )
    out.append("")
    print("\n".join(out[-14:]), flush=True)


# --- 4. link-priority AUC -----------------------------------------------------------------


def bench_auc(out: list[str], pages, truth: dict, hownet: HowNetSimilarity) -> None:
    from relevance.combined import CombinedSimilarity

    cats = {u: e["category"] for u, e in truth["pages"].items()}
    kinds = {u: e["kind"] for u, e in truth["pages"].items()}
    rows = []
    base_topic = load_topic(ROOT / "topics" / "shizheng.toml")
    w2v_topic = load_topic(ROOT / "topics" / "shizheng_w2v.toml")
    from relevance.vectors import VectorSimilarity

    vec = VectorSimilarity.from_path(ensure_vectors(VECTORS_PD))
    th_h = base_topic.similarity.th2
    s_w = w2v_topic.similarity
    variants = [
        ("HowNet, Th2=0.1 (paper)", base_topic, CombinedSimilarity(hownet, None), (False,)),
        (
            f"shizheng.toml: HowNet, Th2={th_h}",
            base_topic,
            CombinedSimilarity(hownet, None, th2=th_h),
            (False, True),
        ),
        ("word2vec alone, Th1=0.5", w2v_topic, CombinedSimilarity(None, vec, th1=0.5), (False,)),
        ("Algorithm 1, Th1=Th2=0.1 (paper)", w2v_topic, CombinedSimilarity(hownet, vec), (False,)),
        (
            f"shizheng_w2v.toml: Algorithm 1, Th1={s_w.th1}, Th2={s_w.th2}",
            w2v_topic,
            CombinedSimilarity(hownet, vec, th1=s_w.th1, th2=s_w.th2),
            (False, True),
        ),
    ]
    page_rows = []
    for label, topic, sim, warms in variants:
        for warm in warms:
            scorer = SemanticLinkScorer.from_topic(topic, sim=sim)
            arts = []
            for info, _, _, e in pages:
                if e["kind"] == "article" and e["category"]:
                    r = scorer.page_relevance(info)
                    arts.append((r, e["category"] == CATEGORY))
                    if warm and r > topic.page_threshold:  # Algorithm 3 fed as in a crawl
                        scorer.observe_accepted(info.url)
            if not warm:
                th = topic.page_threshold
                acc = [y for r, y in arts if r > th]
                page_rows.append(
                    (
                        label,
                        roc_auc([r for r, _ in arts], [y for _, y in arts]),
                        th,
                        len(acc),
                        sum(acc) / max(1, len(acc)),
                        sum(acc) / max(1, sum(y for _, y in arts)),
                    )
                )
            scores, labels, follow = [], [], []
            for info, links, _, _ in pages:
                keep = [lk for lk in links if kinds.get(lk.url) == "article"]
                if not keep:
                    continue
                for lk, sc in zip(keep, scorer.score_links(info, keep), strict=True):
                    scores.append(sc.score)
                    labels.append(cats.get(lk.url) == CATEGORY)
                    follow.append(sc.follow)
            auc = roc_auc(scores, labels)
            tp = sum(1 for f, y in zip(follow, labels, strict=True) if f and y)
            rows.append(
                (
                    f"{label}" + (", struct sample warm" if warm else ""),
                    auc,
                    len(scores),
                    sum(labels),
                    tp / max(1, sum(follow)),
                    tp / max(1, sum(labels)),
                    topic.link_threshold,
                )
            )
    kw = KeywordLinkScorer(list(base_topic.weights))
    scores, labels = [], []
    for info, links, _, _ in pages:
        keep = [lk for lk in links if kinds.get(lk.url) == "article"]
        for lk, s in zip(keep, kw.score_links(info, keep), strict=True):
            scores.append(s.score)
            labels.append(cats.get(lk.url) == CATEGORY)
    rows.append(
        (
            "keyword best-first baseline (anchor hits)",
            roc_auc(scores, labels),
            len(scores),
            sum(labels),
            float("nan"),
            float("nan"),
            float("nan"),
        )
    )

    # page relevance (formula 3 over title/description/keywords + text) against the truth
    out += [
        f"### Link priority on the local test web (topics/shizheng.toml, category {CATEGORY})",
        "",
        "Every link from every HTML page to an article page; label = the target's "
        f"category is {CATEGORY} (links to list pages are left out: the ground truth gives "
        "list pages no category). Followed precision/recall: links with follow = true "
        "(p > the topic file's link threshold). word2vec here: People's Daily only (the test web is made of cnews "
        'articles, so cnews-trained vectors would have seen the test pages). "struct sample '
        "warm\": Algorithm 3's sample fed with the article pages whose page relevance passes "
        "the page threshold, as in a crawl.",
        "",
        "| similarity | ROC AUC | links | on-topic | link threshold | followed precision "
        "(harvest) | followed recall |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, auc, n, npos, hr, rec, th in rows:
        hr_s = "–" if hr != hr else f"{hr:.3f}"
        rec_s = "–" if rec != rec else f"{rec:.3f}"
        th_s = "–" if th != th else f"{th}"
        out.append(f"| {name} | **{auc:.3f}** | {n} | {npos} | {th_s} | {hr_s} | {rec_s} |")
    out += [
        "",
        f"Page relevance (formula 3 over title/description/keywords and text) of the "
        f"{len(arts)} article pages as a {CATEGORY} classifier:",
        "",
        "| similarity | page ROC AUC | page threshold | accepted | precision | recall |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| {label} | {auc:.3f} | {th} | {n} | {p:.3f} | {r:.3f} |"
        for label, auc, th, n, p, r in page_rows
    ]
    out.append("")
    print("\n".join(out[-(len(rows) + len(page_rows) + 14) :]), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="large", choices=["small", "large"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", help="write the figures as markdown to this file")
    ap.add_argument("--skip", nargs="*", default=[], choices=["speed", "wordsim", "urls", "auc"])
    args = ap.parse_args()

    t = time.perf_counter()
    hownet = HowNetSimilarity.from_dir()
    load_s = time.perf_counter() - t
    out = [
        "# Relevance engine benchmarks",
        "",
        f"Measured {dt.date.today().isoformat()} on the shared 2-core development machine "
        "(other jobs running; timings are the best of 5 interleaved repeats, rates the best of "
        "3 rounds). Reproduce:",
        "",
        "    python bench/relevance.py --scale large --write docs/benchmarks/relevance.md",
        "",
        "(the first run trains word2vec into .cache/vectors/ and builds the test web into "
        ".cache/; later runs reuse them.)",
        "",
        f"HowNet load (glossary.dat + WHOLE.DAT, parsed-dictionary cache warm if present): "
        f"{load_s:.2f} s",
        "",
    ]
    if "wordsim" not in args.skip:
        bench_wordsim(out, hownet)
    if "speed" not in args.skip:
        bench_speed(out, hownet, ["hownet"], "HowNet")
        ensure_vectors()
        bench_speed(out, hownet, ["hownet", "word2vec"], "HowNet + word2vec (Algorithm 1)")
    if "urls" in args.skip and "auc" in args.skip:
        pass
    else:
        web, truth = load_web(args.scale, args.seed)
        if "urls" not in args.skip:
            bench_urls(out, truth)
        if "auc" not in args.skip:
            pages = extract_pages(web, truth)
            bench_auc(out, pages, truth, hownet)
    if args.write:
        Path(args.write).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write).write_text("\n".join(out) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
