"""Topic files edited through the console: read and written only under one directory, edited
with tomlkit (comments and layout kept), validated by :func:`relevance.topic.parse_topic`
before anything is written, each problem attached to the form field it comes from."""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError

from relevance.topic import Topic, key_line, parse_topic
from topicrawl.errors import TopicFileError
from topicrawl.files import write_atomic

#: A topic file's name in the console: letters, digits, CJK, ``_``, ``-``, ``.toml``
FILE_NAME = re.compile(r"^[\w\-\u4e00-\u9fff]{1,100}\.toml$")

#: Editable fields: form name -> (table or "", key, kind)
FIELDS: dict[str, tuple[str, str, str]] = {
    "name": ("", "name", "str"),
    "language": ("", "language", "str"),
    "page.threshold": ("page", "threshold", "num"),
    "page.description_weight": ("page", "description_weight", "num"),
    "page.struct_weight": ("page", "struct_weight", "num"),
    "priority.alpha": ("priority", "alpha", "num"),
    "priority.beta": ("priority", "beta", "num"),
    "priority.lambda": ("priority", "lambda", "num"),
    "priority.threshold": ("priority", "threshold", "num"),
    "priority.focus": ("priority", "focus", "str"),
    "priority.description_threshold": ("priority", "description_threshold", "num"),
    "similarity.sources": ("similarity", "sources", "list"),
    "similarity.vectors": ("similarity", "vectors", "str"),
    "classifier.examples": ("classifier", "examples", "str"),
    "classifier.positive": ("classifier", "positive", "list"),
    "classifier.weight": ("classifier", "weight", "num"),
    "crawl.allowed_hosts": ("crawl", "allowed_hosts", "list"),
}
WORD_TABLES = ("words", "overrides")


@dataclass
class FieldError:
    """A problem of the edited file, at the form field it comes from (``field`` is a key
    of :data:`FIELDS`, ``words.WORD``/``overrides.WORD``, or ``file`` when no field fits)."""

    field: str
    message: str
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "message": self.message, "line": self.line}


@dataclass
class TopicEdit:
    """The form: changed fields (None: leave, "": remove an optional key) and the complete
    word tables (None: leave the table as it is)."""

    fields: dict[str, Any] = field(default_factory=dict)
    words: dict[str, Any] | None = None
    overrides: dict[str, Any] | None = None


@dataclass
class EditResult:
    text: str
    errors: list[FieldError]
    diff: str


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class TopicDirectory:
    """The topic files of one directory; any other path is refused (no traversal)."""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()

    def path(self, name: str) -> Path:
        """The file ``name`` in the directory; a name with a separator, ``..`` or another
        suffix, or a link that leads outside, raises TopicFileError."""
        if not FILE_NAME.fullmatch(name or ""):
            raise TopicFileError(
                "a topic file is named NAME.toml (letters, digits, _ and -) inside the topics "
                "directory",
                path=name,
            )
        p = (self.root / name).resolve()
        if p.parent != self.root:
            raise TopicFileError("outside the topics directory", path=name)
        return p

    def list(self) -> list[dict[str, Any]]:
        out = []
        for p in sorted(self.root.glob("*.toml")):
            if not FILE_NAME.fullmatch(p.name) or p.resolve().parent != self.root:
                continue
            try:
                topic = parse_topic(p.read_text(encoding="utf-8"), path=str(p))
                out.append({"file": p.name, "name": topic.name, "words": len(topic.weights),
                            "error": None})  # fmt: skip
            except TopicFileError as exc:
                out.append({"file": p.name, "name": None, "words": 0, "error": str(exc)})
        return out

    def read(self, name: str) -> str:
        p = self.path(name)
        if not p.exists():
            raise FileNotFoundError(name)
        return p.read_text(encoding="utf-8")

    def load(self, name: str) -> Topic:
        return parse_topic(self.read(name), path=str(self.path(name)))

    def apply(self, name: str, edit: TopicEdit) -> EditResult:
        """The file's new text after ``edit``, its problems per field, and the diff."""
        old = self.read(name)
        text, errors = apply_edit(old, edit, path=str(self.path(name)))
        diff = "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True),
                f"{name} (saved)", f"{name} (edited)",
            )
        )  # fmt: skip
        return EditResult(text, errors, diff)

    def save(self, name: str, edit: TopicEdit, base_sha: str | None) -> EditResult:
        """Write the edit when it is valid and the file did not change since ``base_sha``
        (the version the form was made from); otherwise the file is left as it is."""
        if base_sha is not None and sha(self.read(name)) != base_sha:
            return EditResult(
                self.read(name),
                [FieldError("file", "the file changed since this form was loaded: reload it")],
                "",
            )
        result = self.apply(name, edit)
        if not result.errors:
            write_atomic(self.path(name), result.text)
        return result


