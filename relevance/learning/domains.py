"""HowNet domains as sibling knowledge for the page model's pseudo-labels.

HowNet (Dong & Dong, *HowNet and the Computation of Meaning*, 2006) marks about 5,300
words of ``glossary.dat`` with a domain secondary feature in their DEF — ``sport|体育``,
``entertainment|艺``, ``commercial|商``, ``education|教育``, ``politics|政``, ``military|军``,
… (``HowNet_Taxonomy_SecondaryFeature``, under ``domain|领域``). That is knowledge of the
*other* categories a topic's words cannot give: from the topic words alone the topic's
domains are known, and a fetched page's domain profile is the share of its domain-tagged
words in each domain. A confident positive by literal evidence (P_lit ≥ ``positive``)
whose domain-tagged words lie mostly (≥ ``domain_veto``) outside the topic's domains is a
sibling-category page that happens to use the topic's words (a 时尚 page with 明星 / 性感 /
代言 for 娱乐): with ``[learning] domain_veto`` it is not a positive of the page model.

The lexicon is built once from the glossary (HowNet's own parser, :mod:`relevance.hownet`)
and kept in the start-up cache (:mod:`topicrawl.modelcache`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

#: the domain secondary features the glossary uses (its DEFs name them in their other
#: sememes; sub-domains of the taxonomy — football, securities — do not occur there)
DOMAINS = (
    "sport|体育", "entertainment|艺", "commercial|商", "education|教育", "politics|政",
    "military|军", "police|警", "medical|医", "religion|宗教", "literature|文",
    "agricultural|农", "industrial|工", "diplomatic|外交", "finance|金融",
)  # fmt: skip


def read_domains(glossary: Path) -> dict[str, frozenset[str]]:
    """``{word: its domains}`` (the Chinese names, ``体育``) of the glossary's words with a
    domain feature in any of their DEFs."""
    from relevance.hownet import parse_def, read_glossary

    wanted = set(DOMAINS)
    out: dict[str, set[str]] = {}
    for word, _pos, definition in read_glossary(glossary):
        for kind, name in parse_def(definition).others:
            if kind == "s" and name in wanted:
                out.setdefault(word, set()).add(name.split("|", 1)[1])
    return {w: frozenset(d) for w, d in out.items()}


def load_domains(directory: str | Path | None = None) -> dict[str, frozenset[str]]:
    """:func:`read_domains` of the shared HowNet glossary (``directory``: its folder), through
    the start-up cache (:mod:`topicrawl.modelcache`: keyed by the glossary's and this code's
    content, JSON; ResourceMissingError / OSError when the glossary is missing)."""
    from relevance.hownet import dictionary_files
    from topicrawl import modelcache

    glossary, _ = dictionary_files(directory)

    def build() -> dict[str, list[str]]:
        return {w: sorted(d) for w, d in read_domains(glossary).items()}

    if modelcache.enabled():
        key = modelcache.cache_key("hownet-domains", {}, files=[glossary],
                                   code=[__name__, "relevance.hownet"])  # fmt: skip
        found = modelcache.cached("hownet-domains", key, build)
    else:
        found = build()
    return {w: frozenset(d) for w, d in found.items()}


class DomainProfile:
    """A topic's HowNet domains and the domain profile of a page's words against them."""

    def __init__(self, topic_words: Iterable[str], domains: Mapping[str, frozenset[str]], *,
                 veto: float = 0.7, min_words: int = 2):  # fmt: skip
        self.domains = domains
        self.topic = frozenset(d for w in topic_words for d in domains.get(w, ()))
        self.veto, self.min_words = veto, min_words

    def profile(self, words: Sequence[str]) -> Counter:
        """The page's domain-tagged words by domain (a word of k domains counts 1/k to each)."""
        out: Counter = Counter()
        get = self.domains.get
        for w in words:
            d = get(w)
            if d:
                for x in d:
                    out[x] += 1.0 / len(d)
        return out

    def foreign_share(self, words: Sequence[str]) -> tuple[float, float]:
        """(domain-tagged words, the share of them in domains none of the topic's words has)."""
        prof = self.profile(words)
        n = sum(prof.values())
        if n <= 0:
            return 0.0, 0.0
        return n, sum(x for d, x in prof.items() if d not in self.topic) / n

    def vetoes(self, words: Sequence[str]) -> bool:
        """True when the page's domain words are at least ``min_words`` and at least ``veto``
        of them lie outside the topic's domains (a topic without any domain vetoes nothing)."""
        if not self.topic:
            return False
        n, share = self.foreign_share(words)
        return n >= self.min_words and share >= self.veto
