"""``topicrawl similarity``, ``topicrawl vectors train`` and ``topicrawl topic ...``."""

from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

from topicrawl.errors import ConfigError, TopicFileError


def _quiet(args) -> None:
    """gensim logs every load and epoch at INFO; keep that for -v."""
    if not getattr(args, "verbose", False):
        logging.getLogger("gensim").setLevel(logging.WARNING)


def register(subparsers) -> None:
    # -- similarity ------------------------------------------------------------------------
    p = subparsers.add_parser(
        "similarity",
        help="word similarity of each source (WORD WORD), or `eval FILE` on a gold set",
        description="`topicrawl similarity WORD WORD` prints the score of each source (HowNet, "
        "Cilin, word2vec), of the HowNet + Cilin hybrid and of Algorithm 1 over each "
        "dictionary source; `topicrawl similarity eval FILE` prints, for each, Spearman over "
        "the covered pairs, coverage, Spearman over all pairs (uncovered = 0) and Pearson "
        "on word<TAB>word<TAB>score lines.",
    )
    p.add_argument("words", nargs=2, metavar="WORD", help="two words, or: eval FILE")
    p.add_argument("--topic", help="take sources and parameters from this topic file")
    p.add_argument("--hownet", help="directory with glossary.dat + WHOLE.DAT (default: shared)")
    p.add_argument("--vectors", help="word2vec file (text/.bin/gensim)")
    p.add_argument("--openhownet", help="OpenHowNet resources directory (installed)")
    p.add_argument("--cilin", help="Tongyici Cilin cilin_ext.txt (default: shared)")
    p.add_argument("--cilin-method", default="ic", choices=["ic", "path"],
                   help="ic: 彭琦 et al. 2018 (default); path: 陈宏朝 et al. 2016")  # fmt: skip
    p.add_argument("--hybrid-weight", type=float, default=0.9,
                   help="λ of HowNet in the hybrid (%(default)s)")  # fmt: skip
    p.add_argument("--step1", default="paper", choices=["paper", "cut"],
                   help="Algorithm 1 step 1 (paper: SimD < Th1 => Sim = 0)")  # fmt: skip
    p.add_argument("--half", default="all", choices=["all", "tune", "held"],
                   help="eval on the whole set or one half of its fixed random split")  # fmt: skip
    p.add_argument("--split-seed", type=int, default=0, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_similarity)

    # -- vectors ---------------------------------------------------------------------------
    v = subparsers.add_parser("vectors", help="word2vec vectors").add_subparsers(
        dest="vectors_command", metavar="ACTION"
    )
    t = v.add_parser("train", help="train Word2Vec on corpus files and/or a crawled run")
    t.add_argument("--corpus", nargs="+", default=[], metavar="PATH", help="text files")
    t.add_argument("--from-run", type=int, metavar="ID", help="also train on a crawled run")
    t.add_argument("--db", help="database URL for --from-run (default: $TOPICRAWL_DB_URL)")
    t.add_argument("--out", required=True, help=".kv (gensim), .bin or .txt (word2vec)")
    from relevance.vectors import TRAIN_DEFAULTS as D

    t.add_argument("--model", default=D["model"], choices=["word2vec", "fasttext"],
                   help=f"gensim model ({D['model']}); fasttext also gives vectors to unseen "
                   "words from their characters")  # fmt: skip
    t.add_argument("--arch", default="skipgram" if D["sg"] else "cbow",
                   choices=["skipgram", "cbow"], help="(%(default)s)")  # fmt: skip
    t.add_argument("--size", type=int, default=D["vector_size"], help="dimensions (%(default)s)")
    t.add_argument("--window", type=int, default=D["window"], help="(%(default)s)")
    t.add_argument("--min-count", type=int, default=D["min_count"], help="(%(default)s)")
    t.add_argument("--epochs", type=int, default=D["epochs"], help="(%(default)s)")
    t.add_argument("--min-n", type=int, default=D["min_n"],
                   help="fastText: shortest character n-gram (%(default)s)")  # fmt: skip
    t.add_argument("--max-n", type=int, default=D["max_n"],
                   help="fastText: longest character n-gram (%(default)s)")  # fmt: skip
    t.add_argument("--workers", type=int, default=1,
                   help="training threads (1: reproducible vectors; more: faster, not "
                   "reproducible)")  # fmt: skip
    t.set_defaults(func=cmd_vectors_train)

    # -- topic -----------------------------------------------------------------------------
    tp = subparsers.add_parser("topic", help="create, edit, check and tune topic files")
    ts = tp.add_subparsers(dest="topic_command", metavar="ACTION")

    x = ts.add_parser("init", help="create a topic file from the documented template")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("--name", required=True, help="the topic's name, e.g. 时政")
    x.add_argument("--language", default="zh", choices=["zh", "en"], help="zh or en (zh)")
    x.add_argument("--words-from", help="a file with one topic word a line (word<TAB>... ok)")
    x.add_argument("--limit", type=int, help="take only the first N words of --words-from")
    x.add_argument("--force", action="store_true", help="overwrite an existing file")
    x.set_defaults(func=cmd_topic_init)

    x = ts.add_parser("add", help="add topic words (or re-weight them)")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("words", nargs="+", help="topic words")
    x.add_argument("--weight", type=float, default=1.0, help="their weight in [0, 1] (1.0)")
    x.add_argument("--override", action="store_true", help="write to [overrides]")
    x.set_defaults(func=cmd_topic_add)

    x = ts.add_parser("remove", help="remove topic words")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("words", nargs="+", help="topic words")
    x.set_defaults(func=cmd_topic_remove)

    x = ts.add_parser("set", help="set a parameter: KEY is name or table.key")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("key", help="name or table.key, e.g. page.threshold")
    x.add_argument("value", help="the new value (TOML syntax: 0.3, true, \"text\")")
    x.set_defaults(func=cmd_topic_set)

    x = ts.add_parser("show", help="print the topic's words, weights and parameters")
    x.add_argument("file", help="the topic file (TOML)")
    x.set_defaults(func=cmd_topic_show)

    x = ts.add_parser("validate", help="check the file and that its sources load")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("--no-load", action="store_true", help="only check the file itself")
    x.set_defaults(func=cmd_topic_validate)

    x = ts.add_parser("weights", help="formula 2 weights of the topic words from a corpus")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("--corpus", nargs="+", required=True, metavar="PATH", help="text files")
    x.add_argument("--label", help="only corpus lines label<TAB>text with this label")
    x.add_argument("--dry-run", action="store_true", help="print, do not write")
    x.set_defaults(func=cmd_topic_weights)

    x = ts.add_parser("suggest", help="propose new topic words with scores")
    x.add_argument("file", help="the topic file (TOML)")
    x.add_argument("--topn", type=int, default=20, help="how many words to propose (20)")
    x.add_argument("--per-word", type=int, default=10, help="neighbours per topic word (10)")
    x.set_defaults(func=cmd_topic_suggest)

    x = ts.add_parser("learn", help="write what a crawl learned into the topic file")
    x.add_argument("file", help="topic file to update")
    x.add_argument("--run", type=int, required=True, metavar="ID", help="crawl run id")
    x.add_argument("--db", help="database URL (default: $TOPICRAWL_DB_URL)")
    x.add_argument("--model-out", help="where to save the page model (default: "
                   "<topic stem>.model.json beside the topic file)")  # fmt: skip
    x.add_argument("--suggest", type=int, default=20, help="suggested words to record (20)")
    x.add_argument("--add", type=int, default=0, metavar="N",
                   help="also add the best N suggested words to [words]")  # fmt: skip
    x.add_argument("--weight", type=float, default=0.5, help="weight of added words (0.5)")
    x.set_defaults(func=cmd_topic_learn)

    x = ts.add_parser("tune", help="search formula 5 parameters on a crawled run")
    x.add_argument("file", nargs="?", help="topic file to update with --write")
    x.add_argument("--run", type=int, required=True, metavar="ID", help="crawl run id")
    x.add_argument("--labels", required=True, help="JSON/TSV url labels or ground_truth.json")
    x.add_argument("--category", help="on-topic category (for ground_truth.json)")
    x.add_argument("--recall", type=float, default=0.8, help="required recall (0.8)")
    x.add_argument("--db", help="database URL (default: $TOPICRAWL_DB_URL)")
    x.add_argument("--top", type=int, default=15, help="rows to print")
    x.add_argument("--write", action="store_true", help="write the best row into FILE")
    x.set_defaults(func=cmd_topic_tune)


