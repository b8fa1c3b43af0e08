"""Tongyici Cilin (extended, HIT-SCIR) loader, used by DWDCS to merge synonyms into concepts.

The file has one synonym set a line: an eight-character code and a list of words,
``Aa01A01= 人 士 人物 人士 人氏 人选``.  The code's eighth character says what the set is:
``=`` synonyms, ``#`` related words (same class, not synonyms), ``@`` a word with no synonym.
Only ``=`` sets are synonym groups; the others are kept for callers who want them.
The shared copy (``data_path("cilin", "cilin_ext.txt")``) is GBK encoded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from topicrawl.data import data_path
from topicrawl.errors import ResourceMissingError

KINDS = {"=": "synonyms", "#": "related", "@": "single"}


@dataclass(frozen=True)
class CilinGroup:
    """One line of Cilin: ``code`` without its marker (``Aa01A01``), ``kind`` (``=``, ``#``, ``@``)
    and the words in file order."""

    code: str
    kind: str
    words: tuple[str, ...]


def parse_cilin(lines: Iterator[str] | list[str], *, source: str = "<cilin>") -> list[CilinGroup]:
    """Parse Cilin lines; blank lines are skipped, a malformed line raises ResourceMissingError
    naming the file and line (a truncated or wrongly decoded file is not a usable dictionary)."""
    groups: list[CilinGroup] = []
    for number, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        head = parts[0]
        if len(head) != 8 or head[7] not in KINDS or len(parts) < 2:
            raise ResourceMissingError(
                f"{source}:{number}: not a Cilin line ({line[:40]!r}); expected 'Aa01A01= word ...' "
                "(is the file GBK encoded and complete?)"
            )
        groups.append(CilinGroup(code=head[:7], kind=head[7], words=tuple(parts[1:])))
    return groups


def load_cilin(path: str | Path | None = None, *, encoding: str = "gbk") -> list[CilinGroup]:
    """Load every Cilin group from ``path`` (default: the shared ``cilin/cilin_ext.txt``)."""
    path = Path(path) if path is not None else data_path("cilin", "cilin_ext.txt")
    try:
        text = path.read_bytes().decode(encoding)
    except FileNotFoundError as exc:
        raise ResourceMissingError(f"{path} not found: install the Tongyici Cilin file") from exc
    except UnicodeDecodeError as exc:
        raise ResourceMissingError(f"{path} is not {encoding}-encoded Cilin: {exc}") from exc
    return parse_cilin(text.splitlines(), source=str(path))


def synonym_groups(groups: list[CilinGroup]) -> dict[str, tuple[str, ...]]:
    """The ``=`` groups only, as ``{code: words}`` in file order."""
    return {g.code: g.words for g in groups if g.kind == "="}
