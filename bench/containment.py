"""Benchmark of the containment stage (dedup/containment.py) in the dedup cascade, before and
after issue 17, item 3 (a page that contains most of an accepted document is its duplicate,
whatever it adds), side by side in one run.

Seven cascades: ``exact,spotsigs`` (no containment); containment bounded by ``max_extra`` 0.4
in one direction (the default before item 3); unbounded, one direction (the default before
both crawl orders: ``reverse`` off); both directions without the deferred re-check and short
documents (``recheck`` 0, ``min_short`` 0: the default before them); both directions (the
default now: a new page contained in a stored one with spliced material replaces it); both directions without the spliced
guard (``spliced`` 0: the rule alone); and both directions with the posting-hit bound as the
candidate stage (``candidates="postings"``: exact, the default before span keys), so the
decisions the approximate span-key candidates change show side by side; and a seventh, span
keys from every posting-sampled shingle (``span_factor`` 1, before the sparser default 2); and
two cascades without SpotSigs (issue 13: a cheaper default measured, not adopted):
``exact,containment`` and ``containment`` alone, containment's defaults. Two label sets: *before* (a reprint followed by a
long commentary, kind ``commentary``, is a hard negative) and *after* (it is a duplicate of
its source, as ``bench/neardup_zh.py`` and the test web's ground truth now label it).

1. The dedup sets, precision and recall on the labelled pairs (fresh index per pair): the
   real-page set of issue 13 (``bench/neardup_real.py``, tune and unseen template splits: no
   commentary pairs) and the generated set (``bench/neardup_zh.py``: reprints,
   same-category articles, half a reprint, a reprint with long commentary, real pages), also
   with each pair checked the other way round (add ``b``, check ``a``). A pair is a hit when
   the second page is a duplicate of the first or replaces it.
2. The local test webs (family a and b, small, seeds 1 and 2): every article page's crawl
   text (``topicrawl.extract.extract_page``) goes through the cascade in URL order, as in a
   crawl, and in the reverse order (copies met before their sources). A copy is *caught* when
   it is matched to a page of its duplicate group, or replaced by one (the ground truth,
   after labels); a *false match* is a page matched (or replaced) outside its group.
   Commentary copies caught are counted apart (false matches under the labels before), and
   so are those whose source the index ends up holding instead of them. A stored copy the
   cascade retires (``Decision.retired``: a reprint with extras of the new page, taken out
   after another stored copy matched it; ``Decision.deferred``: a reprint with extras whose
   guard this page made hold, out as a duplicate of the original it holds) counts as that
   commentary copy caught, or as a false match outside its group. A dropped page whose
   duplicate record a later page takes over (``Decision.reattributed``: its better original,
   met after it) is counted under its new original instead of the old one. A dropped source
   taken back (``Decision.revived``: the stored page it was dropped for shown to be its
   reprint with extras once the articles that page spliced in are indexed) is applied as the
   store pipeline applies it: the source joins the corpus, its duplicate record is undone,
   and the stored page leaves the corpus as the source's duplicate (counted as a copy caught,
   as a replacement is).

    python bench/neardup_real.py --out bench/out/neardup_real
    python bench/neardup_zh.py --out bench/out/neardup_zh
    python bench/containment.py
    python bench/containment.py --growth 10000,50000   # the candidate stages' time alone
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dedup.base import Doc  # noqa: E402
from dedup.cascade import DEFAULT_METHODS, EAGER_OPTIONS, LETTER_OPTIONS, Cascade  # noqa: E402
from dedup.evaluate import DocCache, Scores, load_pairs  # noqa: E402
from dedup.storage import MemoryStorage  # noqa: E402

WITHOUT = [m for m in DEFAULT_METHODS if m != "containment"]
WITH = [*WITHOUT, "containment"]
#: (name, methods, options): the cascades compared, side by side.
CASCADES: list[tuple[str, list[str], dict]] = [
    (",".join(WITHOUT), WITHOUT, {}),
    (f"{','.join(WITH)}, max_extra 0.4, one direction (default before item 3)", WITH,
     {"containment": {"max_extra": 0.4, "reverse": False}}),
    (f"{','.join(WITH)}, no max_extra, one direction (default before both orders)", WITH,
     {"containment": {"reverse": False}}),
    (f"{','.join(WITH)}, both directions, no deferred re-check, no short documents (default "
     "before 2026-11-26's last change)", WITH, {"containment": {"recheck": 0, "min_short": 0}}),
    (f"{','.join(WITH)}, both directions (default now; since 2026-11-27 the chain before, EAGER_OPTIONS)", WITH, {}),
    (f"{','.join(WITH)}, both directions, spliced 0 (the rule alone)", WITH,
     {"containment": {"spliced": 0.0}}),
    (f"{','.join(WITH)}, both directions, posting-hit bound (the exact candidate stage "
     "before span keys)", WITH, {"containment": {"candidates": "postings"}}),
    (f"{','.join(WITH)}, both directions, span_factor 1 (span keys from every "
     "posting-sampled shingle, before the option)", WITH, {"containment": {"span_factor": 1}}),
    ("exact,containment (no SpotSigs; containment's defaults)", ["exact", "containment"], {}),
    ("containment alone (its defaults)", ["containment"], {}),
    (f"{','.join(WITH)}, exact on letters, SpotSigs on letter candidates (issue 13 item 5)",
     WITH, {k: dict(v) for k, v in LETTER_OPTIONS.items()}),
]  # fmt: skip


def with_eager(options: dict) -> dict:
    """A row's options over :data:`dedup.cascade.EAGER_OPTIONS` (the chain as every row before
    session 34 measured it: exact on tokens, SpotSigs' own LSH), unless the row sets them."""
    out = {k: dict(v) for k, v in EAGER_OPTIONS.items()}
    for k, v in options.items():
        out.setdefault(k, {}).update(v)
    return out


