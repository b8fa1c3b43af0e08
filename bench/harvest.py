"""Harvest-rate benchmark: topicrawl against breadth-first and best-first keyword crawls.

    python bench/harvest.py [--category 时政] [--topic topics/shizheng.toml] [--variants]
                            [--alt-topic FILE ...] [--alt-scorer DOTTED ...] [--classifier]
                            [--runs topicrawl,breadth-first,keyword,oracle]
                            [--webs portal,domain] [--concurrency 4]
                            [--write docs/benchmarks/harvest.md] [--replot]

Builds the LARGE local test web (``sitegen``, seed 0) into ``bench/out/web_large``, serves it
through ``python -m sitegen serve`` and runs, for each web (``portal``: seeds = the portal
home pages; ``domain``: seed = the single-topic site of the category), real
``scrapy crawl topic`` subprocesses through the proxy, each into its own SQLite database
(``bench/out/harvest-<web>-<run>.db``):

1. ``topicrawl`` — the topic file with the default settings (SemanticLinkScorer, formula 5),
   and ``topicrawl:<file>[+<scorer>]`` for the alternative topic files and scorers;
2. ``breadth-first`` — every link on the allowed hosts, FIFO by depth (``bench.baselines``);
3. ``keyword`` — best-first, priority = topic words in the anchor text
   (``relevance.linkscore.KeywordLinkScorer``);
4. ``oracle`` — best-first on the ground truth: the ceiling the web and budget allow.

Budget: ``-a max_pages = 2 × N``, N = the on-topic pages on the crawled hosts. Fetch order =
the pages table ordered by ``fetched_at``, ``id``. On-topic (ground truth): an article page
of the category (``sitegen.build.topic_targets``); list and home pages are never on-topic
(they are navigation, not corpus documents) — the lenient variant, which counts the
category's section lists and the single-topic site's home, is printed for precision too.

Figures: harvest rate and target recall at every 10 % of the budget (a table and
``bench/out/harvest.png``), harvest over the first N fetched pages; corpus precision (share
of the ``documents`` that are on-topic) and corpus recall (share of the on-topic articles —
an original and its reprints count once — that have a document); the same over the relevant
pages (relevance ≥ the page threshold, before dedup and cleaning). See
docs/benchmarks/harvest.md for the figures and what they mean.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.baselines import BREADTH_FIRST_SETTINGS, KEYWORD_SETTINGS, ORACLE_SETTINGS  # noqa: E402
from models.store import Store  # noqa: E402
from relevance.topic import load_topic  # noqa: E402
from sitegen.build import article_bodies, build_web, topic_targets  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402
from topicrawl.errors import ConfigError, TopicFileError  # noqa: E402

OUT = ROOT / "bench" / "out"
DEFAULT_TOPICS = {"时政": "topics/shizheng.toml", "财经": "topics/caijing.toml"}
FRACTIONS = [i / 10 for i in range(1, 11)]
MARK_START = "<!-- figures:start -->"
MARK_END = "<!-- figures:end -->"


#: Alternative 时政 topic files (``--variants``), written into bench/out/ from the shipped
#: ones with ``relevance.topicedit.set_value``: name -> (source file, {key: value}).
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    # the settings shipped before this benchmark's findings: HowNet Th2 0.7 (Sim(回顾, 外交)
    # = 0.86 and Sim(学生, 代表) = 0.9 pass), page threshold 0.1, one Algorithm 3 sample for
    # all hosts, the plain formula-3 page relevance, no classifier
    "shizheng_before": (
        "topics/shizheng.toml",
        {
            "classifier.weight": 0.0,
            "similarity.th2": 0.7,
            "page.threshold": 0.1,
            "urls.per_host": False,
            "page.struct_weight": 0.0,
            "page.description_weight": 0.5,
        },
    ),  # fmt: skip
    # the shipped topic without its [classifier] (formula 3 alone), with the page settings
    # shipped before the classifier (threshold 0.05, description weight 0.5)
    "shizheng_formula3": (
        "topics/shizheng.toml",
        {"classifier.weight": 0.0, "page.threshold": 0.05, "page.description_weight": 0.5},
    ),
    # the shipped topic with the paper's single Algorithm 3 sample (isolates per-host)
    "shizheng_one_sample": ("topics/shizheng.toml", {"urls.per_host": False}),
    # the paper's formula-5 weights instead of the tuned ones (α 0.2, β 0.7, λ 0.1)
    "shizheng_paper_weights": (
        "topics/shizheng.toml",
        {"priority.alpha": 0.4, "priority.beta": 0.4, "priority.lambda": 0.2},
    ),
    # word2vec alone (People's Daily vectors, Th1 0.5): the relevance bench's best link AUC
    "shizheng_w2v_only": (
        "topics/shizheng_w2v.toml",
        {"similarity.sources": ["word2vec"], "similarity.th1": 0.5, "page.threshold": 0.1},
    ),
}


def write_variants(out_dir: Path) -> list[str]:
    """Write the :data:`VARIANTS` topic files into ``out_dir`` and return their paths."""
    from relevance.topicedit import set_value

    out = []
    for name, (source, changes) in VARIANTS.items():
        src = ROOT / source
        topic = load_topic(src)
        text = src.read_text(encoding="utf-8")
        dest = out_dir / f"{name}.toml"
        if topic.similarity.vectors:  # keep the vectors path valid from bench/out/
            vectors = topic.resolve(topic.similarity.vectors)
            changes = {"similarity.vectors": os.path.relpath(vectors, out_dir), **changes}
        applied = {}
        for key, value in changes.items():
            try:
                text = set_value(text, key, value, path=str(dest))
                applied[key] = value
            except TopicFileError as exc:  # a key this version of the topic schema lacks
                print(f"variant {name}: {key} not set ({exc})")
        note = ", ".join(f"{k} = {v}" for k, v in applied.items())
        dest.write_text(f"# bench/harvest.py variant of {source}: {note}\n{text}", "utf-8")
        out.append(str(dest.relative_to(ROOT)))
    return out


# -- the local web and its server ------------------------------------------------------------
def ensure_web(
    out: Path, seed: int, rebuild: bool, *, section_in_head: bool = True, family: str = "a"
) -> dict:
    """Build the large web into ``out`` (unless it is already there for these settings)."""
    truth_file = out / "ground_truth.json"
    if not rebuild and truth_file.exists():
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        if (
            truth.get("scale") == "large"
            and truth.get("seed") == seed
            and truth.get("section_in_head", True) == section_in_head
            and truth.get("family", "a") == family
        ):
            return truth
    return build_web(out, scale="large", seed=seed, section_in_head=section_in_head, family=family)


# -- crawls ----------------------------------------------------------------------------------
@dataclass
class CrawlSpec:
    label: str
    topic: str
    settings: dict[str, object] = field(default_factory=dict)


def bench_settings(db: Path, concurrency: int, log_file: Path) -> dict[str, object]:
    """The settings of a benchmark crawl: SQLite ``db``, ``concurrency`` requests (per host
    too), no AutoThrottle or delay, no progress lines, an INFO log in ``log_file``."""
    return {
        "TOPICRAWL_DB_URL": f"sqlite:///{db}",
        "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "TOPICRAWL_PROGRESS_INTERVAL": 0,
        "LOG_LEVEL": "INFO",
        "LOG_FILE": str(log_file),
    }


def run_crawl(
    spec: CrawlSpec,
    web: str,
    seeds: list[str],
    budget: int,
    proxy: str,
    concurrency: int,
    category: str,
    run_dir: Path,
    truth_file: Path,
) -> tuple[Path, float]:
    """One ``scrapy crawl topic`` subprocess; returns its database and wall time."""
    name = f"{web}-{spec.label.replace(':', '-')}"
    db = run_dir / f"{name}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    log_file = run_dir / f"{name}.log"
    settings = {**bench_settings(db, concurrency, log_file), **spec.settings}
    cmd, env = crawl_command(proxy, seeds, spec.topic, args={"max_pages": budget},
                             settings=settings)  # fmt: skip
    env.update(TOPICRAWL_BENCH_TRUTH=str(truth_file), TOPICRAWL_BENCH_CATEGORY=category)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not db.exists():
        raise RuntimeError(
            f"crawl {web}/{spec.label} failed ({proc.returncode}); see {log_file}\n"
            f"{proc.stderr[-2000:]}"
        )
    return db, wall


# -- figures ---------------------------------------------------------------------------------
@dataclass
class Fetched:
    url: str
    on_topic: bool
    lenient: bool
    passed: bool  # page relevance >= the topic's page threshold ("relevant", before dedup)


@dataclass
class RunFigures:
    web: str
    label: str
    budget: int
    targets: int
    fetched: int
    curve_harvest: list[float]
    curve_recall: list[float]
    harvest_first_n: float
    passed: int
    relevant_precision: float
    relevant_precision_lenient: float
    relevant_recall: float
    documents: int
    corpus_precision: float
    corpus_recall: float
    corpus_recall_pages: float
    unknown_urls: int
    finish_reason: str
    wall_s: float
    crawl_s: float


def classify(truth: dict, url: str, category: str, single_topic_hosts: set[str]) -> tuple:
    """(on-topic, lenient on-topic, known) of a fetched URL by the ground truth."""
    page = truth["pages"].get(url)
    if page is None:
        return False, False, False
    strict = page["kind"] == "article" and page["category"] == category
    lenient = strict or (
        page["kind"] in ("list", "home")
        and (page.get("section_category") == category or page["host"] in single_topic_hosts)
    )
    return strict, lenient, True


def curve(flags: list[bool], budget: int, n_targets: int) -> tuple[list[float], list[float]]:
    """Harvest rate and target recall after each 10 % of the budget (fetch order)."""
    harvest, recall = [], []
    for f in FRACTIONS:
        k = min(round(f * budget), len(flags))
        hits = sum(flags[:k])
        harvest.append(hits / k if k else 0.0)
        recall.append(hits / n_targets if n_targets else 0.0)
    return harvest, recall


def ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def measure(
    db: Path,
    wall: float,
    *,
    web: str,
    label: str,
    truth: dict,
    category: str,
    targets: set[str],
    budget: int,
    page_threshold: float,
    single_topic_hosts: set[str],
) -> RunFigures:
    store = Store.from_url(f"sqlite:///{db}")
    try:
        run = store.list_runs()[-1]
        pages = sorted(
            store.iter_pages(run.id), key=lambda p: (p.fetched_at or dt.datetime.min, p.id)
        )
        doc_pages = {d.url for d in store.iter_documents(run.id)}
        stats = run.stats or {}
    finally:
        store.close()
    fetched, unknown, seen, docs = [], 0, set(), set()
    for p in pages:
        url = p.final_url or p.url
        if p.url in doc_pages:
            docs.add(url)
        if url in seen:  # a redirect and its target are one page
            continue
        seen.add(url)
        strict, lenient, known = classify(truth, url, category, single_topic_hosts)
        unknown += not known
        accept = (p.relevance_parts or {}).get("accept")  # [learning] calibrate_accept
        passed = (p.relevance if accept is None else accept or 0.0) >= page_threshold
        fetched.append(Fetched(url, strict, lenient, passed))
    flags = [f.on_topic for f in fetched]
    harvest, recall = curve(flags, budget, len(targets))
    n = len(targets)
    passed = [f for f in fetched if f.passed]
    doc_on = docs & targets
    groups: dict[str, set[str]] = {}
    for url in targets:
        g = truth["pages"][url].get("dup_group") or url
        groups.setdefault(g, set()).add(url)
    doc_groups = sum(1 for members in groups.values() if members & doc_on)
    try:
        start = dt.datetime.fromisoformat(stats["start_time"])
        finish = dt.datetime.fromisoformat(stats["finish_time"])
        crawl_s = (finish - start).total_seconds()
    except (KeyError, TypeError, ValueError):
        crawl_s = float("nan")
    return RunFigures(
        web=web,
        label=label,
        budget=budget,
        targets=n,
        fetched=len(fetched),
        curve_harvest=harvest,
        curve_recall=recall,
        harvest_first_n=ratio(sum(flags[:n]), min(n, len(flags))),
        passed=len(passed),
        relevant_precision=ratio(sum(f.on_topic for f in passed), len(passed)),
        relevant_precision_lenient=ratio(sum(f.lenient for f in passed), len(passed)),
        relevant_recall=ratio(sum(f.on_topic for f in passed), n),
        documents=len(docs),
        corpus_precision=ratio(len(doc_on), len(docs)),
        corpus_recall=ratio(doc_groups, len(groups)),
        corpus_recall_pages=ratio(len(doc_on), n),
        unknown_urls=unknown,
        finish_reason=str(stats.get("finish_reason", "?")),
        wall_s=wall,
        crawl_s=crawl_s,
    )


# -- the page classifier offline ----------------------------------------------------------
def roc_auc(scores: list[float], labels: list[bool]) -> float:
    """Mann-Whitney ROC AUC (ties count one half)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    n1 = sum(labels)
    n0 = len(labels) - n1
    if not n1 or not n0:
        return float("nan")
    r1 = sum(r for r, y in zip(ranks, labels, strict=True) if y)
    return (r1 - n1 * (n1 + 1) / 2) / (n1 * n0)


