"""A user's labels for a topic: a page, a section or a whole host is relevant or not.

The crawl console stores them (``labels`` table); a crawl of the topic reads them at start and
they override the self-trained page model's pseudo-labels and the outcome the online link
model learns from: a page the user judged is a training example with the user's label, not
with the one its literal evidence suggests (labels over pseudo-labels, as in Nigam et al.
2000's semi-supervised setting where labelled documents are fixed). A page label wins over
its section's, a section's over its host's.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

SCOPES = ("page", "section", "host")


def section_of(url: str) -> str:
    """The section of a URL: scheme, host and first path segment (``http://h/politics/``);
    the host's root for a URL without a directory."""
    parts = urlsplit(url)
    segs = [s for s in parts.path.split("/") if s]
    first = f"{segs[0]}/" if len(segs) > 1 else ""
    return f"{parts.scheme}://{parts.netloc}/{first}"


class UserLabels:
    """Lookup of the label that applies to a URL (page over section over host)."""

    def __init__(
        self,
        pages: dict[str, bool] | None = None,
        sections: dict[str, bool] | None = None,
        hosts: dict[str, bool] | None = None,
    ):
        self.pages = dict(pages or {})
        self.sections = dict(sections or {})
        self.hosts = {h.lower(): v for h, v in (hosts or {}).items()}

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, bool]]) -> UserLabels:
        """From ``(scope, target, label)`` rows; an unknown scope raises ValueError."""
        by_scope: dict[str, dict[str, bool]] = {s: {} for s in SCOPES}
        for scope, target, label in rows:
            if scope not in by_scope:
                raise ValueError(f"label scope must be one of {', '.join(SCOPES)}, not {scope!r}")
            by_scope[scope][target] = bool(label)
        return cls(by_scope["page"], by_scope["section"], by_scope["host"])

    def __len__(self) -> int:
        return len(self.pages) + len(self.sections) + len(self.hosts)

    def lookup(self, url: str) -> bool | None:
        """The user's label for ``url``, or None when no label applies."""
        found = self.pages.get(url)
        if found is not None:
            return found
        if self.sections:
            found = self.sections.get(section_of(url))
            if found is not None:
                return found
        if self.hosts:
            return self.hosts.get((urlsplit(url).hostname or "").lower())
        return None
