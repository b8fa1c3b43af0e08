"""Optional parts of a test web (family a): sitemaps, feeds and documents (PDF, DOCX).

Off by default, so that the default web stays byte for byte what the benchmarks measured.

* **Discovery** (``build_web(discovery=True)``): every site gets a sitemap index
  ``/sitemap.xml`` pointing at one ``urlset`` per section (``/sitemaps/<section>.xml``; the
  first portal serves them gzipped, ``.xml.gz``), listing every article and document with
  its ``lastmod``; portals name it in robots.txt (``Sitemap:``), single-topic sites do not
  (a crawler has to try ``/sitemap.xml``). Portals publish an RSS 2.0 feed ``/rss.xml``,
  single-topic sites an Atom feed ``/atom.xml`` (the latest :data:`FEED_ITEMS` entries), both
  announced on the home page by ``<link rel="alternate">``.
* **Orphans** (``orphans=SHARE``): that share of the article pages is linked from no page of
  the web (lists, home pages, related and hot boxes, calendars): only the sitemaps and feeds
  lead to them, so a crawl from the home pages alone misses them.
* **Documents** (``documents=True``): the PDF attachments carry the article's real text
  (Chinese, reportlab's built-in CID font STSong-Light), a copy of the HTML article (same
  duplicate group); and every site publishes a few more articles only as PDF or Word (.docx)
  files, listed on ``/files/``. Ground truth kind ``document`` with ``format`` pdf/docx.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable
from datetime import UTC, date, datetime, time
from email.utils import format_datetime
from html import escape

from sitegen.articles import Article

#: entries of a site's feed (the newest articles)
FEED_ITEMS = 20
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
PDF_TYPE = "application/pdf"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#: a fixed time stamp inside generated files (the build is deterministic)
STAMP = datetime(2019, 12, 31, 8, 0, tzinfo=UTC)


def sitemap_index(locs: Iterable[str]) -> bytes:
    """A sitemap index (sitemaps.org protocol) of the sitemaps at ``locs``."""
    body = "".join(f"<sitemap><loc>{escape(u)}</loc></sitemap>\n" for u in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{SITEMAP_NS}">\n'
        f"{body}</sitemapindex>\n"
    ).encode()


def sitemap_urlset(entries: Iterable[tuple[str, date]]) -> bytes:
    """A ``urlset`` sitemap of ``(url, lastmod)`` entries."""
    body = "".join(
        f"<url><loc>{escape(u)}</loc><lastmod>{d.isoformat()}</lastmod></url>\n"
        for u, d in entries
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n{body}</urlset>\n'
    ).encode()


def gzipped(data: bytes) -> bytes:
    """``data`` gzipped with a fixed header time (deterministic)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as fh:
        fh.write(data)
    return buf.getvalue()


def _when(d: date) -> datetime:
    return datetime.combine(d, time(8, 0), tzinfo=UTC)


def rss_feed(title: str, home: str, items: Iterable[tuple[str, str, date, str]]) -> bytes:
    """An RSS 2.0 feed of ``(url, title, published, summary)`` items."""
    body = "".join(
        f"<item><title>{escape(t)}</title><link>{escape(u)}</link>"
        f"<guid>{escape(u)}</guid><pubDate>{format_datetime(_when(d))}</pubDate>"
        f"<description>{escape(s)}</description></item>\n"
        for u, t, d, s in items
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
        f"<title>{escape(title)}</title><link>{escape(home)}</link>"
        f"<description>{escape(title)}</description>\n{body}</channel></rss>\n"
    ).encode()


def atom_feed(title: str, home: str, items: Iterable[tuple[str, str, date, str]]) -> bytes:
    """An Atom 1.0 feed of ``(url, title, published, summary)`` items."""
    body = "".join(
        f'<entry><title>{escape(t)}</title><link href="{escape(u)}"/><id>{escape(u)}</id>'
        f"<updated>{_when(d).isoformat()}</updated><summary>{escape(s)}</summary></entry>\n"
        for u, t, d, s in items
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        f'<title>{escape(title)}</title><link href="{escape(home)}"/><id>{escape(home)}</id>'
        f"<updated>{STAMP.isoformat()}</updated>\n{body}</feed>\n"
    ).encode()


def feed_links(html: str, feeds: list[tuple[str, str, str]]) -> str:
    """``html`` with ``<link rel="alternate">`` tags for ``(url, type, title)`` in its head."""
    tags = "".join(
        f'<link rel="alternate" type="{t}" title="{escape(n)}" href="{escape(u)}">'
        for u, t, n in feeds
    )
    return html.replace("</head>", tags + "</head>", 1)


_FONT = "STSong-Light"


def pdf_bytes(article: Article, *, title: str | None = None) -> bytes:
    """The article as a PDF with real (extractable) Chinese text: reportlab's built-in CID
    font STSong-Light (no font file needed), wrapped to the page width, deterministic."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    if _FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(_FONT))
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4, invariant=1)
    pdf.setTitle(title or article.title)
    width, height = A4
    margin, size, leading = 56, 11, 17
    y = height - margin
    pdf.setFont(_FONT, 16)
    pdf.drawString(margin, y, title or article.title)
    y -= 30
    pdf.setFont(_FONT, size)
    per_line = int((width - 2 * margin) // size)
    for para in article.paragraphs:
        para = "　　" + para.strip()
        for k in range(0, len(para), per_line):
            if y < margin:
                pdf.showPage()
                pdf.setFont(_FONT, size)
                y = height - margin
            pdf.drawString(margin, y, para[k : k + per_line])
            y -= leading
        y -= 4
    pdf.showPage()
    pdf.save()
    return buf.getvalue()


def docx_bytes(article: Article) -> bytes:
    """The article as a Word (.docx) file written by python-docx, with fixed document
    properties and zip time stamps (deterministic)."""
    import zipfile

    import docx

    document = docx.Document()
    props = document.core_properties
    props.title, props.author = article.title, "sitegen"
    props.created = props.modified = STAMP.replace(tzinfo=None)
    props.last_modified_by, props.revision = "sitegen", 1
    document.add_heading(article.title, level=1)
    for para in article.paragraphs:
        document.add_paragraph(para.strip())
    raw = io.BytesIO()
    document.save(raw)
    # python-docx stamps the zip entries with the current time: rewrite them with a fixed one
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as src, zipfile.ZipFile(
        out, "w", zipfile.ZIP_DEFLATED
    ) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2019, 12, 31, 8, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()
