"""Every decision of the default dedup cascade, one line each, to compare two checkouts.

A speed change must not change what the cascade decides: run this in both trees and
``cmp`` the outputs (``cd <other checkout> && python /path/to/bench/dedup_decisions.py …``
uses that checkout's code: the script puts its working directory first on the path).

* ``--docs N``: the throughput benchmark's ``SentenceDocs`` (bench/dedup.py), documents
  ``d0 … d{N-1}`` checked and added in order into one index;
* each pairs file (``bench/neardup_real.py``'s ``pairs_tune.jsonl`` / ``pairs_unseen.jsonl``,
  ``bench/neardup_zh.py``'s ``pairs.jsonl``): every pair judged as bench/dedup.py judges it
  (a fresh index: ``a``, then ``b``), and the other way round; then all the set's pages
  through one index, in file order and reversed.

A line: the tag, the document, then the decision's duplicate, replaced, retired and
deferred matches (doc id, score to 12 places, method, ``replaces``).

    python bench/dedup_decisions.py --docs 5000 --out /tmp/dec.txt \\
        bench/out/neardup_real/pairs_tune.jsonl bench/out/neardup_real/pairs_unseen.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())

from dedup.base import Doc  # noqa: E402
from dedup.cascade import (  # noqa: E402
    DEFAULT_METHODS,
    EAGER_OPTIONS,
    LETTER_OPTIONS,
    Cascade,
    Decision,
)
from dedup.evaluate import DocCache, load_pairs  # noqa: E402


def _match(m) -> tuple | None:
    return None if m is None else (m.doc_id, round(m.score, 12), m.method, m.replaces)


def line(tag: str, key: object, d: Decision) -> str:
    return (f"{tag} {key} {_match(d.duplicate)} {_match(d.replaced)} "
            f"{[_match(m) for m in d.retired]} {[(_match(m), o) for m, o in d.deferred]}\n")  # fmt: skip


def _sentence_docs():
    spec = importlib.util.spec_from_file_location("bench_dedup", Path("bench") / "dedup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SentenceDocs()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="*", type=Path, help="pairs files of dedup sets")
    ap.add_argument("--docs", type=int, default=0, help="SentenceDocs documents")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--letters", action="store_true",
                    help="the default chain with dedup.cascade.LETTER_OPTIONS (exact on "
                         "letters, SpotSigs verifying letter candidates): diff against a run "
                         "without it")  # fmt: skip
    args = ap.parse_args(argv)
    opts = {k: dict(v) for k, v in (LETTER_OPTIONS if args.letters else EAGER_OPTIONS).items()}
    new = lambda: Cascade.from_config({"methods": list(DEFAULT_METHODS), **opts})  # noqa: E731
    with args.out.open("w", encoding="utf-8") as out:
        if args.docs:
            gen, c = _sentence_docs(), new()
            for i in range(args.docs):
                out.write(line("s", i, c.check_and_add(f"d{i}", Doc(gen.text(i)))))
            out.write(f"counts {dict(sorted(c.counts.items()))}\n")
        docs = DocCache()
        for path in args.pairs:
            pairs = load_pairs(path)
            tag = f"{path.parent.name}/{path.stem}"
            for n, pr in enumerate(pairs):
                for order, (x, y) in (("pair", (pr.a, pr.b)), ("pairrev", (pr.b, pr.a))):
                    c = new()
                    c.check_and_add("x", docs(x))
                    out.write(line(f"{tag}-{order}", n, c.check_and_add("y", docs(y))))
            pages = list(dict.fromkeys(p for pr in pairs for p in (pr.a, pr.b)))
            for order, seq in (("fwd", pages), ("rev", pages[::-1])):
                c = new()
                for p in seq:
                    key = p.relative_to(path.parent).as_posix()
                    out.write(line(f"{tag}-{order}", key, c.check_and_add(key, docs(p))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
