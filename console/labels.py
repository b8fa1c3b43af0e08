"""Labels per topic: a page, a section (URL prefix) or a whole host is relevant or not.

Stored in the ``labels`` table (one row per topic, scope and target; labelling again
replaces). Exported as ``url<TAB>1|0`` lines, the TSV that ``topicrawl topic tune --labels``
reads (:func:`relevance.evaluate.load_labels`): page labels as they are; with a run, every
page of the run under a labelled section or host too (a page label wins over its section's,
a section's over its host's).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from models.orm import Label, Page
from models.store import Store
from relevance.learning.labels import SCOPES, section_of


class LabelError(ValueError):
    """A label request that cannot be stored (the message says which value)."""


def label_target(scope: str, url: str) -> str:
    """What a label of ``scope`` on the page ``url`` names: the URL, its section or host."""
    if scope == "page":
        return url
    if scope == "section":
        return section_of(url)
    if scope == "host":
        return (urlsplit(url).hostname or "").lower()
    raise LabelError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")


class LabelStore:
    """Reads and writes the labels table."""

    def __init__(self, store: Store):
        self.store = store

    def _session(self) -> Session:
        return Session(self.store.engine, expire_on_commit=False)

    def set(
        self, topic: str, scope: str, target: str, label: bool, run_id: int | None = None
    ) -> dict[str, Any]:
        if not topic.strip():
            raise LabelError("topic must not be empty")
        if scope not in SCOPES:
            raise LabelError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        target = target.strip()
        if not target:
            raise LabelError("target must not be empty")
        if scope in ("page", "section") and urlsplit(target).scheme not in ("http", "https"):
            raise LabelError(f"a {scope} label's target is an http(s) URL, not {target!r}")
        with self._session() as s, s.begin():
            row = s.scalar(
                select(Label).where(
                    Label.topic_name == topic, Label.scope == scope, Label.target == target
                )
            )
            if row is None:
                row = Label(topic_name=topic, scope=scope, target=target)
                s.add(row)
            row.label = bool(label)
            row.run_id = run_id
            row.created_at = datetime.now(UTC)
        return as_dict(row)

    def delete(self, label_id: int) -> bool:
        with self._session() as s, s.begin():
            return s.execute(delete(Label).where(Label.id == label_id)).rowcount > 0

    def list(self, topic: str | None = None) -> list[dict[str, Any]]:
        query = select(Label).order_by(Label.topic_name, Label.scope, Label.target)
        if topic is not None:
            query = query.where(Label.topic_name == topic)
        with self._session() as s:
            return [as_dict(r) for r in s.scalars(query)]

    def topics(self) -> list[str]:
        with self._session() as s:
            return list(s.scalars(select(Label.topic_name).distinct().order_by(Label.topic_name)))

    def for_page(self, topic: str, url: str) -> dict[str, bool | None]:
        """The labels that apply to a page, per scope."""
        wanted = {scope: label_target(scope, url) for scope in SCOPES}
        with self._session() as s:
            rows = s.scalars(
                select(Label).where(
                    Label.topic_name == topic, Label.target.in_(list(wanted.values()))
                )
            )
            found = {(r.scope, r.target): r.label for r in rows}
        return {scope: found.get((scope, t)) for scope, t in wanted.items()}

    def resolved(self, topic: str, run_id: int | None = None) -> dict[str, bool]:
        """url -> label: the page labels, and with ``run_id`` every page of that run under
        a labelled section or host (page over section over host)."""
        labels = self.list(topic)
        pages = {r["target"]: r["label"] for r in labels if r["scope"] == "page"}
        sections = {r["target"]: r["label"] for r in labels if r["scope"] == "section"}
        hosts = {r["target"]: r["label"] for r in labels if r["scope"] == "host"}
        out: dict[str, bool] = {}
        if run_id is not None and (sections or hosts):
            with self._session() as s:
                last = 0
                while True:  # keyset batches: a large run is not read at once
                    rows = s.execute(
                        select(Page.id, Page.url, Page.host)
                        .where(Page.run_id == run_id, Page.id > last)
                        .order_by(Page.id)
                        .limit(5000)
                    ).all()
                    if not rows:
                        break
                    last = rows[-1].id
                    for _, url, host in rows:
                        sec = sections.get(section_of(url))
                        lab = sec if sec is not None else hosts.get((host or "").lower())
                        if lab is not None:
                            out[url] = lab
        out.update(pages)
        return out

    def tsv(self, topic: str, run_id: int | None = None) -> str:
        """``url<TAB>1|0`` lines for ``topicrawl topic tune --labels``."""
        return "".join(
            f"{url}\t{int(lab)}\n" for url, lab in sorted(self.resolved(topic, run_id).items())
        )


def as_dict(row: Label) -> dict[str, Any]:
    return {
        "id": row.id,
        "topic": row.topic_name,
        "scope": row.scope,
        "target": row.target,
        "label": bool(row.label),
        "run_id": row.run_id,
        "created_at": row.created_at.isoformat() if row.created_at else None,
    }
