"""WARC capture: a rotating set of WARC/1.1 files (one gzip member per record) and reading
a response back by its file and offset.

Writing and reading go through warcio (webrecorder/warcio). A file set belongs to one
process: its files are named ``PREFIX-TIMESTAMP-SERIAL-HOST-PID-WORKER.warc.gz`` (after the
IIPC naming convention ``prefix-timestamp-serial-crawlhost``), so the workers of a
scale-out crawl that share a directory never write to the same file.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from topicrawl.errors import ConfigError, ResourceMissingError

#: Default size after which a WARC file is closed and the next one opened (1 GB, as the
#: Heritrix and wget defaults).
DEFAULT_MAX_SIZE = 1_000_000_000
#: Hop-by-hop header Scrapy's downloader already undid (the body is de-chunked): kept under
#: another name so that a WARC reader does not de-chunk it again.
_HOP_HEADERS = {"transfer-encoding"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class WarcRef:
    """Where a response record lies: file name (in the capture directory), the offset of
    its gzip member and the member's length in bytes."""

    file: str
    offset: int
    length: int


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "x"


class WarcFileSet:
    """Appends request/response record pairs to rotating ``.warc.gz`` files in ``directory``.

    Thread-safe (one lock): :meth:`write_exchange` may be called from a thread pool.
    ``max_size`` bytes: the current file is closed once it reaches it (a record is never
    split, so a file may pass the size by one record).
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        prefix: str = "topicrawl",
        worker: str = "0",
        software: str = "topicrawl",
        info: dict[str, str] | None = None,
    ):
        if max_size <= 0:
            raise ConfigError(f"TOPICRAWL_WARC_MAX_SIZE={max_size} must be a positive size")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_size = max_size
        self.prefix = _safe(prefix)
        self.worker = _safe(str(worker))
        self.software = software
        self.info = dict(info or {})
        self.host = _safe(socket.gethostname())
        self.pid = os.getpid()
        self.serial = 0
        self.files: list[str] = []
        self.records = 0
        self._fh: Any = None
        self._writer: WARCWriter | None = None
        self._name = ""
        self._lock = threading.Lock()

    # -- files -----------------------------------------------------------------------------
    def _open(self) -> None:
        self.serial += 1
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        self._name = (
            f"{self.prefix}-{stamp}-{self.serial:05d}-{self.host}-{self.pid}-{self.worker}.warc.gz"
        )
        self._fh = (self.directory / self._name).open("xb")
        self._writer = WARCWriter(self._fh, gzip=True, warc_version="1.1")
        self.files.append(self._name)
        fields = {"software": self.software, "format": "WARC File Format 1.1",
                  "hostname": socket.gethostname(), "pid": str(self.pid),
                  "worker": str(self.worker), **self.info}  # fmt: skip
        self._writer.write_record(self._writer.create_warcinfo_record(self._name, fields))

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = self._writer = None

    # -- records ---------------------------------------------------------------------------
    def write_exchange(
        self,
        url: str,
        *,
        method: str,
        request_headers: list[tuple[str, str]],
        status: int,
        reason: str,
        protocol: str,
        response_headers: list[tuple[str, str]],
        body: bytes,
        ip: str | None = None,
        truncated: str | None = None,
        date: datetime | None = None,
    ) -> WarcRef:
        """Write the request and the response record of one fetch; the response's place."""
        when = (date or datetime.now(UTC)).astimezone(UTC)
        warc_date = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        headers = []
        for name, value in response_headers:
            if name.lower() in _HOP_HEADERS:
                name = f"X-Topicrawl-Orig-{name}"
            headers.append((name, value))
        protocol = protocol if protocol.startswith("HTTP/") else "HTTP/1.1"
        with self._lock:
            if self._fh is None:
                self._open()
            assert self._writer is not None
            writer = self._writer
            response_http = StatusAndHeaders(f"{status} {reason}".strip(), headers, protocol)
            warc_headers = {"WARC-Date": warc_date}
            if ip:
                warc_headers["WARC-IP-Address"] = ip
            if truncated:
                warc_headers["WARC-Truncated"] = truncated
            response = writer.create_warc_record(
                url, "response", payload=BytesIO(body), http_headers=response_http,
                warc_headers_dict=warc_headers,
            )  # fmt: skip
            path = url.split("://", 1)[-1]
            target = "/" + path.split("/", 1)[1] if "/" in path else "/"
            request_http = StatusAndHeaders(
                f"{method} {target} {protocol}", request_headers, is_http_request=True
            )
            request = writer.create_warc_record(
                url, "request", payload=BytesIO(b""), http_headers=request_http,
                warc_headers_dict={"WARC-Date": warc_date,
                                   "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID")},
            )  # fmt: skip
            offset = self._fh.tell()
            writer.write_record(response)
            length = self._fh.tell() - offset
            writer.write_record(request)
            self._fh.flush()
            ref = WarcRef(self._name, offset, length)
            self.records += 2
            if self._fh.tell() >= self.max_size:
                self._fh.close()
                self._fh = self._writer = None
            return ref


