"""Editing topic files with tomlkit, keeping the user's comments and layout.

Every function takes the file text and returns the new text; the result is validated with
:func:`relevance.topic.parse_topic` before anything is written, so an edit never leaves a
broken file behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError

from relevance.topic import Topic, parse_topic
from topicrawl.errors import TopicFileError

TEMPLATE = """\
# topicrawl topic file (see docs/topic-file.md)
name = {name}
language = {language}

# Topic words and their weights (formula 2; `topicrawl topic weights FILE --corpus PATH`)
[words]

[overrides]
# Manual weights that win over [words] (the paper's Table 3), e.g. "中国" = 0.2

[similarity]
# "hownet" (Liu Qun 2002 over glossary.dat), "openhownet", "word2vec" (needs `vectors`)
sources = ["hownet"]
th1 = 0.1
th2 = 0.1

[page]
threshold = 0.25

[priority]
alpha = 0.4
beta = 0.4
lambda = 0.2
threshold = 0.2
focus = "soft"

[urls]
mode = "path"

[crawl]
allowed_hosts = []
"""


def _doc(text: str, path: str | None) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise TopicFileError(f"invalid TOML: {exc}", path=path, line=exc.line) from None


def _table(doc: tomlkit.TOMLDocument, name: str):
    if name not in doc:
        doc.add(tomlkit.nl())
        doc.add(name, tomlkit.table())
    return doc[name]


def _finish(doc: tomlkit.TOMLDocument, path: str | None) -> str:
    text = tomlkit.dumps(doc)
    parse_topic(text, path=path)
    return text


def init_text(name: str, language: str = "zh", words: Mapping[str, float] | None = None) -> str:
    """A new topic file (documented template) with optional words."""
    text = TEMPLATE.format(name=tomlkit.string(name).as_string(), language=f'"{language}"')
    if words:
        doc = tomlkit.parse(text)
        for w, v in words.items():
            doc["words"][w] = float(v)
        return tomlkit.dumps(doc)
    return text


def add_words(
    text: str,
    words: Iterable[str] | Mapping[str, float],
    *,
    weight: float = 1.0,
    table: str = "words",
    path: str | None = None,
) -> str:
    """Add (or re-weight) words in ``[words]`` (or ``[overrides]``)."""
    doc = _doc(text, path)
    tab = _table(doc, table)
    items = words.items() if isinstance(words, Mapping) else ((w, weight) for w in words)
    for w, v in items:
        w = w.strip()
        if w:
            tab[w] = float(v)
    return _finish(doc, path)


def remove_words(text: str, words: Iterable[str], *, path: str | None = None) -> str:
    """Remove words from ``[words]`` and ``[overrides]``; unknown words are an error."""
    doc = _doc(text, path)
    for w in words:
        found = False
        for t in ("words", "overrides"):
            if t in doc and w in doc[t]:
                del doc[t][w]
                found = True
        if not found:
            raise TopicFileError(f"word {w!r} is not in [words] or [overrides]", path=path)
    return _finish(doc, path)


def _coerce(value: str) -> Any:
    try:
        return tomlkit.parse(f"v = {value}")["v"]
    except ParseError:
        return value  # a bare string


def set_value(text: str, key: str, value: str | Any, *, path: str | None = None) -> str:
    """Set ``key`` (``name`` or ``table.key``, e.g. ``priority.threshold``) to ``value``.

    A string value is read as TOML when it parses (``0.3``, ``["hownet", "word2vec"]``,
    ``true``) and kept as a string otherwise.
    """
    doc = _doc(text, path)
    v = _coerce(value) if isinstance(value, str) else value
    if "." in key:
        table, k = key.split(".", 1)
        _table(doc, table)[k] = v
    else:
        doc[key] = v
    return _finish(doc, path)


def _classifier_line(topic: Topic) -> str:
    c = topic.classifier
    if c is None:
        return "(none: formula 3 alone)"
    return f"weight={c.weight} positive={', '.join(c.positive)} examples={c.examples}" + (
        "" if c.anchors else " anchors=false"
    )


def show(topic: Topic) -> str:
    """A human-readable summary of a loaded topic."""
    w = topic.weights
    lines = [
        f"topic      {topic.name} ({topic.language})",
        f"file       {topic.path}",
        f"words      {len(topic.words)} (+{len(topic.overrides)} overrides, {len(w)} weighted > 0)",
        f"sources    {', '.join(topic.similarity.sources)}"
        + (f" (vectors: {topic.similarity.vectors})" if topic.similarity.vectors else ""),
        f"algorithm1 th1={topic.similarity.th1} th2={topic.similarity.th2} "
        f"alpha={topic.similarity.alpha} beta={topic.similarity.beta}",
        f"formula5   alpha={topic.priority.alpha} beta={topic.priority.beta} "
        f"lambda={topic.priority.lam} threshold={topic.priority.threshold} "
        f"focus={topic.priority.focus}",
        f"page       threshold={topic.page_threshold} "
        f"description_weight={topic.page_description_weight} "
        f"struct_weight={topic.page_struct_weight}",
        f"urls       mode={topic.urls.mode} threshold={topic.urls.threshold} "
        f"n={topic.urls.sample_size} per_host={str(topic.urls.per_host).lower()}",
        f"classifier {_classifier_line(topic)}",
        f"hosts      {', '.join(topic.allowed_hosts) or '(the seeds hosts)'}",
        "",
        "weight  word",
    ]
    for word, v in sorted(w.items(), key=lambda t: (-t[1], t[0])):
        mark = " (override)" if word in topic.overrides else ""
        lines.append(f"{v:6.3f}  {word}{mark}")
    return "\n".join(lines)
