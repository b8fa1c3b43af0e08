"""Diagnostics of a dedup cascade without SpotSigs (issue 13; docs/benchmarks/dedup.md, "A
cascade without SpotSigs"): what ``exact,containment`` misses on the real-page set and why,
and what an exact stage on letters (no segmentation) costs and decides.

1. The real-page set's reprints that ``exact,containment`` and the default miss, by the
   reprint's random edits (with and without traditional characters), in both orders.
2. The misses without traditional characters: c(A, B) and c(B, A) on exact 8-letter
   shingles of the cleaned texts (``dedup.containment.cleaned``, ``shingle_hashes``).
3. Both chains on texts converted to simplified characters first (``to_simplified``): how
   much recall a conversion in containment would recover.
4. ``exact-letters,containment`` (``letters_fingerprint`` of bench/dedup.py) against
   ``exact,containment`` on the three sets in both orders, and the two fingerprints' time
   on ``SentenceDocs`` texts (median of 6 alternating rounds).

    python bench/nospot_diag.py [--real-set bench/out/neardup_real]
                                [--generated-set bench/out/neardup_zh]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checkouts import load_module  # noqa: E402
from dedup.containment import cleaned, letter_codes, shingle_hashes  # noqa: E402
from dedup.evaluate import DocCache  # noqa: E402
from dedup.exact import token_fingerprint  # noqa: E402
from dedup.text import to_simplified  # noqa: E402

DEFAULT = ["exact", "spotsigs", "containment"]
NO_SPOT = ["exact", "containment"]
EDITS = ("truncated", "ads", "traditional", "reparagraph")



def containment_pair(a, b, k: int = 8) -> tuple[float, float]:
    """c(A, B) and c(B, A) on every ``k``-letter shingle of the cleaned texts."""
    ha, hb = ({int(x) for x in shingle_hashes(letter_codes(cleaned(d.text, d.title).lower()), k)}
              for d in (a, b))  # fmt: skip
    common = len(ha & hb)
    return common / max(1, len(ha)), common / max(1, len(hb))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real-set", default=str(ROOT / "bench" / "out" / "neardup_real"))
    ap.add_argument("--generated-set", default=str(ROOT / "bench" / "out" / "neardup_zh"))
    args = ap.parse_args(argv)
    bc = load_module("bench_containment", ROOT / "bench" / "containment.py")
    bd = load_module("bench_dedup", ROOT / "bench" / "dedup.py")
    bd.register_letters_exact()
    docs = DocCache()

    def simplified(path):
        d = docs(path)
        return dataclasses.replace(d, text=to_simplified(d.text), title=to_simplified(d.title))

    for split in ("tune", "unseen"):
        path = Path(args.real_set) / f"pairs_{split}.jsonl"
        pairs, _kinds, after, _before = bc.load_set(path)
        rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
        for reverse in (False, True):
            no_spot = bc.decisions(pairs, docs, NO_SPOT, {}, reverse)
            default = bc.decisions(pairs, docs, DEFAULT, {}, reverse)
            pos, miss, miss_d = (collections.Counter() for _ in range(3))
            shares = []
            for hit, hit_d, row, p in zip(no_spot, default, rows, pairs, strict=True):
                if row["label"] != 1:
                    continue
                trad = "traditional" in row.get("edits", [])
                key = "with traditional" if trad else "without traditional"
                pos[key] += 1
                miss[key] += not hit
                miss_d[key] += not hit_d
                if not hit and not trad and not reverse:
                    shares.append(containment_pair(docs(p.a), docs(p.b)))
            order = "reversed" if reverse else "forward"
            print(f"real {split}, {order}: missed by exact,containment / by the default / "
                  "reprints: " + "; ".join(f"{k} {miss[k]} / {miss_d[k]} / {pos[k]}"
                                           for k in sorted(pos)))  # fmt: skip
            if shares:
                print("  misses without traditional characters, (c(A, B), c(B, A)): "
                      + ", ".join(f"({x:.2f}, {y:.2f})" for x, y in shares))  # fmt: skip
        for methods in (NO_SPOT, DEFAULT):
            s = bc.scores(bc.decisions(pairs, simplified, methods, {}), after)
            print(f"real {split}, texts simplified first, {','.join(methods)}: P "
                  f"{s.precision:.3f} R {s.recall:.3f} F1 {s.f1:.3f} FP {s.fp} FN {s.fn}")
    sets = [("real tune", Path(args.real_set) / "pairs_tune.jsonl"),
            ("real unseen", Path(args.real_set) / "pairs_unseen.jsonl"),
            ("generated", Path(args.generated_set) / "pairs.jsonl")]  # fmt: skip
    for name, path in sets:
        pairs, _kinds, after, _before = bc.load_set(path)
        for reverse in (False, True):
            got = []
            for methods in (NO_SPOT, ["exact-letters", "containment"]):
                s = bc.scores(bc.decisions(pairs, docs, methods, {}, reverse), after)
                got.append(f"{','.join(methods)} P {s.precision:.3f} R {s.recall:.3f} "
                           f"FP {s.fp} FN {s.fn}")  # fmt: skip
            print(f"{name}{', reversed' if reverse else ''}: " + " | ".join(got), flush=True)
    from topicrawl.segment import memo_clear, segment_zh

    gen = bd.SentenceDocs()
    segment_zh("预热分词词典")
    texts = [gen.text(10**7 + i) for i in range(2000)]
    funcs = {"token": token_fingerprint, "letters": bd.letters_fingerprint}
    times: dict[str, list[float]] = {k: [] for k in funcs}
    for r in range(6):
        for name, f in list(funcs.items())[:: 1 if r % 2 == 0 else -1]:
            memo_clear()
            t = time.perf_counter()
            for x in texts:
                f(x)
            times[name].append((time.perf_counter() - t) / len(texts) * 1000)
    print("fingerprint ms/doc (2,000 SentenceDocs texts, segmentation included for tokens): "
          + ", ".join(f"{k} {statistics.median(v):.4f}" for k, v in times.items()))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