# --- similarity ---------------------------------------------------------------------------


def _combos(parts: dict, th: dict) -> dict:
    """Every source alone, then every combination the topic/options allow."""
    from relevance.combined import CombinedSimilarity, HybridSimilarity

    out = dict(parts)
    h = parts.get("hownet") or parts.get("openhownet")
    c, v = parts.get("cilin"), parts.get("word2vec")
    hybrid = None
    if h is not None and c is not None:
        hybrid = out["hybrid"] = HybridSimilarity(h, c, weight=th.pop("hybrid_weight", 0.9))
    th.pop("hybrid_weight", None)
    if v is not None:
        for name, d in (("hownet", h), ("cilin", c), ("hybrid", hybrid)):
            if d is not None:
                out[f"algorithm1({name}+word2vec)"] = CombinedSimilarity(d, v, **th)
    return out


def _sources(args) -> dict:
    """name -> source: each source, the hybrid, Algorithm 1 over each dictionary source."""
    parts: dict = {}
    th: dict = {}
    if args.topic:
        from relevance.priority import build_similarity
        from relevance.topic import load_topic

        topic = load_topic(args.topic)
        comb = build_similarity(topic)
        d = comb.dictionary
        if d is not None and d.name == "hybrid":
            parts[d.hownet.name] = d.hownet
            parts["cilin"] = d.cilin
        elif d is not None:
            parts[d.name] = d
        if comb.vectors is not None:
            parts["word2vec"] = comb.vectors
        s = topic.similarity
        th = dict(th1=s.th1, th2=s.th2, alpha=s.alpha, beta=s.beta, step1=s.step1)
        th["hybrid_weight"] = s.hybrid_weight
        return _combos(parts, th)
    from relevance.openhownet import RESOURCE_FILES, OpenHowNetSimilarity, resource_root

    if args.openhownet:
        parts["openhownet"] = OpenHowNetSimilarity.from_resources(args.openhownet)
    else:
        from relevance.hownet import HowNetSimilarity

        parts["hownet"] = HowNetSimilarity.from_dir(args.hownet)
        root = resource_root(None) / "resources"
        if all((root / f).exists() for f in RESOURCE_FILES):  # installed: show it too
            parts["openhownet"] = OpenHowNetSimilarity.from_resources(None)
    from relevance.cilin import CilinSimilarity

    parts["cilin"] = CilinSimilarity.from_path(args.cilin, method=args.cilin_method)
    if args.vectors:
        from relevance.vectors import VectorSimilarity

        parts["word2vec"] = VectorSimilarity.from_path(args.vectors)
    th = {"step1": args.step1, "hybrid_weight": args.hybrid_weight}
    return _combos(parts, th)