#: The orders the local webs' pages are checked in: URL order, and its reverse (a copy met
#: before its source).
ORDERS = ("URL order", "reversed")


def web_pages(family: str, seed: int) -> list[tuple[str, dict, Doc]]:
    """The article pages of one small test web in URL order: URL, its ground truth and the
    page's crawl text as a :class:`Doc` (``topicrawl.extract.extract_page``)."""
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
    return pages


def story_groups(pages: list[tuple[str, dict, Doc]]) -> dict[str, str]:
    """Each page's duplicate group (the ground truth's ``dup_group``, else the page itself),
    with the groups of original articles whose bodies are the same text merged: the article
    corpus holds one body twice, up to spaces, under two headlines (cn0199 and cn0518), and a
    copy matched to the other is a copy of the same story. Only originals count (no reprint
    with extras, no near miss), so an edited near miss stays apart from its original."""
    group = {u: (p.get("dup_group") or u) for u, p, _ in pages}
    parent: dict[str, str] = {}

    def find(g: str) -> str:
        while parent.get(g, g) != g:
            g = parent[g]
        return g

    first: dict[str, str] = {}  # a body's text -> the first group holding it
    for u, p, _ in pages:
        if p.get("reprint_of") or p.get("near_miss") or not p.get("body"):
            continue
        text = "".join("".join(p["body"]).split())
        a, b = find(first.setdefault(text, group[u])), find(group[u])
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {u: find(g) for u, g in group.items()}


