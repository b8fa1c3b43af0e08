"""Text of non-HTML documents: PDF (pypdf) and Word .docx (python-docx).

The sibling of :mod:`topicrawl.extract` for documents: the same :class:`Extracted` record
(title, description, keywords, main text, date, language), so that a PDF is scored,
deduplicated and cleaned like an HTML page. Legacy Word ``.doc`` is not read: no maintained
Python library reads it.

Hostile input: the caller caps the body size (``TOPICRAWL_MAX_DOCUMENT_BYTES``); here the
pages read (``max_pages``) and the text kept (``max_chars``) are bounded too.
"""

from __future__ import annotations

import io
import re
from datetime import datetime

from topicrawl.extract import Extracted, detect_language

PDF = "pdf"
DOCX = "docx"
#: Content types of the documents read, by format
CONTENT_TYPES = {
    "application/pdf": PDF,
    "application/x-pdf": PDF,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": DOCX,
}
#: URL suffixes of the documents read (links to them are followed)
SUFFIXES = {".pdf": PDF, ".docx": DOCX}
#: a line that ends a paragraph: CJK or Latin sentence end, closing quote or bracket
_PARA_END = re.compile(r"[。！？；：!?;:」』”’）)】.]\s*$")
_CJK_EDGE = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
_SPACE = re.compile(r"[ \t\u00a0]+")
#: document-info values that PDF producers write when the author set none (ReportLab's
#: "anonymous" title and "unspecified" subject, "untitled", "unknown"): no metadata
PLACEHOLDERS = frozenset({"untitled", "unknown", "anonymous", "unspecified", "none", "n/a"})


def _info(value: object) -> str:
    """A document-info string, whitespace collapsed; empty for a producer's placeholder."""
    text = _SPACE.sub(" ", str(value or "")).strip()
    return "" if text.strip("()").lower() in PLACEHOLDERS else text


def document_format(content_type: str | None, url: str = "") -> str | None:
    """``"pdf"`` or ``"docx"`` for a document response (by Content-Type, else by the URL's
    suffix when the type says nothing: ``application/octet-stream`` or none), else None."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype in CONTENT_TYPES:
        return CONTENT_TYPES[ctype]
    if ctype in ("", "application/octet-stream", "binary/octet-stream"):
        path = url.split("?", 1)[0].split("#", 1)[0].lower()
        for suffix, fmt in SUFFIXES.items():
            if path.endswith(suffix):
                return fmt
    return None


def reflow(lines: list[str]) -> str:
    """Join the lines a PDF broke at the page width back into paragraphs: a line that does
    not end a sentence continues on the next (no space between CJK characters)."""
    paras: list[str] = []
    current = ""
    for raw in lines:
        line = _SPACE.sub(" ", raw).strip()
        if not line:
            if current:
                paras.append(current)
                current = ""
            continue
        if current:
            glue = "" if _CJK_EDGE.match(current[-1]) or _CJK_EDGE.match(line[0]) else " "
            current += glue + line
        else:
            current = line
        if _PARA_END.search(line):
            paras.append(current)
            current = ""
    if current:
        paras.append(current)
    return "\n".join(paras)


def _pdf_date(value: object) -> str | None:
    """``D:YYYYMMDD...`` (PDF date) -> ``YYYY-MM-DD``."""
    m = re.match(r"D:(\d{4})(\d{2})(\d{2})", str(value or ""))
    if not m:
        return None
    try:
        return datetime(int(m[1]), int(m[2]), int(m[3])).date().isoformat()
    except ValueError:
        return None


def extract_pdf(body: bytes, *, max_pages: int = 200, max_chars: int = 500_000) -> Extracted:
    """Title (the document info's ``/Title``, else the first line), subject, keywords, text
    (pypdf's text layer of the first ``max_pages`` pages, lines reflowed into paragraphs) and
    the creation date. A scanned PDF without a text layer gives empty text."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(body))
    lines: list[str] = []
    size = 0
    for number, page in enumerate(reader.pages):
        if number >= max_pages or size >= max_chars:
            break
        chunk = page.extract_text() or ""
        size += len(chunk)
        lines += chunk.splitlines() + [""]
    text = reflow(lines)[:max_chars]
    info = reader.metadata or {}
    title = _info(info.get("/Title"))
    first = text.split("\n", 1)[0]
    if not title:
        title = first[:200]
    if first.strip() == title:  # the title drawn as the first line is not body text
        text = text.split("\n", 1)[1] if "\n" in text else ""
    # a placeholder subject ("unspecified") would be scored as the page's description
    description = _info(info.get("/Subject"))
    keywords = _info(info.get("/Keywords"))
    published = _pdf_date(info.get("/CreationDate"))
    return Extracted(title, description, keywords, text, published, detect_language(text or title))


def extract_docx(body: bytes, *, max_chars: int = 500_000) -> Extracted:
    """Title (core properties, else the first heading), subject, keywords, the paragraphs'
    text (headings left out of the body) and the creation date of a Word .docx file."""
    import docx

    document = docx.Document(io.BytesIO(body))
    props = document.core_properties
    title = _info(props.title)
    paras: list[str] = []
    size = 0
    for para in document.paragraphs:
        line = para.text.strip()
        if not line:
            continue
        if para.style is not None and para.style.name.lower().startswith(("heading", "title")):
            title = title or line
            if line == title:
                continue
        paras.append(line)
        size += len(line)
        if size >= max_chars:
            break
    text = "\n".join(paras)[:max_chars]
    if not title and paras:
        title = paras[0][:200]
    published = props.created.date().isoformat() if props.created else None
    return Extracted(
        title,
        _info(props.subject),
        _info(props.keywords),
        text,
        published,
        detect_language(text or title),
    )


def extract_document(
    body: bytes, fmt: str, *, max_pages: int = 200, max_chars: int = 500_000
) -> Extracted:
    """Extract a document of format ``fmt`` (:data:`PDF` or :data:`DOCX`)."""
    if fmt == PDF:
        return extract_pdf(body, max_pages=max_pages, max_chars=max_chars)
    if fmt == DOCX:
        return extract_docx(body, max_chars=max_chars)
    raise ValueError(f"unknown document format {fmt!r}")
