"""The topic file: a TOML document with the topic words, weights and every parameter.

Schema (every table but ``[words]`` is optional; defaults are the paper's values)::

    name = "时政"                      # required
    language = "zh"                    # "zh" | "en"

    [words]                            # topic word -> weight (Table 2; `topic weights` fills it)
    "政治" = 1.0

    [overrides]                        # manual weights that win over [words] (Table 3)
    "中国" = 0.2

    [similarity]                       # Algorithm 1
    sources = ["hownet"]               # any of "hownet", "openhownet", "cilin", "word2vec"
                                       # (hownet + cilin: the hybrid of 朱新华 et al. 2016)
    hownet = ""                        # directory with glossary.dat + WHOLE.DAT ("" = shared data)
    cilin = ""                         # cilin_ext.txt ("" = shared data)
    cilin_method = "ic"                # "ic" (彭琦 et al. 2018) | "path" (陈宏朝 et al. 2016)
    hybrid_weight = 0.9                # λ of HowNet where HowNet and Cilin know both words
    step1 = "paper"                    # Algorithm 1 step 1: "paper" (SimD < Th1 => Sim = 0)
                                       # | "cut" (SimD < Th1 => SimD = 0, then on)
    vectors = ""                       # word2vec file (required when "word2vec" is a source)
    th1 = 0.1                          # SimD threshold and final cut (Table 5)
    th2 = 0.1                          # SimH threshold (Table 5)
    alpha = 0.5                        # weight of SimD when SimH = 0 (chosen on wordsim-297)
    beta = 0.5                         # weight of SimH when both are known

    [hownet]                           # Liu Qun & Li Sujian (2002)
    alpha = 1.6
    beta = [0.5, 0.2, 0.17, 0.13]
    gamma = 0.2
    delta = 0.2

    [candidates]                       # candidate words (待匹配词) of a text
    pos = ["n", "nr", "ns", "nt", "nz", "vn", "v", "a", "an", "j", "l", "i"]
    min_length = 2

    [page]
    threshold = 0.25                   # a page is accepted when its relevance passes it
                                       # (calibrated mode: a probability, default 0.5)
    description_weight = 0.5           # page relevance = w·Rel(description) + (1-w)·Rel(text)
    struct_weight = 0.5                # μ: that × (1 ± μ) by struct(page url) (Algorithm 3;
                                       # 0 = the paper's page relevance)
    formula3 = "normalized"            # paper mode's formula 3: "normalized" (affinity / Z,
                                       # capped at 1, w_d = tf) | "paper" (w_d = tf·idf, as
                                       # published; relevance.page)
    host_prior = false                 # a host whose judged pages mostly pass lowers the
                                       # threshold for its pages (relevance.hostprior)
    host_prior_reference = 0.5         # π_0: accepted share at which nothing changes
    host_prior_strength = 10.0         # m: Beta prior pseudo-pages (shrinks towards π_0)
    host_prior_min_pages = 10          # judged pages of the host before the prior acts
    host_prior_elasticity = 1.0        # k: paper mode's page odds ∝ relevance^k
    host_prior_max_shift = 2.0         # largest log-odds shift Δ
    host_prior_sections = true         # only hosts whose accepted URLs span sections (no
                                       # majority structure in their Algorithm 3 sample)

    [priority]                         # formula 5
    mode = "calibrated"                # "calibrated" (default: relevance.calibrated, every
                                       # score a probability) | "paper" (formulas 3 and 5)
    alpha = 0.4                        # Rel(f_info, TSet)  (calibrated: 0.3, the holding page)
    beta = 0.4                         # Rel(a_url, TSet)   (calibrated: 0.7, the anchor)
    lambda = 0.2                       # struct(url)
    threshold = 0.2
    focus = "soft"                     # "soft" | "hard" (section 3.1 description gate)
    description_threshold = 0.1

    [urls]                             # Algorithms 2 and 3
    mode = "path"                      # "path" (default) | "paper" (Algorithm 2 exactly)
    alpha = 0.5
    beta = 0.5
    threshold = 0.75                   # paper mode: 0.1 (their Table 6: 0.05-0.10)
    a = 0.6                            # w1 of the host parts
    b = 0.2                            # step w(i+1) = w(i) - b
    d = 2.0                            # 'www' parts are divided by d
    sample_size = 20                   # n of Algorithm 3
    per_host = true                    # one Algorithm 3 sample per host (false = the paper's
                                       # single sample over every accepted URL)
    holding_page = true                # while the link's host has no majority structure,
                                       # struct = Algorithm 2 against the (relevant) page
                                       # that holds the link (false = the paper)

    [classifier]                       # optional: a page classifier trained on labelled
                                       # examples, mixed with formula 3 (relevance.classifier)
    examples = "data:corpus/thucnews_titles_dev.txt"   # required in the table
    format = "text-label"              # "label-text" (default) | "text-label", TAB-separated
    classes = "data:corpus/thucnews_titles_classes.txt"  # optional: class id -> name file
    positive = ["politics"]            # required: the on-topic labels
    weight = 0.5                       # rel = (1 - w)·formula 3 + w·P(topic | text)
    anchors = true                     # mix anchor texts too (false: formula 3 on anchors)
    c = 10.0                           # inverse regularisation of the logistic regression

    [learning]                         # calibrated mode: what the crawl learns as it goes
    self_train = true                  # the self-trained page model (Nigam et al. 2000)
    combine = "mean"                   # how P_lit and P_model make P(page) (relevance.combine):
                                       #   "mean" | "noisy-or" | "max" | "logpool"
    weight = 0.5                       # "mean": P = (1 - w)·P_lit + w·P_model; "logpool" too
    positive = 0.7                     # pseudo-labels: P_lit >= positive is on-topic,
    negative = 0.1                     #   <= negative off-topic
    retrain_every = 10                 # pages between trainings (at least pages seen / 4)
    c = 10.0                           # inverse regularisation of the logistic regression
    em_lambda = 1.0                    # weight of the unlabelled pages in the EM steps
    em_steps = 3                       # EM steps over the unlabelled pages (0: trained on
                                       #   the pseudo-labelled pages only)
    background = ""                    # optional unlabelled text: negatives (data:corpus/...)
    background_limit = 2000            # lines read from it
    background_weight = 0.2            # their sample weight
    model = ""                         # a page model saved by `topicrawl topic learn`
    link_model = true                  # the online link model (ACHE / Chakrabarti 2002)
    link_rate = 0.3                    # its learning rate
    link_gate = 0.0                    # z of its evidence gate: a feature counts only as far
                                       #   as its outcome rate departs from the crawl's
                                       #   base rate by more than z standard errors (0: off)
    link_gate_scope = "url"            #   the features it applies to: "url" (host,
                                       #   section, URL tokens) or "all" (anchor words too)
    anchor_context = 2                 # a link's anchor evidence is at least the mean
                                       #   P_lit(anchor) of the links within this many
                                       #   places of it on the page (0: off)
    anchor_context_use = "prior"       #   "prior": in the link's prior; "feature": a
                                       #   feature of the online link model (its weight
                                       #   learned from the crawl's outcomes)
    rejudge = 0                        # rejected pages kept and judged again after each
                                       #   retraining of the page model (0: off)
    rejudge_literal = 0.4              #   only those with P_lit at least this
    final_judgement = 0                # the first N fetched pages judged again with the
                                       #   last models when the crawl ends: a page whose
                                       #   decision changes leaves or joins the corpus
                                       #   (relevance.learning.final; 0: off)
    contrast = ""                      # other topics' word lists the pages may belong to
                                       #   instead: a directory of topic files (all but
                                       #   this topic's name) or files, comma-separated
                                       #   (relevance.evidence; "": off)
    contrast_weight = 0.5              # λ of the one-of-K posterior against them
    learn_contrast = true              # contrast topics learned from the web's own
                                       #   sections (the page's breadcrumb, else host/first
                                       #   URL directory) whose pages carry little topic
                                       #   evidence (relevance.learning.contrast; calibrated)
    contrast_ratio = 0.7               #   a section whose pages' mean P_lit is at most
                                       #   this × the best section's is a contrast topic
    contrast_breadcrumbs = true        #   a page's section is the last section link of its
                                       #   breadcrumb (当前位置：首页 > 体育 > 正文) when it
                                       #   has one (false: the URL directory only)
    section_meta = false               #   a page without a breadcrumb: the section its menu
                                       #   marks current (li.active), else the one its
                                       #   metadata states (article:section, JSON-LD
                                       #   articleSection), before its URL directory
    contrast_against_crawl = false     #   a contrast word must also stand out against the
                                       #   crawl's pages outside the contrast sections
    section_negatives = true           #   the pages of those contrast sections are the
                                       #   page model's negatives, whatever their words
                                       #   (co-training: the section view labels the text)
    domain_veto = 0.0                  # > 0: a pseudo-positive whose HowNet domain words
                                       #   (体育, 艺, 商, 教育, 政, …) lie at least this share
                                       #   outside the topic words' domains is not a
                                       #   positive of the page model (sibling knowledge;
                                       #   relevance.learning.domains); 0: off
    domain_min = 2                     #   … counted only with at least this many such words
    domain_negative = false            #   … and it becomes a negative (false: unlabelled)
    domain_labels = true               #   the veto applies to the page model's positives
    domain_accept = 0.0                #   > 0: a vetoed page is accepted only when its
                                       #   P_model is at least this (0: no veto at the
                                       #   page decision; P(page) and links unchanged)
    calibrate_accept = false           # accept a page when the isotonic calibration of
                                       #   P(page) (the share of such pages on-topic on the
                                       #   development crawls; relevance.acceptance) is at
                                       #   least [page] threshold; links keep P(page)
    accept_mixture = 0                 # K >= 2: also accept a page whose score's posterior
                                       #   in a K-component mixture of the crawl's fetched
                                       #   P(page) (top component) is at least [page]
                                       #   threshold (relevance.learning.mixture); 0: off
    accept_mixture_cut = 0.0           # the posterior that accept_mixture needs (0: [page]
                                       #   threshold)
    suggested = []                     # words `topicrawl topic learn` found (not used)

    [crawl]
    allowed_hosts = []                 # host names or "*.suffix"; empty = the seeds' hosts

Relative paths are resolved against the topic file's directory; ``data:PATH`` is PATH in the
shared data directory (``$TOPICRAWL_DATA`` or ``../shared/data``).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relevance.combine import RULES
from relevance.hostprior import HostPriorConfig
from topicrawl.errors import TopicFileError

SOURCES = ("hownet", "openhownet", "cilin", "word2vec")
CILIN_METHODS = ("ic", "path")
STEP1 = ("paper", "cut")
DEFAULT_POS = ("n", "nr", "ns", "nt", "nz", "vn", "v", "a", "an", "j", "l", "i", "nrt", "eng")


@dataclass
class SimilarityConfig:
    """Algorithm 1 parameters and the similarity sources."""

    sources: list[str] = field(default_factory=lambda: ["hownet"])
    hownet: str = ""
    openhownet: str = ""
    vectors: str = ""
    cilin: str = ""
    cilin_method: str = "ic"
    hybrid_weight: float = 0.9
    step1: str = "paper"
    th1: float = 0.1
    th2: float = 0.1
    alpha: float = 0.5
    beta: float = 0.5


@dataclass
class HowNetConfig:
    """Liu Qun & Li Sujian (2002) parameters."""

    alpha: float = 1.6
    beta: tuple[float, float, float, float] = (0.5, 0.2, 0.17, 0.13)
    gamma: float = 0.2
    delta: float = 0.2


@dataclass
class CandidateConfig:
    pos: list[str] = field(default_factory=lambda: list(DEFAULT_POS))
    min_length: int = 2


@dataclass
class PriorityConfig:
    """Formula 5 and the section 3.1 description gate; ``mode`` chooses the method."""

    mode: str = "calibrated"
    alpha: float = 0.4
    beta: float = 0.4
    lam: float = 0.2
    threshold: float = 0.2
    focus: str = "soft"
    description_threshold: float = 0.1


@dataclass
class UrlConfig:
    """Algorithms 2 and 3."""

    mode: str = "path"
    alpha: float = 0.5
    beta: float = 0.5
    threshold: float = 0.75
    a: float = 0.6
    b: float = 0.2
    d: float = 2.0
    sample_size: int = 20
    per_host: bool = True
    holding_page: bool = True


@dataclass
class LearningConfig:
    """What a calibrated-mode crawl learns (relevance.learning): page model and link model."""

    self_train: bool = True
    combine: str = "mean"
    weight: float = 0.5
    positive: float = 0.7
    negative: float = 0.1
    retrain_every: int = 10
    c: float = 10.0
    em_lambda: float = 1.0
    em_steps: int = 3
    background: str = ""
    background_limit: int = 2000
    background_weight: float = 0.2
    model: str = ""
    link_model: bool = True
    link_rate: float = 0.3
    link_gate: float = 0.0
    link_gate_scope: str = "url"
    anchor_context: int = 2
    anchor_context_use: str = "prior"
    rejudge: int = 0
    rejudge_literal: float = 0.4
    final_judgement: int = 0
    contrast: str = ""
    contrast_weight: float = 0.5
    learn_contrast: bool = True
    contrast_ratio: float = 0.7
    contrast_breadcrumbs: bool = True
    section_meta: bool = False
    contrast_against_crawl: bool = False
    section_negatives: bool = True
    domain_veto: float = 0.0
    domain_min: int = 2
    domain_negative: bool = False
    domain_labels: bool = True
    domain_accept: float = 0.0
    calibrate_accept: bool = False
    accept_mixture: int = 0
    accept_mixture_cut: float = 0.0
    suggested: list[str] = field(default_factory=list)


@dataclass
class ClassifierConfig:
    """The optional page classifier trained on labelled examples (relevance.classifier)."""

    examples: str
    positive: list[str]
    format: str = "label-text"
    classes: str = ""
    weight: float = 0.5
    anchors: bool = True
    c: float = 10.0


@dataclass
class Topic:
    """A loaded topic file (see the module docstring for the schema)."""

    name: str
    language: str = "zh"
    words: dict[str, float] = field(default_factory=dict)
    overrides: dict[str, float] = field(default_factory=dict)
    allowed_hosts: list[str] = field(default_factory=list)
    page_threshold: float = 0.25
    page_description_weight: float = 0.5
    page_struct_weight: float = 0.5
    page_formula3: str = "normalized"
    page_host_prior: HostPriorConfig = field(default_factory=HostPriorConfig)
    similarity: SimilarityConfig = field(default_factory=SimilarityConfig)
    hownet: HowNetConfig = field(default_factory=HowNetConfig)
    candidates: CandidateConfig = field(default_factory=CandidateConfig)
    priority: PriorityConfig = field(default_factory=PriorityConfig)
    urls: UrlConfig = field(default_factory=UrlConfig)
    classifier: ClassifierConfig | None = None
    learning: LearningConfig = field(default_factory=LearningConfig)
    path: str | None = None
    raw: str = ""
    #: Free-form tables owned by other parts: [clean] (postprocess.clean.Cleaner options,
    #: validated there) and [dedup] (cascade methods and per-method options).
    clean: dict[str, Any] = field(default_factory=dict)
    dedup: dict[str, Any] = field(default_factory=dict)

    @property
    def link_threshold(self) -> float:
        return self.priority.threshold

    @property
    def focus(self) -> str:
        return self.priority.focus

    @property
    def weights(self) -> dict[str, float]:
        """Topic words with their final weights: [words] then [overrides] on top."""
        out = dict(self.words)
        out.update(self.overrides)
        return {w: v for w, v in out.items() if v > 0}

    @property
    def base_dir(self) -> Path:
        return Path(self.path).resolve().parent if self.path else Path.cwd()

    def resolve(self, value: str) -> Path | None:
        """Resolve a path named in the file: relative to the file, ``~`` expanded,
        ``data:PATH`` in the shared data directory."""
        if not value:
            return None
        if value.startswith("data:"):
            from topicrawl.data import data_dir

            return data_dir() / value[len("data:") :]
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.base_dir / p


# --- schema -------------------------------------------------------------------------------

_Spec = dict[str, tuple[type | tuple[type, ...], Any]]

_TOP: _Spec = {"name": (str, None), "language": (str, None)}
_TABLES: dict[str, _Spec] = {
    "similarity": {
        "sources": (list, None),
        "hownet": (str, None),
        "openhownet": (str, None),
        "vectors": (str, None),
        "cilin": (str, None),
        "cilin_method": (str, None),
        "hybrid_weight": ((int, float), (0.0, 1.0)),
        "step1": (str, None),
        "th1": ((int, float), (0.0, 1.0)),
        "th2": ((int, float), (0.0, 1.0)),
        "alpha": ((int, float), (0.0, 1.0)),
        "beta": ((int, float), (0.0, 1.0)),
    },
    "hownet": {
        "alpha": ((int, float), (1e-9, 100.0)),
        "beta": (list, None),
        "gamma": ((int, float), (0.0, 1.0)),
        "delta": ((int, float), (0.0, 1.0)),
    },
    "candidates": {"pos": (list, None), "min_length": (int, (1, 20))},
    "page": {
        "threshold": ((int, float), (0.0, 1.0)),
        "description_weight": ((int, float), (0.0, 1.0)),
        "struct_weight": ((int, float), (0.0, 1.0)),
        "formula3": (str, None),
        "host_prior": (bool, None),
        "host_prior_reference": ((int, float), (0.001, 0.999)),
        "host_prior_strength": ((int, float), (0.0, 1e6)),
        "host_prior_min_pages": (int, (0, 1_000_000)),
        "host_prior_elasticity": ((int, float), (0.01, 100.0)),
        "host_prior_max_shift": ((int, float), (0.0, 20.0)),
        "host_prior_sections": (bool, None),
    },
    "priority": {
        "mode": (str, None),
        "alpha": ((int, float), (0.0, 1.0)),
        "beta": ((int, float), (0.0, 1.0)),
        "lambda": ((int, float), (0.0, 1.0)),
        "threshold": ((int, float), (0.0, 1.0)),
        "focus": (str, None),
        "description_threshold": ((int, float), (0.0, 1.0)),
    },
    "urls": {
        "mode": (str, None),
        "alpha": ((int, float), (0.0, 1.0)),
        "beta": ((int, float), (0.0, 1.0)),
        "threshold": ((int, float), (0.0, 1.0)),
        "a": ((int, float), (0.0, 1.0)),
        "b": ((int, float), (0.0, 1.0)),
        "d": ((int, float), (1.0, 100.0)),
        "sample_size": (int, (1, 100000)),
        "per_host": (bool, None),
        "holding_page": (bool, None),
    },
    "classifier": {
        "examples": (str, None),
        "format": (str, None),
        "classes": (str, None),
        "positive": (list, None),
        "weight": ((int, float), (0.0, 1.0)),
        "anchors": (bool, None),
        "c": ((int, float), (1e-6, 1e6)),
    },
    "crawl": {"allowed_hosts": (list, None)},
    "learning": {
        "self_train": (bool, None),
        "combine": (str, None),
        "weight": ((int, float), (0.0, 1.0)),
        "positive": ((int, float), (0.0, 1.0)),
        "negative": ((int, float), (0.0, 1.0)),
        "retrain_every": (int, (1, 10_000_000)),
        "c": ((int, float), (1e-6, 1e6)),
        "em_lambda": ((int, float), (0.0, 1.0)),
        "em_steps": (int, (0, 100)),
        "background": (str, None),
        "background_limit": (int, (1, 10_000_000)),
        "background_weight": ((int, float), (0.0, 100.0)),
        "model": (str, None),
        "link_model": (bool, None),
        "link_rate": ((int, float), (0.0, 10.0)),
        "link_gate": ((int, float), (0.0, 10.0)),
        "link_gate_scope": (str, None),
        "anchor_context": (int, (0, 50)),
        "anchor_context_use": (str, None),
        "rejudge": (int, (0, 1_000_000)),
        "rejudge_literal": ((int, float), (0.0, 1.0)),
        "final_judgement": (int, (0, 10_000_000)),
        "contrast": (str, None),
        "contrast_weight": ((int, float), (0.0, 100.0)),
        "learn_contrast": (bool, None),
        "contrast_ratio": ((int, float), (0.0, 1.0)),
        "contrast_breadcrumbs": (bool, None),
        "section_meta": (bool, None),
        "contrast_against_crawl": (bool, None),
        "section_negatives": (bool, None),
        "domain_veto": ((int, float), (0.0, 1.0)),
        "domain_min": (int, (1, 1_000_000)),
        "domain_negative": (bool, None),
        "domain_labels": (bool, None),
        "domain_accept": ((int, float), (0.0, 1.0)),
        "calibrate_accept": (bool, None),
        "accept_mixture": (int, (0, 8)),
        "accept_mixture_cut": ((int, float), (0.0, 1.0)),
        "suggested": (list, None),
    },
}
_WORD_TABLES = ("words", "overrides")
_FREE_TABLES = ("clean", "dedup")
_CHOICES = {
    ("", "language"): ("zh", "en"),
    ("priority", "focus"): ("soft", "hard"),
    ("priority", "mode"): ("calibrated", "paper"),
    ("urls", "mode"): ("path", "paper"),
    ("page", "formula3"): ("normalized", "paper"),
    ("classifier", "format"): ("label-text", "text-label"),
    ("learning", "combine"): RULES,
    ("learning", "anchor_context_use"): ("prior", "feature"),
    ("learning", "link_gate_scope"): ("url", "all"),
}


def key_line(text: str, table: str | None, key: str | None) -> int | None:
    """Best-effort line number (1-based) of ``key`` inside ``[table]`` in the TOML text."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if table:
        hdr = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]\s*(#.*)?$")
        for i, line in enumerate(lines):
            if hdr.match(line):
                start = i + 1
                break
        else:
            return None
        for j in range(start, len(lines)):
            if re.match(r"^\s*\[", lines[j]):
                end = j
                break
        if key is None:
            return start
    elif key is not None:
        for j, line in enumerate(lines):
            if re.match(r"^\s*\[", line):
                end = j
                break
    if key is None:
        return None
    pat = re.compile(r"""^\s*(["']?)""" + re.escape(key) + r"""\1\s*=""")
    for i in range(start, end):
        if pat.match(lines[i]):
            return i + 1
    return None


def _check_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def parse_topic(text: str, path: str | None = None) -> Topic:
    """Parse and validate topic-file text; errors name the file, the line and the problem."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.14 has exc.lineno/msg; 3.11 only says "(at line N, column M)"
        line = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", None) or str(exc)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)", msg)
        if m:
            line = line or int(m.group(1))
            msg = msg[: m.start()] + f" (column {m.group(2)})" + msg[m.end() :]
        elif "(at end of document)" in msg:
            line = line or len(text.splitlines())
        raise TopicFileError(f"invalid TOML: {msg}", path=path, line=line) from None

    def fail(msg: str, table: str | None, key: str | None) -> TopicFileError:
        return TopicFileError(msg, path=path, line=key_line(text, table, key))

    known = set(_TOP) | set(_TABLES) | set(_WORD_TABLES) | set(_FREE_TABLES)
    for k in doc:
        if k not in known:
            raise fail(
                f"unknown key {k!r} (known: {', '.join(sorted(known))})",
                None if not isinstance(doc[k], dict) else k,
                k if not isinstance(doc[k], dict) else None,
            )
    for k in _WORD_TABLES:
        if k in doc and not isinstance(doc[k], dict):
            raise fail(f"{k!r} must be a table [{k}] of word = weight", None, k)
    for t in (*_TABLES, *_FREE_TABLES):
        if t in doc and not isinstance(doc[t], dict):
            raise fail(f"{t!r} must be a table [{t}]", None, t)

    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail("missing or empty 'name' (add: name = \"my topic\")", None, "name")

    for (table, key), choices in _CHOICES.items():
        src = doc if not table else doc.get(table, {})
        if key in src and src[key] not in choices:
            raise fail(
                f"{key} = {src[key]!r} is not one of {', '.join(map(repr, choices))}",
                table or None,
                key,
            )
    if "language" in doc and not isinstance(doc["language"], str):
        raise fail("'language' must be a string", None, "language")

    for t, spec in _TABLES.items():
        tab = doc.get(t, {})
        for k, v in tab.items():
            if k not in spec:
                raise fail(f"unknown key {k!r} in [{t}] (known: {', '.join(spec)})", t, k)
            typ, rng = spec[k]
            if typ is list:
                if not isinstance(v, list):
                    raise fail(f"[{t}] {k} must be a list", t, k)
                continue
            if typ is str:
                if not isinstance(v, str):
                    raise fail(f"[{t}] {k} must be a string", t, k)
                continue
            if typ is bool:
                if not isinstance(v, bool):
                    raise fail(f"[{t}] {k} must be true or false, not {v!r}", t, k)
                continue
            if typ is int and (not isinstance(v, int) or isinstance(v, bool)):
                raise fail(f"[{t}] {k} must be an integer", t, k)
            if not _check_number(v):
                raise fail(f"[{t}] {k} must be a number, not {v!r}", t, k)
            if rng and not (rng[0] <= v <= rng[1]):
                raise fail(f"[{t}] {k} = {v} is outside [{rng[0]}, {rng[1]}]", t, k)

    words: dict[str, dict[str, float]] = {}
    for t in _WORD_TABLES:
        out: dict[str, float] = {}
        for w, v in doc.get(t, {}).items():
            if not _check_number(v) or v < 0:
                raise fail(f"weight of {w!r} in [{t}] must be a number >= 0, not {v!r}", t, w)
            if not w.strip():
                raise fail(f"empty word in [{t}]", t, w)
            out[w] = float(v)
        words[t] = out
    if not words["words"] and not words["overrides"]:
        raise TopicFileError(
            "no topic words: add a [words] table (topicrawl topic add FILE WORD...)",
            path=path, line=len(text.splitlines()) or 1,
        )
    if not words["words"]:  # overrides adjust the words' weights: they need words
        raise fail(
            "[overrides] without [words]: list the topic words in a [words] table",
            "overrides", None,
        )
    final = {**words["words"], **words["overrides"]}
    if not any(v > 0 for v in final.values()):
        raise fail("every topic word has weight 0: give at least one a weight > 0", "words", None)

    sim_t = doc.get("similarity", {})
    sources = sim_t.get("sources", ["hownet"])
    for s in sources:
        if s not in SOURCES:
            raise fail(
                f"unknown similarity source {s!r} (choose from {', '.join(SOURCES)})",
                "similarity",
                "sources",
            )
    if not sources:
        raise fail("[similarity] sources is empty", "similarity", "sources")
    if "word2vec" in sources and not sim_t.get("vectors"):
        raise fail(
            "source 'word2vec' needs [similarity] vectors = \"path/to/vectors.kv\" "
            "(train one with: topicrawl vectors train --corpus FILE --out PATH)",
            "similarity",
            "sources",
        )
    if sim_t.get("cilin_method", "ic") not in CILIN_METHODS:
        raise fail(
            f"[similarity] cilin_method must be one of {', '.join(CILIN_METHODS)}",
            "similarity",
            "cilin_method",
        )
    if sim_t.get("step1", "paper") not in STEP1:
        raise fail(f"[similarity] step1 must be one of {', '.join(STEP1)}", "similarity", "step1")
    similarity = SimilarityConfig(
        sources=list(sources),
        cilin=sim_t.get("cilin", ""),
        cilin_method=sim_t.get("cilin_method", "ic"),
        hybrid_weight=float(sim_t.get("hybrid_weight", 0.9)),
        step1=sim_t.get("step1", "paper"),
        hownet=sim_t.get("hownet", ""),
        openhownet=sim_t.get("openhownet", ""),
        vectors=sim_t.get("vectors", ""),
        th1=float(sim_t.get("th1", 0.1)),
        th2=float(sim_t.get("th2", 0.1)),
        alpha=float(sim_t.get("alpha", 0.5)),
        beta=float(sim_t.get("beta", 0.5)),
    )

    hn_t = doc.get("hownet", {})
    beta = hn_t.get("beta", [0.5, 0.2, 0.17, 0.13])
    if len(beta) != 4 or not all(_check_number(b) and b >= 0 for b in beta):
        raise fail("[hownet] beta must be 4 numbers >= 0 (β1..β4)", "hownet", "beta")
    if abs(sum(beta) - 1.0) > 1e-6:
        raise fail(f"[hownet] beta must sum to 1 (sums to {sum(beta):g})", "hownet", "beta")
    hownet = HowNetConfig(
        alpha=float(hn_t.get("alpha", 1.6)),
        beta=tuple(float(b) for b in beta),  # type: ignore[arg-type]
        gamma=float(hn_t.get("gamma", 0.2)),
        delta=float(hn_t.get("delta", 0.2)),
    )

    c_t = doc.get("candidates", {})
    pos = c_t.get("pos", list(DEFAULT_POS))
    if not all(isinstance(p, str) and p for p in pos):
        raise fail("[candidates] pos must be a list of jieba POS tags", "candidates", "pos")
    candidates = CandidateConfig(pos=list(pos), min_length=int(c_t.get("min_length", 2)))

    p_t = doc.get("priority", {})
    mode = p_t.get("mode", "calibrated")
    calibrated = mode == "calibrated"
    priority = PriorityConfig(
        mode=mode,
        alpha=float(p_t.get("alpha", 0.3 if calibrated else 0.4)),
        beta=float(p_t.get("beta", 0.7 if calibrated else 0.4)),
        lam=float(p_t.get("lambda", 0.2)),
        threshold=float(p_t.get("threshold", 0.0 if calibrated else 0.2)),
        focus=p_t.get("focus", "soft"),
        description_threshold=float(p_t.get("description_threshold", 0.1)),
    )
    u_t = doc.get("urls", {})
    urls = UrlConfig(
        mode=u_t.get("mode", "path"),
        alpha=float(u_t.get("alpha", 0.5)),
        beta=float(u_t.get("beta", 0.5)),
        threshold=float(u_t.get("threshold", 0.1 if u_t.get("mode") == "paper" else 0.75)),
        a=float(u_t.get("a", 0.6)),
        b=float(u_t.get("b", 0.2)),
        d=float(u_t.get("d", 2.0)),
        sample_size=int(u_t.get("sample_size", 20)),
        per_host=bool(u_t.get("per_host", True)),
        holding_page=bool(u_t.get("holding_page", True)),
    )
    classifier = None
    if "classifier" in doc:
        c_t = doc["classifier"]
        if not c_t.get("examples", "").strip():
            raise fail(
                '[classifier] needs examples = "PATH" (a labelled example file)',
                "classifier",
                None,
            )
        positive = c_t.get("positive", [])
        if not positive or not all(isinstance(x, str) and x.strip() for x in positive):
            raise fail(
                '[classifier] positive must be a non-empty list of labels, e.g. ["时政"]',
                "classifier",
                "positive" if "positive" in c_t else None,
            )
        classifier = ClassifierConfig(
            examples=c_t["examples"],
            positive=[x.strip() for x in positive],
            format=c_t.get("format", "label-text"),
            classes=c_t.get("classes", ""),
            weight=float(c_t.get("weight", 0.5)),
            anchors=bool(c_t.get("anchors", True)),
            c=float(c_t.get("c", 10.0)),
        )
    l_t = doc.get("learning", {})
    defaults = LearningConfig()
    learning = LearningConfig(**{k: type(getattr(defaults, k))(v) for k, v in l_t.items()})
    if learning.negative >= learning.positive:
        raise fail(
            f"[learning] negative ({learning.negative}) must be below positive "
            f"({learning.positive})",
            "learning",
            "negative",
        )
    if learning.accept_mixture == 1:
        raise fail("[learning] accept_mixture must be 0 (off) or 2 to 8 components, not 1",
                   "learning", "accept_mixture")  # fmt: skip
    hosts = doc.get("crawl", {}).get("allowed_hosts", [])
    for h in hosts:
        if not isinstance(h, str) or not re.fullmatch(r"(\*\.)?[A-Za-z0-9.-]+(:\d+)?", h):
            raise fail(
                f"allowed_hosts entry {h!r} is not a host name or '*.suffix' pattern",
                "crawl",
                "allowed_hosts",
            )
    return Topic(
        name=name.strip(),
        language=doc.get("language", "zh"),
        words=words["words"],
        overrides=words["overrides"],
        allowed_hosts=[h.lower() for h in hosts],
        page_threshold=float(doc.get("page", {}).get("threshold", 0.5 if calibrated else 0.25)),
        page_description_weight=float(doc.get("page", {}).get("description_weight", 0.5)),
        page_struct_weight=float(doc.get("page", {}).get("struct_weight", 0.5)),
        page_formula3=str(doc.get("page", {}).get("formula3", "normalized")),
        page_host_prior=_host_prior(doc.get("page", {})),
        similarity=similarity,
        hownet=hownet,
        candidates=candidates,
        priority=priority,
        urls=urls,
        classifier=classifier,
        learning=learning,
        clean=dict(doc.get("clean", {})),
        dedup=dict(doc.get("dedup", {})),
        path=path,
        raw=text,
    )


def _host_prior(page: dict[str, Any]) -> HostPriorConfig:
    """The ``[page] host_prior*`` keys (relevance.hostprior; validated by the schema)."""
    d = HostPriorConfig()
    return HostPriorConfig(
        enabled=bool(page.get("host_prior", d.enabled)),
        reference=float(page.get("host_prior_reference", d.reference)),
        strength=float(page.get("host_prior_strength", d.strength)),
        min_pages=int(page.get("host_prior_min_pages", d.min_pages)),
        elasticity=float(page.get("host_prior_elasticity", d.elasticity)),
        max_shift=float(page.get("host_prior_max_shift", d.max_shift)),
        sections=bool(page.get("host_prior_sections", d.sections)),
    )


#: Largest topic file accepted, in bytes (the shipped topics are under 20 kB)
MAX_TOPIC_BYTES = 5_000_000


def load_topic(path: str | Path) -> Topic:
    """Load and validate a topic file; raises TopicFileError naming file, line and problem."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_TOPIC_BYTES:
            raise TopicFileError(
                f"topic file of {size / 1e6:.1f} MB is over the {MAX_TOPIC_BYTES / 1e6:.0f} MB "
                "limit (a topic needs tens to thousands of words, not millions)",
                path=str(p),
            )
        data = p.read_bytes()
    except FileNotFoundError:
        raise TopicFileError(
            "topic file not found (create one with: topicrawl topic init FILE --name NAME)",
            path=str(p),
        ) from None
    except OSError as exc:
        raise TopicFileError(f"cannot read topic file: {exc}", path=str(p)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TopicFileError(
            f"not UTF-8 (byte {data[exc.start]:#04x}): save the file as UTF-8",
            path=str(p), line=line,
        ) from None
    return parse_topic(text, path=str(p))