def local_web(
    family: str, seed: int, cascades: list[tuple[str, list[str], dict]], order: str = ORDERS[0],
    pages: list[tuple[str, dict, Doc]] | None = None,
) -> list[dict]:
    """Each cascade's decisions on the article pages of one small test web (``pages``, else
    :func:`web_pages`), in URL order or its reverse (``order``). A page that replaces a stored
    one of its group (containment's reverse direction: the source met after its reprint with
    extras) counts as that copy caught, and the corpus then holds the source
    (``kept_source``)."""
    pages = list(web_pages(family, seed) if pages is None else pages)
    if order == ORDERS[1]:
        pages.reverse()
    group = story_groups(pages)
    commentary = {u for u, p, _ in pages if p.get("reprint_extras") == "commentary"}
    # the page each commentary copy reprints (its source, kept in the corpus when both met)
    source_of = {u: p.get("reprint_of") for u, p, _ in pages if u in commentary}
    outs = []
    for name, methods, options in cascades:
        cascade = Cascade(MemoryStorage(), methods, options=with_eager(options))
        out = {"cascade": name, "pages": len(pages), "copies": 0, "caught": 0, "false": 0,
               "commentary": len(commentary), "commentary_caught": 0, "by_method": {},
               "replaced": 0, "retired": 0, "reattributed": 0, "revived": 0,
               "misses": []}  # fmt: skip
        seen_groups: set[str] = set()
        kept: set[str] = set()  # the pages the index holds (the corpus)
        #: each page out of the corpus: its duplicate record's counts (what a re-attribution
        #: takes back) and whether it counts among the copies caught
        record: dict[str, tuple[dict[str, int], bool]] = {}

        def count(page: str, original: str, copy: bool, line: str, out: dict = out,
                  record: dict = record) -> None:  # fmt: skip
            """``page`` recorded as a duplicate of ``original`` (``copy``: counted among the
            copies caught when in its group)."""
            same = group.get(page) == group.get(original)
            got = {"caught": int(copy and same), "false": int(not same),
                   "commentary_caught": int(same and page in commentary)}  # fmt: skip
            for k, v in got.items():
                out[k] += v
            record[page] = (got, copy)
            if not same:
                out["misses"].append(f"false: {line}")

        for url, _page, doc in pages:
            decision = cascade.check_and_add(url, doc)
            dup = decision.duplicate
            g = group[url]
            out["copies"] += g in seen_groups
            if decision.replaced is not None:  # the new page kept, the stored one out
                rep = decision.replaced
                kept.discard(rep.doc_id)
                kept.add(url)
                out["replaced"] += 1
                out["by_method"][rep.method] = out["by_method"].get(rep.method, 0) + 1
                count(rep.doc_id, url, True,
                      f"{rep.doc_id} replaced by {url} ({rep.method} {rep.score:.2f})")  # fmt: skip
            elif dup is None:
                kept.add(url)
            for ret in decision.retired:  # a stored reprint with extras of this page, out
                kept.discard(ret.doc_id)
                out["retired"] += 1
                out["by_method"][ret.method] = out["by_method"].get(ret.method, 0) + 1
                count(ret.doc_id, url, False,
                      f"{ret.doc_id} retired by {url} ({ret.method} {ret.score:.2f})")  # fmt: skip
            for ret, original in decision.deferred:  # a stored reprint with extras, shown up
                kept.discard(ret.doc_id)  # by this page: out, a duplicate of ``original``
                out["retired"] += 1
                out["by_method"][ret.method] = out["by_method"].get(ret.method, 0) + 1
                count(ret.doc_id, original, False, f"{ret.doc_id} retired as a duplicate of "
                      f"{original} ({ret.method} {ret.score:.2f})")  # fmt: skip
            if dup is not None:
                out["by_method"][dup.method] = out["by_method"].get(dup.method, 0) + 1
                count(url, dup.doc_id, True, f"{url} ~ {dup.doc_id} ({dup.method} "
                      f"{dup.score:.2f})")  # fmt: skip
            elif g in seen_groups and decision.replaced is None:
                out["misses"].append(f"missed: {url}")
            # dropped sources taken back (Decision.revived), as the store pipeline does: the
            # stored page they were dropped for is out as their duplicate, the source is in
            for ret, page in getattr(decision, "revived", ()):
                kept.discard(ret.doc_id)
                kept.add(page)
                old, _copy = record.pop(page, ({}, True))
                for k, v in old.items():
                    out[k] -= v
                out["revived"] += 1
                out["misses"].append(f"revived: {page}, {ret.doc_id} out")
                out["by_method"][ret.method] = out["by_method"].get(ret.method, 0) + 1
                count(ret.doc_id, page, True, f"{ret.doc_id} retired, {page} revived "
                      f"({ret.method} {ret.score:.2f})")  # fmt: skip
            # dropped pages whose duplicate record now names this page (a better original)
            for m, before in getattr(decision, "reattributed", ()):
                old, copy = record.get(m.doc_id, ({}, True))
                for k, v in old.items():
                    out[k] -= v
                out["reattributed"] += 1
                out["misses"].append(f"re-attributed: {m.doc_id} from {before} to {url} "
                                     f"({m.method} {m.score:.2f})")  # fmt: skip
                count(m.doc_id, url, copy, f"{m.doc_id} re-attributed to {url} "
                      f"({m.method} {m.score:.2f})")  # fmt: skip
            seen_groups.add(g)
        out["kept_source"] = sum(source_of[u] in kept and u not in kept for u in commentary)
        outs.append(out)
    return outs


def decisions(
    pairs, docs: DocCache, methods: list[str], options: dict, reverse: bool = False
) -> list[bool]:
    """The cascade's decision on each pair (fresh index: add ``a``, check ``b``; with
    ``reverse``, add ``b``, check ``a``): a duplicate, or a replacement of the stored page."""
    out = []
    for p in pairs:
        first, second = (p.b, p.a) if reverse else (p.a, p.b)
        c = Cascade(MemoryStorage(), methods, options=with_eager(options))
        c.check_and_add("first", docs(first))
        d = c.check_and_add("second", docs(second))
        out.append(d.duplicate is not None or d.replaced is not None)
    return out