def cmd_similarity(args) -> int:
    _quiet(args)
    a, b = args.words
    if a == "eval":
        return _similarity_eval(args, b)
    for name, src in _sources(args).items():
        known = all(w in src for w in (a, b))
        note = "" if known else "  (not covered)"
        print(f"{name:27s} {src.similarity(a, b):.4f}{note}")
    return 0


def _similarity_eval(args, path: str) -> int:
    from relevance.evaluate import (
        compare_on_part_pairs,
        evaluate_similarity,
        read_pairs,
        split_pairs,
    )

    pairs = read_pairs(path)
    if args.half != "all":
        tune, held = split_pairs(pairs, seed=args.split_seed)
        pairs = tune if args.half == "tune" else held
    print(f"{path}: {len(pairs)} pairs ({args.half})")
    print(
        f"{'source':27s} {'spearman(covered)':>17s} {'coverage':>9s} {'spearman(all)':>13s} "
        f"{'pearson(covered)':>16s}"
    )
    sources = _sources(args)
    for name, src in sources.items():
        r = evaluate_similarity(name, pairs, src.similarity, src.__contains__)
        print(
            f"{name:27s} {_fmt(r.spearman_covered):>17s} "
            f"{r.covered:4d}/{r.pairs:<4d} {_fmt(r.spearman_all):>13s} "
            f"{_fmt(r.pearson_covered):>16s}"
        )
    rows = [(name, part) for name in sources for part in _parts_of(name, sources)]
    if rows:
        print("\ncombination vs each part, Spearman on the pairs the part covers:")
        print(f"{'combination':27s} {'part':10s} {'pairs':>5s} {'combination':>11s} {'part':>6s}")
    for name, part in rows:
        comb, own = sources[name], sources[part]
        n, rc, rp = compare_on_part_pairs(pairs, comb.similarity, own.similarity, own.__contains__)
        print(f"{name:27s} {part:10s} {n:5d} {_fmt(rc):>11s} {_fmt(rp):>6s}")
    return 0


