"""Unlabelled background text: negatives for the self-trained page model.

Most lines of a general corpus are off any one topic, so a sample of them, weighted down,
keeps the page model from calling everything the crawl fetched on-topic. Lines may be raw
text, ``label<TAB>text`` / ``text<TAB>label`` (the label is ignored: the longer side is the
text) or pre-segmented ``word/pos`` text (People's Daily).
"""

from __future__ import annotations

import re
from pathlib import Path

from topicrawl.errors import ResourceMissingError

_POS = re.compile(r"/[a-zA-Z]+\b")


def read_background(path: str | Path, *, limit: int = 2000) -> list[str]:
    """The first ``limit`` non-empty lines of a text file, as plain text."""
    out: list[str] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                if "\t" in line:
                    line = max(line.split("\t"), key=len)
                if "/" in line and " " in line:
                    line = _POS.sub("", line).replace(" ", "")
                out.append(line)
                if len(out) >= limit:
                    break
    except OSError as exc:
        raise ResourceMissingError(f"background text {path}: {exc}") from None
    if not out:
        raise ResourceMissingError(f"background text {path}: no lines")
    return out