# -- reading -----------------------------------------------------------------------------
@dataclass
class CapturedResponse:
    """A response read back from a WARC file: URL, status, headers, the decoded payload
    (Content-Encoding undone) and its place."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    ref: WarcRef
    date: str | None = None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def _captured(record: Any, ref: WarcRef) -> CapturedResponse:
    http = record.http_headers
    status = int(http.get_statuscode() or 0) if http is not None else 0
    headers = {k.lower(): v for k, v in (http.headers if http is not None else [])}
    body = record.content_stream().read()
    return CapturedResponse(
        url=record.rec_headers.get_header("WARC-Target-URI"),
        status=status,
        headers=headers,
        body=body,
        ref=ref,
        date=record.rec_headers.get_header("WARC-Date"),
    )


def read_response(directory: str | Path, ref: WarcRef) -> CapturedResponse:
    """The response record at ``ref`` (seek to the offset, read one gzip member)."""
    path = Path(directory) / ref.file
    if not path.is_file():
        raise ResourceMissingError(f"WARC file {path} not found: pass the capture directory")
    with path.open("rb") as fh:
        fh.seek(ref.offset)
        for record in ArchiveIterator(fh):
            if record.rec_type != "response":
                raise ResourceMissingError(
                    f"{path} at offset {ref.offset} holds a {record.rec_type} record, "
                    "not a response: the database and the capture disagree"
                )
            return _captured(record, ref)
    raise ResourceMissingError(f"{path}: no record at offset {ref.offset}")


def warc_files(directory: str | Path) -> list[Path]:
    """The WARC files of a capture directory, in name (= time, then serial) order."""
    root = Path(directory)
    if not root.is_dir():
        raise ResourceMissingError(f"{root} is not a directory of WARC files")
    return sorted(p for p in root.iterdir() if p.name.endswith((".warc.gz", ".warc")))


def iter_responses(directory: str | Path) -> Iterator[CapturedResponse]:
    """Every response record of every WARC file in ``directory`` (streamed, file order)."""
    for path in warc_files(directory):
        with path.open("rb") as fh:
            it = ArchiveIterator(fh)
            for record in it:
                if record.rec_type != "response":
                    continue
                offset = it.get_record_offset()
                captured = _captured(record, WarcRef(path.name, offset, 0))
                it.read_to_end()
                captured.ref = WarcRef(path.name, offset, it.get_record_length())
                yield captured


#: The crawl's default TOPICRAWL_MAX_HTML_BYTES: the most bytes of a page that are parsed.
DEFAULT_MAX_HTML_BYTES = 1_000_000


def captured_html(
    captured: CapturedResponse, max_bytes: int = DEFAULT_MAX_HTML_BYTES
) -> tuple[str, str]:
    """The page source of a captured response decoded as the crawl decodes it (the body cut
    at ``max_bytes``, the header's charset, :func:`topicrawl.extract.decode_html`), and the
    codec."""
    from w3lib.encoding import http_content_type_encoding

    from topicrawl.extract import decode_html

    body = captured.body
    if max_bytes and len(body) > max_bytes:
        body = body[:max_bytes]
    return decode_html(body, http_content_type_encoding(captured.content_type) or None)


def is_html(
    captured: CapturedResponse, types: tuple[str, ...] = ("text/html", "application/xhtml+xml")
) -> bool:
    """A complete HTML page: status 200 and an HTML (or no) Content-Type."""
    ctype = captured.content_type.split(";")[0].strip().lower()
    return captured.status == 200 and (not ctype or ctype.startswith(types))