def _parts_of(name: str, sources: dict) -> list[str]:
    """The parts of a combination row of :func:`_combos` ([] for a single source)."""
    if name == "hybrid":
        return ["hownet" if "hownet" in sources else "openhownet", "cilin"]
    if name.startswith("algorithm1(") and name.endswith("+word2vec)"):
        return [name[len("algorithm1(") : -len("+word2vec)")], "word2vec"]
    return []


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"


# --- vectors ------------------------------------------------------------------------------


def cmd_vectors_train(args) -> int:
    _quiet(args)
    from relevance.vectors import train_vectors

    texts = None
    if args.from_run is not None:
        texts = _run_texts(args.db, args.from_run)
    if not args.corpus and texts is None:
        raise ConfigError("give --corpus PATH... and/or --from-run ID")
    kv = train_vectors(
        args.corpus,
        args.out,
        texts=texts,
        model=args.model,
        sg=1 if args.arch == "skipgram" else 0,
        vector_size=args.size,
        window=args.window,
        min_count=args.min_count,
        epochs=args.epochs,
        min_n=args.min_n,
        max_n=args.max_n,
        workers=args.workers,
    )
    print(f"wrote {args.out}: {len(kv.key_to_index)} words x {kv.vector_size} ({args.model})")
    return 0


def _run_texts(db: str | None, run_id: int):
    """Texts of a crawled run: cleaned documents when present, else accepted pages."""
    from models.store import Store

    store = Store.from_url(db)
    if store.get_run(run_id) is None:
        raise ConfigError(f"run {run_id} not found in the database")

    def gen():
        n = 0
        for d in store.iter_documents(run_id):
            n += 1
            yield "\n".join(x for x in (d.title, d.text) if x)
        if n == 0:
            for p in store.iter_pages(run_id, accepted_only=True):
                yield "\n".join(x for x in (p.title, p.text) if x)

    return gen()


# --- topic --------------------------------------------------------------------------------


def _read(path: str) -> str:
    p = Path(path)
    if not p.exists():
        raise TopicFileError(
            "topic file not found (create one with: topicrawl topic init FILE --name NAME)",
            path=path,
        )
    return p.read_text(encoding="utf-8")


def cmd_topic_init(args) -> int:
    from relevance.topicedit import init_text
    from topicrawl.files import write_atomic

    p = Path(args.file)
    if p.exists() and not args.force:
        raise TopicFileError("file exists (use --force to overwrite)", path=args.file)
    words: dict[str, float] = {}
    if args.words_from:
        src = Path(args.words_from)
        if not src.exists():
            raise ConfigError(f"{src} not found")
        for line in src.read_text(encoding="utf-8").splitlines():
            w = line.split("\t")[0].strip()
            if w and not w.startswith("#"):
                words[w] = 1.0
            if args.limit and len(words) >= args.limit:
                break
    text = init_text(args.name, args.language, words)
    if words:
        from relevance.topic import parse_topic

        parse_topic(text, path=args.file)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, text)
    print(f"wrote {p} ({len(words)} words)")
    return 0


def cmd_topic_add(args) -> int:
    from relevance.topicedit import add_words
    from topicrawl.files import write_atomic

    text = add_words(
        _read(args.file),
        args.words,
        weight=args.weight,
        table="overrides" if args.override else "words",
        path=args.file,
    )
    write_atomic(args.file, text)
    print(f"{args.file}: added {len(args.words)} word(s)")
    return 0


