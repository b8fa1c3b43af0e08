"""Benchmark of the containment stage (dedup/containment.py) in the dedup cascade.

1. The local test webs (family a and b, small, seeds 1 and 2): every article page's crawl
   text (``topicrawl.extract.extract_page``) goes through the cascade in URL order, as in a
   crawl. A reprint is *caught* when it is matched to a page of its duplicate group; a *false
   match* is any page matched to a page outside its group (a near miss — half an article, an
   article with long commentary — matched to its original counts here).
2. The dedup sets: precision and recall of the cascade with and without the containment
   stage on the labelled pairs (fresh index per pair) of ``bench/neardup_real.py`` (tune and
   unseen template splits) and ``bench/neardup_zh.py`` (reprints, same-category articles and
   the hard negatives: half a reprint, a reprint with long commentary). ``max_extra`` is
   chosen on the real tune pairs plus the generated set (the largest value that keeps the
   cascade's precision there) and reported on the real unseen pairs and the local webs.

    python bench/neardup_real.py --out bench/out/neardup_real
    python bench/neardup_zh.py --out bench/out/neardup_zh
    python bench/containment.py --real-set bench/out/neardup_real \
        --generated-set bench/out/neardup_zh

3. ``--splice θ,…`` (an experiment, not the product): before containment's cleaning, a block
   after a ``【…】`` header (a line, or inside a line between spaces) is cut when less than a
   share θ of its character bigrams occur in the text before it (an added block that shares
   almost no vocabulary with the article, like the demo's spliced jinghua-online page); the
   cascade's precision on the tune pairs (false matches per pair kind) and the local webs'
   commentary pages then matched.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dedup.base import Doc  # noqa: E402
from dedup.cascade import DEFAULT_METHODS, Cascade  # noqa: E402
from dedup.evaluate import DocCache, Scores, load_pairs  # noqa: E402
from dedup.storage import MemoryStorage  # noqa: E402

WITHOUT = [m for m in DEFAULT_METHODS if m != "containment"]
WITH = [*WITHOUT, "containment"]


def local_web(family: str, seed: int, methods: list[str], options: dict) -> dict:
    from sitegen.build import article_bodies, build_web
    from sitegen.family_b import build_web_b
    from topicrawl.extract import decode_html, extract_page

    with tempfile.TemporaryDirectory() as tmp:
        build = build_web if family == "a" else build_web_b
        truth = build(Path(tmp), scale="small", seed=seed)
        pages = []
        for url, page, body, header in article_bodies(Path(tmp), truth):
            html, _ = decode_html(body, header)
            ex = extract_page(html, url)
            pages.append((url, page, Doc(ex.text, ex.title, ex.description, url, ex.published)))
    group = {u: (p.get("dup_group") or u) for u, p, _ in pages}
    commentary = {u for u, p, _ in pages if p.get("near_miss") == "commentary"}
    reprints = {u for u, p, _ in pages if p.get("reprint_of")}
    cascade = Cascade(MemoryStorage(), methods, options=options)
    out = {"pages": len(pages), "reprints": len(reprints), "caught": 0, "false": 0,
           "by_method": {}, "misses": [], "commentary_matched": 0}  # fmt: skip
    seen_groups: set[str] = set()
    out["copies"] = 0
    for url, _page, doc in pages:
        dup = cascade.check_and_add(url, doc).duplicate
        g = group[url]
        out["copies"] += g in seen_groups
        if dup is not None:
            out["by_method"][dup.method] = out["by_method"].get(dup.method, 0) + 1
            if group.get(dup.doc_id) == g:
                out["caught"] += 1
            else:
                out["false"] += 1
                out["commentary_matched"] += url in commentary
                out["misses"].append(f"false: {url} ~ {dup.doc_id} ({dup.method} {dup.score:.2f})")
        elif g in seen_groups:
            out["misses"].append(f"missed: {url}")
        seen_groups.add(g)
    return out


_HEADER = re.compile(r"^\s*【[^】]{1,20}】\s*")
#: A header inside a line (a table cell's paragraphs joined by spaces): spaces around it.
_INLINE_HEADER = re.compile(r"\s+(?=【[^】]{1,20}】\s)")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def bigram_share(block: str, rest: str) -> float:
    """Share of the character bigrams of ``block`` (CJK only) that occur in ``rest``."""
    from collections import Counter

    def grams(t: str) -> Counter[str]:
        s = "".join(_CJK.findall(t))
        return Counter(s[i : i + 2] for i in range(len(s) - 1))

    b, r = grams(block), grams(rest)
    return sum(n for g, n in b.items() if g in r) / sum(b.values()) if b else 1.0


def splice_cut(text: str, theta: float) -> str:
    """``text`` without the block after its first ``【…】`` header line (the header too) when
    the block's :func:`bigram_share` in the text before is below ``theta``; a header inside a
    line between spaces (a layout-table cell) starts a line."""
    lines = _INLINE_HEADER.sub("\n", text).splitlines()
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m and i > 0:
            block = "\n".join([line[m.end() :], *lines[i + 1 :]])
            if bigram_share(block, "\n".join(lines[:i])) < theta:
                return "\n".join(lines[:i])
            break
    return text


def splice_experiment(pairs, kinds: list[str], docs: DocCache, thetas: list[float]) -> None:
    """Precision on ``pairs`` and the local webs' commentary pages matched when containment
    compares texts after :func:`splice_cut`."""
    import dedup.containment as dc

    plain = dc.cleaned
    print("## Removing a spliced block before containment (experiment)\n")
    print("| θ | tune P | tune R | FP | FP by kind | commentary pages matched on webs a1, a2, b1, b2 |")
    print("|---|---|---|---|---|---|")
    try:
        for theta in [0.0, *thetas]:
            dc.cleaned = lambda t, theta=theta: plain(splice_cut(t, theta))
            s, fp_kinds = Scores("splice"), {}
            for p, kind in zip(pairs, kinds, strict=True):
                c = Cascade(MemoryStorage(), WITH)
                c.check_and_add("a", docs(p.a))
                hit = c.check_and_add("b", docs(p.b)).duplicate is not None
                s.add(hit, p.label)
                if hit and not p.label:
                    fp_kinds[kind] = fp_kinds.get(kind, 0) + 1
            webs = [local_web(f, seed, WITH, {})["commentary_matched"]
                    for f, seed in (("a", 1), ("a", 2), ("b", 1), ("b", 2))]  # fmt: skip
            print(f"| {theta} | {s.precision:.3f} | {s.recall:.3f} | {s.fp} | "
                  f"{json.dumps(fp_kinds, ensure_ascii=False)} | {webs} |")  # fmt: skip
    finally:
        dc.cleaned = plain
    print()


def pair_scores(pairs, docs: DocCache, methods: list[str], options: dict, name: str) -> Scores:
    s = Scores(name)
    for p in pairs:
        c = Cascade(MemoryStorage(), methods, options=options)
        c.check_and_add("a", docs(p.a))
        s.add(c.check_and_add("b", docs(p.b)).duplicate is not None, p.label)
    return s


def timing(pairs, docs: DocCache, rounds: int = 4) -> dict[str, float]:
    """Milliseconds per document of ``check_and_add`` over every document of ``pairs`` into
    one index, the cascade without and with containment alternating round by round (median)."""
    import statistics
    import time

    paths = sorted({p for pair in pairs for p in (pair.a, pair.b)})
    texts = [docs(p) for p in paths]
    out: dict[str, list[float]] = {"without": [], "with": []}
    for r in range(rounds):
        order = (("without", WITHOUT), ("with", WITH))
        for name, methods in order if r % 2 == 0 else order[::-1]:
            c = Cascade(MemoryStorage(), methods)
            t = time.perf_counter()
            for i, doc in enumerate(texts):
                c.check_and_add(str(i), doc)
            out[name].append((time.perf_counter() - t) / len(texts) * 1000)
    return {k: statistics.median(v) for k, v in out.items()} | {"docs": len(texts)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real-set", default=str(ROOT / "bench" / "out" / "neardup_real"))
    ap.add_argument("--generated-set", default=str(ROOT / "bench" / "out" / "neardup_zh"))
    ap.add_argument("--extras", default="0.2,0.3,0.4,0.5,0.6")
    ap.add_argument("--splice", default="", help="θ values for the spliced-block experiment")
    args = ap.parse_args(argv)
    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    logging.getLogger("htmldate").setLevel(logging.ERROR)
    extras = [float(x) for x in args.extras.split(",")]
    real = Path(args.real_set)
    docs = DocCache()
    tune = load_pairs(real / "pairs_tune.jsonl")
    tune += load_pairs(Path(args.generated_set) / "pairs.jsonl")
    unseen = load_pairs(real / "pairs_unseen.jsonl")
    print("## Dedup sets: cascade with and without containment (fresh index per pair)\n")
    print("| set | cascade | max_extra | P | R | F1 | FP |")
    print("|---|---|---|---|---|---|---|")
    base = pair_scores(tune, docs, WITHOUT, {}, "tune")
    print(f"| real tune + generated | {','.join(WITHOUT)} | - | {base.precision:.3f} | {base.recall:.3f} | "
          f"{base.f1:.3f} | {base.fp} |")  # fmt: skip
    best = None
    for x in extras:
        s = pair_scores(tune, docs, WITH, {"containment": {"max_extra": x}}, "tune")
        print(f"| real tune + generated | {','.join(WITH)} | {x} | {s.precision:.3f} | {s.recall:.3f} | "
              f"{s.f1:.3f} | {s.fp} |")  # fmt: skip
        # the largest max_extra that keeps the base precision on tune
        if s.precision >= base.precision and (best is None or x > best):
            best = x
    chosen = {"containment": {"max_extra": best if best is not None else min(extras)}}
    sets = [("real, unseen", unseen)]
    for label, pairs in sets:
        for methods, opts in ((WITHOUT, {}), (WITH, chosen)):
            s = pair_scores(pairs, docs, methods, opts, label)
            x = opts.get("containment", {}).get("max_extra", "-")
            print(f"| {label} | {','.join(methods)} | {x} | {s.precision:.3f} | "
                  f"{s.recall:.3f} | {s.f1:.3f} | {s.fp} |")  # fmt: skip
    print(f"\nmax_extra chosen on tune: {chosen['containment']['max_extra']}\n")
    t = timing(load_pairs(Path(args.generated_set) / "pairs.jsonl"), docs)
    print(f"Time per document (check_and_add into one index of {t['docs']} generated-set "
          f"pages, median of 4 alternating rounds): {','.join(WITHOUT)} {t['without']:.2f} ms, "
          f"with containment {t['with']:.2f} ms ({t['with'] / t['without']:.2f}×)\n")  # fmt: skip
    if args.splice:
        kinds = [json.loads(x).get("kind", "?") for f in (real / "pairs_tune.jsonl",
                 Path(args.generated_set) / "pairs.jsonl") for x in open(f, encoding="utf-8")
                 if x.strip()]  # fmt: skip
        splice_experiment(tune, kinds, docs, [float(x) for x in args.splice.split(",")])
    print("## Local test webs: reprints caught in crawl order\n")
    print("| web | cascade | article pages | copies after the first of a group | caught | "
          "false matches | by method |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for family, seed in (("a", 1), ("a", 2), ("b", 1), ("b", 2)):
        for methods, opts in ((WITHOUT, {}), (WITH, chosen)):
            r = local_web(family, seed, methods, opts)
            print(f"| {family}, seed {seed} | {','.join(methods)} | {r['pages']} | {r['copies']} | "
                  f"{r['caught']} | {r['false']} | {json.dumps(r['by_method'])} |")  # fmt: skip
            for line in r["misses"]:
                print(f"  {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