def scores(hits: list[bool], labels: list[int]) -> Scores:
    s = Scores("pairs")
    for hit, label in zip(hits, labels, strict=True):
        s.add(hit, label)
    return s


def load_set(path: Path) -> tuple[list, list[str], list[int], list[int]]:
    """Pairs, their kinds, the labels now and the labels before issue 17 item 3
    (``commentary`` pairs were negatives)."""
    pairs = load_pairs(path)
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    kinds = [r.get("kind", "?") for r in rows]
    after = [p.label for p in pairs]
    before = [0 if k == "commentary" else lab for k, lab in zip(kinds, after, strict=True)]
    return pairs, kinds, after, before


def timing(pairs, docs: DocCache, rounds: int = 4) -> dict[str, float]:
    """Milliseconds per document of ``check_and_add`` over every document of ``pairs`` into
    one index, the cascade without and with containment (default options) alternating round
    by round (median)."""
    import statistics
    import time

    paths = sorted({p for pair in pairs for p in (pair.a, pair.b)})
    texts = [docs(p) for p in paths]
    out: dict[str, list[float]] = {"without": [], "with": []}
    for r in range(rounds):
        order = (("without", WITHOUT), ("with", WITH))
        for name, methods in order if r % 2 == 0 else order[::-1]:
            c = Cascade(MemoryStorage(), methods, options=with_eager({}))
            t = time.perf_counter()
            for i, doc in enumerate(texts):
                c.check_and_add(str(i), doc)
            out[name].append((time.perf_counter() - t) / len(texts) * 1000)
    return {k: statistics.median(v) for k, v in out.items()} | {"docs": len(texts)}


#: the containment stages ``--growth`` compares: name -> ContainmentDetector options
STAGES: dict[str, dict] = {
    "spans": {},
    "spans, factor 1": {"span_factor": 1},
    "postings": {"candidates": "postings"},
}