def form_values(topic: Topic, text: str) -> dict[str, Any]:
    """The form's values of a topic file (what :data:`FIELDS` names, and the word tables)."""
    doc = tomlkit.parse(text).unwrap()
    values: dict[str, Any] = {}
    for name, (table, key, _) in FIELDS.items():
        src = doc if not table else doc.get(table, {})
        values[name] = src.get(key) if isinstance(src, dict) else None
    values["words"] = dict(topic.words)
    values["overrides"] = dict(topic.overrides)
    return values


def _convert(name: str, kind: str, value: Any) -> Any:
    if kind == "num":
        if isinstance(value, bool):
            raise ValueError("must be a number")
        if isinstance(value, int | float):
            return value
        try:
            return float(str(value).strip())
        except ValueError:
            raise ValueError(f"must be a number, not {value!r}") from None
    if kind == "list":
        if isinstance(value, list):
            return [str(v).strip() for v in value if str(v).strip()]
        return [v.strip() for v in str(value).split(",") if v.strip()]
    if not isinstance(value, str):
        raise ValueError(f"must be text, not {value!r}")
    return value.strip()


def apply_edit(text: str, edit: TopicEdit, *, path: str | None = None) -> tuple[str, list[FieldError]]:
    """Apply ``edit`` to the topic file ``text`` with tomlkit; returns the new text and the
    problems found (form values that are not numbers, then :func:`parse_topic`'s error at the
    field whose line it names)."""
    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        return text, [FieldError("file", f"invalid TOML: {exc}", exc.line)]
    errors: list[FieldError] = []
    for name, value in edit.fields.items():
        if name not in FIELDS:
            errors.append(FieldError(name, f"unknown field (editable: {', '.join(FIELDS)})"))
            continue
        if value is None:
            continue
        table, key, kind = FIELDS[name]
        if value == "" and name != "name":  # remove an optional key
            container = doc if not table else doc.get(table)
            if container is not None and key in container:
                del container[key]
            continue
        try:
            converted = _convert(name, kind, value)
        except ValueError as exc:
            errors.append(FieldError(name, str(exc)))
            continue
        container = doc if not table else doc.get(table)
        if container is not None and key in container and _same(container[key], converted):
            continue  # unchanged: keep its formatting
        if table:
            if table not in doc:
                doc.add(tomlkit.nl())
                doc.add(table, tomlkit.table())
            doc[table][key] = converted
        else:
            doc[key] = converted
    for table in WORD_TABLES:
        wanted = getattr(edit, table)
        if wanted is None or (not wanted and table not in doc):
            continue
        if table not in doc:
            doc.add(tomlkit.nl())
            doc.add(table, tomlkit.table())
        tab = doc[table]
        clean: dict[str, float] = {}
        for word, value in wanted.items():
            word = str(word).strip()
            if not word:
                errors.append(FieldError(f"{table}.", "empty word"))
                continue
            try:
                clean[word] = float(_convert(word, "num", value))
            except ValueError as exc:
                errors.append(FieldError(f"{table}.{word}", f"weight {exc}"))
        if errors:
            continue
        for word in [w for w in tab if w not in clean]:
            del tab[word]
        for word, value in clean.items():
            if word not in tab or float(tab[word]) != value:
                tab[word] = value
    if errors:
        return text, errors
    new = tomlkit.dumps(doc)
    try:
        parse_topic(new, path=path)
    except TopicFileError as exc:
        message = str(exc)
        if path and message.startswith(path):
            message = message[len(path) :].lstrip(":0123456789 ")
        return new, [FieldError(_field_at(new, exc.line, edit), message, exc.line)]
    return new, []


def _same(item: Any, value: Any) -> bool:
    current = item.unwrap() if hasattr(item, "unwrap") else item
    if isinstance(value, float) and isinstance(current, int | float) and not isinstance(
        current, bool
    ):
        return float(current) == value
    return current == value


def _field_at(text: str, line: int | None, edit: TopicEdit) -> str:
    """The form field whose key is on ``line`` of ``text`` ("file" when none is)."""
    if line is None:
        return "file"
    for name, (table, key, _) in FIELDS.items():
        if key_line(text, table or None, key) == line:
            return name
    for table in WORD_TABLES:
        for word in getattr(edit, table) or {}:
            if key_line(text, table, word) == line:
                return f"{table}.{word}"
        if key_line(text, table, None) == line:
            return table
    return "file"