def precision_at_recall(scores: list[float], labels: list[bool], recall: float) -> float:
    """Precision of the highest-scored pages that reach ``recall`` of the positives."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    need, tp = recall * sum(labels), 0
    for k, i in enumerate(order, 1):
        tp += labels[i]
        if tp >= need:
            return tp / k
    return 0.0


def scorer_without_classifier(scorer):
    """A copy of a SemanticLinkScorer that scores by formula 3 alone."""
    import copy

    plain = copy.copy(scorer)
    plain.classifier = None
    return plain


def classifier_figures(
    web: Path, truth: dict, category: str, topic_paths: list[str]
) -> list[dict[str, object]]:
    """Page relevance as a classifier of every article page of the web (uniform sample)."""
    from relevance.linkscore import PageInfo
    from relevance.priority import SemanticLinkScorer
    from topicrawl.extract import decode_html, extract_page

    pages, labels = [], []
    for url, page, body, header in article_bodies(web, truth):
        html, _ = decode_html(body, header)
        ex = extract_page(html, url)
        pages.append(PageInfo(url, ex.title, ex.description, ex.keywords, ex.text))
        labels.append(page["category"] == category)
    rows: list[dict[str, object]] = []

    def add(name: str, scores: list[float], threshold: float | None) -> None:
        row: dict[str, object] = {
            "measure": name,
            "auc": roc_auc(scores, labels),
            "p_at_r85": precision_at_recall(scores, labels, 0.85),
        }
        if threshold is not None:
            sel = [y for x, y in zip(scores, labels, strict=True) if x >= threshold]
            row.update(threshold=threshold, precision=ratio(sum(sel), len(sel)),
                       recall=ratio(sum(sel), sum(labels)))  # fmt: skip
        rows.append(row)

    scorers = []
    for path in topic_paths:
        topic = load_topic(path)
        scorer = SemanticLinkScorer.from_topic(topic)
        scorers.append(scorer)
        stem = Path(path).stem
        mixed = topic.classifier is not None and topic.classifier.weight > 0
        how = "formula 3 + classifier" if mixed else "formula 3"
        add(f"{stem}: page relevance ({how}, description + text)",
            [scorer.page_relevance(p) for p in pages], topic.page_threshold)  # fmt: skip
        add(f"{stem}: {how} on the description only",
            scorer.relevance_texts([scorer.description_text(p) for p in pages])[0], None)  # fmt: skip
        if mixed:
            plain = scorer_without_classifier(scorer)
            add(f"{stem}: formula 3 alone (page relevance without the classifier)",
                [plain.page_relevance(p) for p in pages], None)  # fmt: skip
    topic = load_topic(topic_paths[0])
    scorer = scorers[0]
    weights = {w: v / max(topic.weights.values()) for w, v in topic.weights.items()}
    for name, drop in (("", None), (f" without the word {category}", category)):
        wt = {w: v for w, v in weights.items() if w != drop}

        def match(p: PageInfo, wt: dict[str, float] = wt) -> float:
            words = scorer.relevance.extract(scorer.description_text(p))
            return sum(wt.get(w, 0.0) for w in words) / len(words) if words else 0.0

        add(f"exact topic-word match on the description{name}", [match(p) for p in pages], None)
    print(f"\npage classifier over the {len(pages)} article pages ({sum(labels)} {category}):")
    for row in rows:
        extra = (
            f"  at threshold {row['threshold']}: precision {row['precision']:.3f} "
            f"recall {row['recall']:.3f}"
            if "threshold" in row
            else ""
        )
        print(f"  {row['measure']:<70} AUC {row['auc']:.3f}  precision@recall0.85 "
              f"{row['p_at_r85']:.3f}{extra}")  # fmt: skip
    return rows


# -- report ----------------------------------------------------------------------------------
def targets_met(figs: list[RunFigures], topicrawl_label: str) -> list[tuple[str, str, bool]]:
    """(web, target, met) for the targets of issue 5."""
    out = []
    by = {(f.web, f.label): f for f in figs}
    portal = by.get(("portal", topicrawl_label))
    if portal:
        out.append(("portal", f"corpus precision {portal.corpus_precision:.3f} ≥ 0.95",
                    portal.corpus_precision >= 0.95))  # fmt: skip
        out.append(("portal", f"corpus recall {portal.corpus_recall:.3f} ≥ 0.85",
                    portal.corpus_recall >= 0.85))  # fmt: skip
        out.append(("portal", f"harvest over first N {portal.harvest_first_n:.3f} ≥ 0.75",
                    portal.harvest_first_n >= 0.75))  # fmt: skip
        for base in ("breadth-first", "keyword"):
            b = by.get(("portal", base))
            if b:
                above = all(
                    t > x for t, x in zip(portal.curve_harvest, b.curve_harvest, strict=True)
                )
                out.append(("portal", f"harvest curve above {base} at every 10 %", above))
    domain = by.get(("domain", topicrawl_label))
    if domain:
        out.append(("domain", f"corpus precision {domain.corpus_precision:.3f} ≥ 0.98",
                    domain.corpus_precision >= 0.98))  # fmt: skip
    return out


def render(
    figs: list[RunFigures],
    met: list[tuple[str, str, bool]],
    meta: dict,
    classifier: list[dict[str, object]] | None = None,
) -> str:
    lines = [
        f"Measured {meta['date']} on this machine: category **{meta['category']}**, topic "
        f"`{meta['topic']}`, large web seed {meta['seed']}, CONCURRENT_REQUESTS = "
        f"CONCURRENT_REQUESTS_PER_DOMAIN = {meta['concurrency']}, AUTOTHROTTLE off, "
        "DOWNLOAD_DELAY 0, no server latency.",
        "",
        "```",
        meta["command"],
        "```",
        "",
    ]
    for web in dict.fromkeys(f.web for f in figs):
        rows = [f for f in figs if f.web == web]
        r0 = rows[0]
        lines += [
            f"### {web}: N = {r0.targets} on-topic pages, budget {r0.budget} fetches",
            "",
            "Harvest rate (target recall) after each 10 % of the budget:",
            "",
            "| run | " + " | ".join(f"{int(f * 100)}%" for f in FRACTIONS) + " |",
            "|---|" + "---|" * len(FRACTIONS),
        ]
        for f in rows:
            cells = [
                f"{h:.2f} ({r:.2f})" for h, r in zip(f.curve_harvest, f.curve_recall, strict=True)
            ]
            lines.append(f"| {f.label} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "| run | fetched | harvest first N | documents | **corpus precision** "
            "| **corpus recall** (articles) | corpus recall (pages) | relevant pages "
            "| relevant precision (lenient) | relevant recall | finish | crawl s (wall s) |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for f in rows:
            lines.append(
                f"| {f.label} | {f.fetched} | {f.harvest_first_n:.3f} | {f.documents} | "
                f"{f.corpus_precision:.3f} | {f.corpus_recall:.3f} | "
                f"{f.corpus_recall_pages:.3f} | {f.passed} | {f.relevant_precision:.3f} "
                f"({f.relevant_precision_lenient:.3f}) | {f.relevant_recall:.3f} | "
                f"{f.finish_reason} | {f.crawl_s:.1f} ({f.wall_s:.1f}) |"
            )
        lines.append("")
    lines += ["Targets of issue 5 (topicrawl run):", ""]
    for web, what, ok in met:
        lines.append(f"- {web}: {what} — **{'met' if ok else 'MISSED'}**")
    if classifier:
        lines += [
            "",
            "Page relevance as a classifier of all article pages of the web (offline, every "
            "article once; not a crawl sample):",
            "",
            "| measure | ROC AUC | precision at recall 0.85 | at the topic's page threshold |",
            "|---|---|---|---|",
        ]
        for row in classifier:
            at = (
                f"{row['threshold']}: precision {row['precision']:.3f}, recall "
                f"{row['recall']:.3f}" if "threshold" in row else "–"
            )  # fmt: skip
            lines.append(f"| {row['measure']} | {row['auc']:.3f} | {row['p_at_r85']:.3f} | {at} |")
    lines += ["", "![harvest curves](../../bench/out/harvest.png) (not committed: "
              "`bench/out/` is generated)", ""]  # fmt: skip
    return "\n".join(lines)


def write_doc(path: Path, figures_md: str, title: str = "Benchmark: harvest rate") -> None:
    """Replace the generated block of ``path`` (between the markers), keep the rest."""
    block = f"{MARK_START}\n{figures_md}\n{MARK_END}"
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if MARK_START in text and MARK_END in text:
            head, rest = text.split(MARK_START, 1)
            tail = rest.split(MARK_END, 1)[1]
            path.write_text(head + block + tail, encoding="utf-8")
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\n{block}\n", encoding="utf-8")


def plot(figs: list[RunFigures], path: Path, title: str) -> None:
    """Harvest rate and target recall curves (ASCII labels: no CJK font on this machine)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    webs = list(dict.fromkeys(f.web for f in figs))
    fig, axes = plt.subplots(len(webs), 2, figsize=(11, 4 * len(webs)), squeeze=False)
    xs = [int(f * 100) for f in FRACTIONS]
    fixed = {"breadth-first": "tab:gray", "keyword": "tab:olive", "oracle": "black"}
    cycle = [f"tab:{c}" for c in ("blue", "orange", "green", "red", "purple", "brown", "pink",
                                  "cyan")]  # fmt: skip
    labels_ = list(dict.fromkeys(f.label for f in figs))
    others = [x for x in labels_ if x not in fixed]
    color = {**{x: cycle[i % len(cycle)] for i, x in enumerate(others)}, **fixed}
    for row, web in zip(axes, webs, strict=True):
        for f in (f for f in figs if f.web == web):
            style = "-" if f.label.startswith("topicrawl") else ":" if f.label == "oracle" else "--"
            width = 3.0 if f.label == "topicrawl" else 1.5  # the shipped defaults stand out
            kw = {"marker": "o", "label": f.label, "linewidth": width, "color": color[f.label]}
            row[0].plot(xs, f.curve_harvest, style, **kw)
            row[1].plot(xs, f.curve_recall, style, **kw)
        n = next(f.targets for f in figs if f.web == web)
        row[0].set_title(f"{web}: harvest rate (N = {n}, budget 2N)")
        row[1].set_title(f"{web}: target recall")
        for ax in row:
            ax.set_xlabel("% of the fetch budget")
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(f"topicrawl vs baselines, {title} (local large test web)")
    fig.tight_layout(rect=(0, 0.03 + 0.025 * ((len(labels) + 2) // 3), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def print_table(figs: list[RunFigures]) -> None:
    head = "".join(f"{int(f * 100):>12}%" for f in FRACTIONS)
    for web in dict.fromkeys(f.web for f in figs):
        rows = [f for f in figs if f.web == web]
        print(f"\n== {web}: N = {rows[0].targets}, budget = {rows[0].budget}")
        print(f"{'run':<24}{head}")
        for f in rows:
            cells = "".join(
                f"{h:>7.2f}({r:.2f})" for h, r in zip(f.curve_harvest, f.curve_recall, strict=True)
            )
            print(f"{f.label:<24}{cells}")
        print(
            f"{'run':<24}{'fetched':>8}{'hvN':>7}{'docs':>6}{'cprec':>7}{'crec':>7}{'crecP':>7}"
            f"{'rel':>5}{'rprec':>7}{'(len)':>7}{'rrec':>7}{'unk':>5}  finish  crawl_s"
        )
        for f in rows:
            print(
                f"{f.label:<24}{f.fetched:>8}{f.harvest_first_n:>7.3f}{f.documents:>6}"
                f"{f.corpus_precision:>7.3f}{f.corpus_recall:>7.3f}{f.corpus_recall_pages:>7.3f}"
                f"{f.passed:>5}{f.relevant_precision:>7.3f}{f.relevant_precision_lenient:>7.3f}"
                f"{f.relevant_recall:>7.3f}"
                f"{f.unknown_urls:>5}  {f.finish_reason}  {f.crawl_s:.1f} ({f.wall_s:.1f})"
            )


# -- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--category", default="时政")
    ap.add_argument("--topic", help="topic file (default: the example topic of the category)")
    ap.add_argument("--alt-topic", action="append", default=[],
                    help="another topic file to run as an extra topicrawl crawl")  # fmt: skip
    ap.add_argument(
        "--variants",
        action="store_true",
        help="also run the alternative 时政 topic files of VARIANTS (written into bench/out/)",
    )
    ap.add_argument(
        "--alt-scorer",
        action="append",
        default=[],
        help="dotted LinkScorer class to run with every topic file (experiment)",
    )
    ap.add_argument(
        "--classifier",
        action="store_true",
        help="also score every article page offline (page relevance as a classifier)",
    )
    ap.add_argument("--pool", default="",
                    help="off,on: the topicrawl run once with the extraction pool off "
                    "(TOPICRAWL_EXTRACT_WORKERS=0) and once on (1), labelled topicrawl:pool-off "
                    "and topicrawl:pool-on (crawler/extractpool.py)")  # fmt: skip
    ap.add_argument("--webs", default="portal,domain")
    ap.add_argument("--runs", default="topicrawl,breadth-first,keyword,oracle")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rebuild", action="store_true", help="rebuild the web even if present")
    ap.add_argument("--no-section-in-head", dest="section_in_head", action="store_false",
                    help="a web whose article heads do not name the section or category "
                    "(bench/out/web_large_plain)")  # fmt: skip
    ap.add_argument("--family", choices=("a", "b"), default="a",
                    help="sitegen template family of the web (b: held out from tuning; "
                    "bench/out/web_large_b)")  # fmt: skip
    ap.add_argument("--write", type=Path, help="write the figures into this Markdown file")
    ap.add_argument("--replot", action="store_true",
                    help="only redraw bench/out/harvest.png from bench/out/harvest.json")  # fmt: skip
    args = ap.parse_args(argv)
    if args.replot:
        saved = json.loads((OUT / "harvest.json").read_text(encoding="utf-8"))
        name = Path(args.topic or DEFAULT_TOPICS.get(args.category, "?")).name
        plot([RunFigures(**f) for f in saved], OUT / "harvest.png", f"topic file {name}")
        return 0

    topic_path = args.topic or DEFAULT_TOPICS.get(args.category)
    if topic_path is None:
        raise ConfigError(f"no example topic for {args.category!r}: pass --topic FILE")
    topic = load_topic(topic_path)
    # one directory per invocation: concurrent runs of this script never share a file
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    run_dir = OUT / "harvest-runs" / f"{stamp}-{os.getpid()}"
    run_dir.mkdir(parents=True, exist_ok=True)
    web_dir = OUT / ("web_large" if args.section_in_head else "web_large_plain")
    if args.family != "a":
        web_dir = web_dir.with_name(f"{web_dir.name}_{args.family}")
    truth = ensure_web(web_dir, args.seed, args.rebuild, section_in_head=args.section_in_head,
                       family=args.family)  # fmt: skip
    sites = truth["sites"]
    single_topic_hosts = {
        s["host"] for s in sites if s["kind"] == "domain" and s["categories"] == [args.category]
    }
    seeds_of = {
        "portal": truth["seeds"]["portal"],
        "domain": [s["home"] for s in sites if s["host"] in single_topic_hosts],
    }
    wanted = set(args.runs.split(","))
    specs = [CrawlSpec("topicrawl", topic_path)] if "topicrawl" in wanted else []
    if specs and args.pool:
        workers = {"off": 0, "on": 1}
        specs = [CrawlSpec(f"topicrawl:pool-{v}", topic_path,
                           {"TOPICRAWL_EXTRACT_WORKERS": workers[v]})
                 for v in args.pool.split(",")]  # fmt: skip
    if args.variants:
        args.alt_topic = [*write_variants(run_dir), *args.alt_topic]
    specs += [CrawlSpec(f"topicrawl:{Path(p).stem}", p) for p in args.alt_topic]
    for scorer in args.alt_scorer:  # experiments: another link scorer on every topic file
        name = scorer.rsplit(".", 1)[-1].removesuffix("SemanticLinkScorer")
        specs += [
            CrawlSpec(f"topicrawl:{Path(p).stem}+{name}", p, {"TOPICRAWL_LINK_SCORER": scorer})
            for p in [topic_path, *args.alt_topic]
        ]
    if "breadth-first" in wanted:
        specs.append(CrawlSpec("breadth-first", topic_path, BREADTH_FIRST_SETTINGS))
    if "keyword" in wanted:
        specs.append(CrawlSpec("keyword", topic_path, KEYWORD_SETTINGS))
    if "oracle" in wanted:
        specs.append(CrawlSpec("oracle", topic_path, ORACLE_SETTINGS))

    all_targets = topic_targets(truth, args.category)
    figs: list[RunFigures] = []
    with ServerProcess(web_dir) as proxy:
        for web in args.webs.split(","):
            seeds = seeds_of[web]
            if not seeds:
                print(f"no single-topic site of {args.category} in the web: {web} skipped")
                continue
            hosts = {urlsplit(s).hostname for s in seeds} | set(topic.allowed_hosts)
            targets = {u for u in all_targets if urlsplit(u).hostname in hosts}
            budget = 2 * len(targets)
            for spec in specs:
                page_threshold = load_topic(spec.topic).page_threshold
                print(f"crawling {web} / {spec.label} (budget {budget}) ...", flush=True)
                db, wall = run_crawl(spec, web, seeds, budget, proxy.url, args.concurrency,
                                     args.category, run_dir, web_dir / "ground_truth.json")  # fmt: skip
                figs.append(
                    measure(
                        db, wall, web=web, label=spec.label, truth=truth,
                        category=args.category, targets=targets, budget=budget,
                        page_threshold=page_threshold, single_topic_hosts=single_topic_hosts,
                    )
                )  # fmt: skip
    classifier = (
        classifier_figures(web_dir, truth, args.category, [topic_path, *args.alt_topic])
        if args.classifier
        else []
    )
    print_table(figs)
    met = targets_met(figs, "topicrawl")
    print("\ntargets (topicrawl):")
    for web, what, ok in met:
        print(f"  {web}: {what}: {'met' if ok else 'MISSED'}")
    png = OUT / "harvest.png"
    plot(figs, png, f"topic file {Path(topic_path).name}")
    shutil.copy(png, run_dir / "harvest.png")
    for path in (OUT / "harvest.json", run_dir / "harvest.json"):
        path.write_text(
            json.dumps([asdict(f) for f in figs], ensure_ascii=False, indent=1), encoding="utf-8"
        )
    print(f"plot: {png.relative_to(ROOT)}; figures: bench/out/harvest.json; "
          f"databases and logs: {run_dir.relative_to(ROOT)}/")  # fmt: skip
    if args.write:
        command = "python bench/harvest.py " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:])
        )
        meta = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "category": args.category,
            "topic": topic_path,
            "seed": args.seed,
            "concurrency": args.concurrency,
            "command": command.strip(),
        }
        write_doc(args.write, render(figs, met, meta, classifier))
        print(f"written: {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