def _rss() -> int:
    import os

    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def growth(sizes: list[int], modes: list[str], probe: int = 1000, batch: int = 50) -> None:
    """The containment stage alone with the candidate stages ``modes`` (:data:`STAGES`: span
    keys at the default factor, span keys from every posting-sampled shingle as before
    ``span_factor``, the posting-hit bound), on the throughput benchmark's documents
    (``SentenceDocs`` of bench/dedup.py: sentences shared by many documents): one index per
    (size, stage), built one after the other (index memory per document: RSS growth while
    building); then the same fresh documents checked and added in interleaved batches;
    median ms per document, and how many documents each stage decided unlike the first
    (building and probing)."""
    import gc
    import importlib.util
    import os
    import statistics
    import time

    from dedup.containment import ContainmentDetector

    spec = importlib.util.spec_from_file_location("bench_dedup", ROOT / "bench" / "dedup.py")
    bench_dedup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_dedup)
    gen = bench_dedup.SentenceDocs()
    idx, mem, decided = {}, {}, {}
    for size in sizes:
        for m in modes:
            gc.collect()
            before = _rss()
            det = ContainmentDetector(MemoryStorage(), **STAGES[m])
            got = []
            t = time.perf_counter()
            for i in range(size):
                g = det.check_and_add(f"d{i}", Doc(gen.text(i)))
                got.append(g.doc_id if g else None)
            gc.collect()
            mem[(size, m)] = (_rss() - before) / size / 1024
            idx[(size, m)], decided[(size, m)] = det, got
            print(f"  built {size:,} {m}: {time.perf_counter() - t:.0f} s, "
                  f"{mem[(size, m)]:.2f} KiB/doc", file=sys.stderr, flush=True)  # fmt: skip
    times: dict[tuple[int, str], list[float]] = {cell: [] for cell in idx}
    cells = list(idx)
    dups = {m: 0 for m in modes}
    for nb, b in enumerate(range(0, probe, batch)):
        docs = [Doc(gen.text(10**7 + b + i)) for i in range(batch)]
        for cell in cells if nb % 2 == 0 else cells[::-1]:
            t = time.perf_counter()
            got = [idx[cell].check_and_add(f"p{b + i}", d) for i, d in enumerate(docs)]
            times[cell].append((time.perf_counter() - t) / batch * 1000)
            decided[cell] += [g.doc_id if g else None for g in got]
            dups[cell[1]] += sum(g is not None for g in got)
    differ = {m: sum(sum(x != y for x, y in zip(decided[(s, m)], decided[(s, modes[0])],
                                                strict=True)) for s in sizes)
              for m in modes[1:]}  # fmt: skip
    print(f"## Containment alone on SentenceDocs: candidate stages side by side "
          f"(load average {os.getloadavg()[0]:.1f})\n")  # fmt: skip
    print("| indexed docs | " + " | ".join(f"{m} ms/doc" for m in modes) + " | "
          + " | ".join(f"{m} KiB/doc" for m in modes) + " |")  # fmt: skip
    print("|---|" + "---|" * (2 * len(modes)))
    med = {cell: statistics.median(v) for cell, v in times.items()}
    for size in sizes:
        print(f"| {size:,} | " + " | ".join(f"{med[(size, m)]:.3f}" for m in modes) + " | "
              + " | ".join(f"{mem[(size, m)]:.2f}" for m in modes) + " |")  # fmt: skip
    a, b = sizes[0], sizes[-1]
    print(f"\nGrowth {a:,} → {b:,}: " + ", ".join(
        f"{m} {med[(b, m)] / med[(a, m)]:.2f}×" for m in modes) + ". Duplicates found while "
          f"probing: {dups}; documents decided unlike {modes[0]} (building and probing, all "
          f"sizes): {differ}.\n")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real-set", default=str(ROOT / "bench" / "out" / "neardup_real"))
    ap.add_argument("--generated-set", default=str(ROOT / "bench" / "out" / "neardup_zh"))
    ap.add_argument("--skip-webs", action="store_true", help="only the dedup sets")
    ap.add_argument("--skip-sets", action="store_true", help="only the local webs")
    ap.add_argument("--sets", default=None, metavar="NAMES",
                    help="only these sets: tune, unseen, tune-rev, unseen-rev, gen, gen-rev "
                         "(e.g. tune,tune-rev,gen,gen-rev: the development sets; default all)")
    ap.add_argument("--webs", default="a1,a2,b1,b2",
                    help="local webs as FAMILY+SEED (default a1,a2,b1,b2; a1-a12 and b1-b12 "
                         "are development webs, where the spliced guard 0.1 was chosen; "
                         "a13-a20 and b13-b20 were first used for the figures of 2026-11-26 "
                         "in docs/benchmarks/clean-layouts.md and are development webs since; "
                         "a21-a28 and b21-b28 held out for the deferred re-check and short "
                         "documents, development webs since; a29-a36 and b29-b36 held out "
                         "for the letter measure of small documents, development webs since; "
                         "a37-a44 and b37-b44 held out for the small queries' posting "
                         "candidates and the short guard on letters, run once; a1-a56 and "
                         "b1-b56 are all development webs now; a62-a69 and b62-b69 held out "
                         "for the short documents' holders and the in-line cuts of "
                         "2026-11-27, run once; a1-a81 and b1-b81, a86-a93 and b86-b93 are "
                         "development webs since session 36; a94-a101 and b94-b101 held out "
                         "for session 36's stand-ins, run once; a1-a101 and b1-b101 are "
                         "development webs since session 37; a102-a109 and b102-b109 held "
                         "out for session 37's edit distance of short texts, run once)")  # fmt: skip
    ap.add_argument("--growth", default=None, metavar="SIZES",
                    help="only the candidate stages' time on SentenceDocs at these index "
                         "sizes (e.g. 10000,50000)")  # fmt: skip
    ap.add_argument("--stages", default="spans,spans1,postings",
                    help="with --growth: the candidate stages, of spans (the default), "
                         "spans1 (span_factor 1: the keys before the option), postings")  # fmt: skip
    ap.add_argument("--cascades", default=None, metavar="ROWS",
                    help="only these rows of CASCADES, numbered from 1 (e.g. 5,7,8: the "
                         "default, the posting-hit bound, span_factor 1; 5,9,10: the "
                         "default, exact,containment, containment alone)")  # fmt: skip
    args = ap.parse_args(argv)
    cascades = CASCADES if not args.cascades else [
        CASCADES[int(i) - 1] for i in args.cascades.split(",")]  # fmt: skip
    if args.growth:
        names = {"spans": "spans", "spans1": "spans, factor 1", "postings": "postings"}
        growth([int(x) for x in args.growth.split(",")],
               [names[x] for x in args.stages.split(",")])  # fmt: skip
        return 0
    webs = [(w[0], int(w[1:])) for w in args.webs.split(",") if w]
    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    logging.getLogger("htmldate").setLevel(logging.ERROR)
    real, gen = Path(args.real_set), Path(args.generated_set)
    docs = DocCache()
    sets = [("tune", "real tune (issue 13)", real / "pairs_tune.jsonl", False),
            ("unseen", "real unseen (issue 13)", real / "pairs_unseen.jsonl", False),
            ("tune-rev", "real tune, reversed (add b, check a)", real / "pairs_tune.jsonl", True),
            ("unseen-rev", "real unseen, reversed (add b, check a)", real / "pairs_unseen.jsonl",
             True),
            ("gen", "generated (neardup_zh)", gen / "pairs.jsonl", False),
            ("gen-rev", "generated, reversed (add b, check a)", gen / "pairs.jsonl", True)]  # fmt: skip
    if args.sets:
        wanted = args.sets.split(",")
        sets = [s for s in sets if s[0] in wanted]
    sets = [s[1:] for s in sets]
    print("## Dedup sets: P / R / F1 under the labels before and after (fresh index per pair)\n")
    print("| set | cascade | labels | P | R | F1 | TP | FP | FN | FP by kind | FN by kind |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for set_name, path, reverse in [] if args.skip_sets else sets:
        pairs, kinds, after, before = load_set(path)
        for name, methods, options in cascades:
            hits = decisions(pairs, docs, methods, options, reverse)
            for label_name, labels in (("before", before), ("after", after)):
                s = scores(hits, labels)
                fp: dict[str, int] = {}
                fn: dict[str, int] = {}
                for hit, lab, kind in zip(hits, labels, kinds, strict=True):
                    if hit and not lab:
                        fp[kind] = fp.get(kind, 0) + 1
                    elif lab and not hit:
                        fn[kind] = fn.get(kind, 0) + 1
                print(f"| {set_name} | {name} | {label_name} | {s.precision:.3f} | "
                      f"{s.recall:.3f} | {s.f1:.3f} | {s.tp} | {s.fp} | {s.fn} | "
                      f"{json.dumps(fp, ensure_ascii=False)} | "
                      f"{json.dumps(fn, ensure_ascii=False)} |", flush=True)  # fmt: skip
    print()
    t = timing(load_pairs(gen / "pairs.jsonl"), docs) if not args.skip_sets else None
    if t is not None:
        print(f"Time per document (check_and_add into one index of {t['docs']} generated-set "
          f"pages, median of 4 alternating rounds): {','.join(WITHOUT)} {t['without']:.2f} ms, "
              f"with containment {t['with']:.2f} ms ({t['with'] / t['without']:.2f}×)\n")  # fmt: skip
    if args.skip_webs:
        return 0
    print("## Local test webs: copies caught in crawl order and in reversed order (ground "
          "truth after the labels change)\n")  # fmt: skip
    print("| web | order | cascade | article pages | copies after the first of a group | "
          "caught (of which by replacing) | false matches | commentary copies caught | "
          "source kept, commentary out | re-attributed | by method |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    totals: dict[tuple[str, str], list[int]] = {}
    for order in ORDERS:
        for family, seed in webs:
            for r in local_web(family, seed, cascades, order):
                t = totals.setdefault((order, r["cascade"]), [0, 0, 0, 0, 0])
                for i, k in enumerate(("commentary_caught", "commentary", "kept_source",
                                       "false", "reattributed")):  # fmt: skip
                    t[i] += r[k]
                print(f"| {family}, seed {seed} | {order} | {r['cascade']} | {r['pages']} | "
                      f"{r['copies']} | {r['caught']} ({r['replaced']}) | {r['false']} | "
                      f"{r['commentary_caught']} of {r['commentary']} | {r['kept_source']} | "
                      f"{r['reattributed']} | {json.dumps(r['by_method'])} |",
                      flush=True)  # fmt: skip
                for line in r["misses"]:
                    print(f"  {family}{seed} {order} {r['cascade']}: {line}", file=sys.stderr)
    print(f"\n| order | cascade | commentary copies caught ({len(webs)} webs) | source kept, commentary "
          "out | false matches | duplicate records re-attributed |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for (order, name), (caught, n, kept, false, moved) in totals.items():
        print(f"| {order} | {name} | {caught} of {n} | {kept} of {n} | {false} | {moved} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