def cmd_topic_remove(args) -> int:
    from relevance.topicedit import remove_words
    from topicrawl.files import write_atomic

    write_atomic(args.file, remove_words(_read(args.file), args.words, path=args.file))
    print(f"{args.file}: removed {len(args.words)} word(s)")
    return 0


def cmd_topic_set(args) -> int:
    from relevance.topicedit import set_value
    from topicrawl.files import write_atomic

    write_atomic(args.file, set_value(_read(args.file), args.key, args.value, path=args.file))
    print(f"{args.file}: {args.key} = {args.value}")
    return 0


def cmd_topic_show(args) -> int:
    from relevance.topic import load_topic
    from relevance.topicedit import show

    print(show(load_topic(args.file)))
    return 0


def cmd_topic_validate(args) -> int:
    _quiet(args)
    from relevance.topic import load_topic

    topic = load_topic(args.file)
    if not args.no_load:
        from relevance.priority import affinity_table, build_similarity

        sim = build_similarity(topic)
        affinity_table(topic, lambda: sim)  # the table a crawl reads instead of the dictionary
        unknown = [w for w in topic.weights if w not in sim]
        if unknown:
            print(
                f"note: {len(unknown)} topic word(s) unknown to every source "
                f"(matched only literally): {', '.join(unknown[:20])}"
                + (" ..." if len(unknown) > 20 else ""),
                file=sys.stderr,
            )
        if topic.classifier is not None:
            from relevance.priority import build_classifier, build_relevance

            clf = build_classifier(topic, build_relevance(topic, sim))
            print(
                f"classifier: {clf.examples} examples ({clf.positives} on-topic: "
                f"{', '.join(topic.classifier.positive)}), {clf.vocabulary_size} words, "
                f"weight {topic.classifier.weight}"
            )
        if topic.priority.mode == "calibrated":  # its seeded page model (segmented examples)
            from relevance.calibrated import CalibratedLinkScorer

            CalibratedLinkScorer.from_topic(topic)
        from topicrawl import modelcache

        if modelcache.enabled():  # what a crawl of this topic now reads at start-up
            print(f"start-up cache warm: {modelcache.cache_dir()}")
    print(f"{args.file}: ok ({topic.name}, {len(topic.weights)} words)")
    return 0


def cmd_topic_weights(args) -> int:
    from relevance.topic import load_topic
    from relevance.topicedit import add_words
    from relevance.weights import formula2_weights, read_documents
    from topicrawl.files import write_atomic

    topic = load_topic(args.file)
    weights = formula2_weights(read_documents(args.corpus, label=args.label), list(topic.words))
    weights = {w: round(v, 4) for w, v in weights.items()}
    for w, v in sorted(weights.items(), key=lambda t: (-t[1], t[0])):
        print(f"{v:7.4f}  {w}")
    if not args.dry_run:
        write_atomic(args.file, add_words(topic.raw, weights, path=args.file))
        print(f"{args.file}: wrote {len(weights)} weights to [words]")
    return 0


def cmd_topic_suggest(args) -> int:
    _quiet(args)
    from relevance.priority import build_similarity
    from relevance.topic import load_topic

    topic = load_topic(args.file)
    sim = build_similarity(topic)
    weights = topic.weights
    scores: dict[str, float] = {}
    for w, wt in weights.items():
        for cand, s in sim.most_similar(w, topn=args.per_word):
            if cand in weights or cand in topic.overrides:
                continue
            scores[cand] = scores.get(cand, 0.0) + wt * s * s
    if not scores:
        print("no suggestions (the sources know none of the topic words)")
        return 0
    top = max(scores.values())
    print("score   word  (Σ_t w_t·Sim², scaled to the best; add with: topicrawl topic add)")
    for cand, s in sorted(scores.items(), key=lambda t: (-t[1], t[0]))[: args.topn]:
        print(f"{s / top:6.3f}  {cand}")
    return 0


def cmd_topic_learn(args) -> int:
    """Save the page model a calibrated-mode run learned beside the topic file, name it in
    ``[learning] model`` (the next crawl starts from it), and record the words it found
    most on-topic in ``[learning] suggested`` (``--add N``: the best N into ``[words]``)."""
    import os

    from models.store import Store
    from relevance.learning.selftrain import SelfTrainingPageModel
    from relevance.topic import load_topic
    from relevance.topicedit import add_words, set_value
    from topicrawl.files import write_atomic

    topic = load_topic(args.file)
    store = Store.from_url(args.db)
    try:
        run = store.get_run(args.run)
        if run is None:
            raise ConfigError(f"run {args.run} not found in the database")
        state = ((run.stats or {}).get("learned") or {}).get("page_model")
    finally:
        store.close()
    if not state or not state.get("terms"):
        raise ConfigError(
            f"run {args.run} has no learned page model (crawl with [priority] mode = "
            '"calibrated" and [learning] self_train = true; a run still crawling has none yet)'
        )
    model = SelfTrainingPageModel.from_state(state)
    out = Path(args.model_out) if args.model_out else Path(args.file).with_suffix(".model.json")
    model.save(out)
    known = set(topic.weights)
    suggested = [w for w, _ in model.top_words(args.suggest + len(known)) if w not in known]
    suggested = suggested[: args.suggest]
    text = _read(args.file)
    rel = os.path.relpath(out.resolve(), Path(args.file).resolve().parent)
    text = set_value(text, "learning.model", rel, path=args.file)
    text = set_value(text, "learning.suggested", suggested, path=args.file)
    if args.add:
        text = add_words(text, suggested[: args.add], weight=args.weight, path=args.file)
    write_atomic(args.file, text)
    print(f"{args.file}: [learning] model = {rel!r} ({len(model.terms)} words, "
          f"{model.trainings} trainings); suggested: {' '.join(suggested)}")  # fmt: skip
    if args.add:
        print(f"added to [words] with weight {args.weight}: {' '.join(suggested[: args.add])}")
    return 0


def cmd_topic_tune(args) -> int:
    from models.store import Store
    from relevance.evaluate import load_labels, tune_priority

    labels = load_labels(args.labels, category=args.category)
    store = Store.from_url(args.db)
    if store.get_run(args.run) is None:
        raise ConfigError(f"run {args.run} not found in the database")
    records = []
    unlabelled = 0
    for page in store.iter_pages(args.run):
        b = page.link_score or {}
        if not b or "f_info" not in b:  # seeds themselves carry no formula-5 breakdown
            continue
        lab = labels.get(page.url, labels.get(page.final_url or ""))
        if lab is None:
            unlabelled += 1
            continue
        records.append((b, lab))
    if not records:
        raise ConfigError(
            f"run {args.run} has no labelled pages with semantic link scores "
            f"({unlabelled} unlabelled)"
        )
    rows = tune_priority(records, min_recall=args.recall)
    pos = sum(1 for _, y in records if y)
    print(
        f"run {args.run}: {len(records)} labelled links ({pos} on-topic, {unlabelled} "
        f"unlabelled); rows reaching recall >= {args.recall}, best harvest rate first"
    )
    print(
        f"{'alpha':>5s} {'beta':>5s} {'lambda':>6s} {'thresh':>6s} {'follow':>6s} "
        f"{'harvest':>7s} {'recall':>6s}"
    )
    for r in rows[: args.top]:
        print(
            f"{r.alpha:5.2f} {r.beta:5.2f} {r.lam:6.2f} {r.threshold:6.2f} {r.followed:6d} "
            f"{r.harvest:7.3f} {r.recall:6.3f}"
        )
    if not rows:
        print("no setting reaches that recall: lower --recall")
        return 1
    if args.write:
        if not args.file:
            raise ConfigError("--write needs the topic FILE")
        from relevance.topicedit import set_value
        from topicrawl.files import write_atomic

        best = rows[0]
        text = _read(args.file)
        for k, val in (
            ("priority.alpha", best.alpha),
            ("priority.beta", best.beta),
            ("priority.lambda", best.lam),
            ("priority.threshold", best.threshold),
        ):
            text = set_value(text, k, val, path=args.file)
        write_atomic(args.file, text)
        print(f"{args.file}: wrote the best row")
    return 0
