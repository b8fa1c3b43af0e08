"""An on-disk cache of what a topic trains at start-up, keyed by content hashes.

Building a topic's scorer trains its ``[classifier]`` (TF-IDF + logistic regression over
10,000 headlines: seconds, most of it scikit-learn's import and fit) and segments its example
and background texts for the self-trained page model. None of it changes while the topic
file, the data files it reads and the code that turns them into a model stay the same, so the
result is kept on disk under a key made of:

- the part of the topic that the model depends on (given by the caller, as JSON),
- the SHA-256 of every data file read (example file, class names, background text),
- the SHA-256 of the source files of the code that builds the model (a changed
  implementation never reads an entry written by an old one).

A changed topic or data file gives another key: the model is trained once more and written
under the new key. Entries are JSON written by this process (``tmp`` file + atomic rename),
read with ``json.loads``: nothing is unpickled, so a file dropped into the cache directory
cannot run code. A missing, partial or malformed entry is rebuilt (and counted in
:data:`STATS`), never trusted.

The directory: :func:`set_cache_dir` (the crawl's ``TOPICRAWL_CACHE_DIR`` setting), else
``$TOPICRAWL_CACHE``, else ``$XDG_CACHE_HOME/topicrawl``, else ``~/.cache/topicrawl``.
``TOPICRAWL_NO_CACHE=1`` turns the cache off (every start trains again).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from topicrawl.files import write_atomic

#: bumped when the layout of the entries changes
FORMAT = 1
_override: Path | None = None
_digests: dict[tuple[str, int, int], str] = {}
#: hits, misses (built and written) and rejected entries of this process
STATS = {"hit": 0, "miss": 0, "bad": 0}


def set_cache_dir(path: str | Path | None) -> None:
    """Use ``path`` as the cache directory for this process (None: back to the default)."""
    global _override
    _override = Path(path).expanduser() if path else None


def cache_dir() -> Path:
    """The cache directory (see the module docstring for the order of precedence)."""
    if _override is not None:
        return _override
    env = os.environ.get("TOPICRAWL_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "topicrawl"


def enabled() -> bool:
    return not os.environ.get("TOPICRAWL_NO_CACHE")


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's content (memoised per path, size and mtime in this process)."""
    p = Path(path)
    st = p.stat()
    memo = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    found = _digests.get(memo)
    if found is None:
        h = hashlib.sha256()
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        found = _digests[memo] = h.hexdigest()
    return found


def code_digest(modules: Iterable[str]) -> str:
    """SHA-256 over the source files of the named modules (``relevance.classifier`` …)."""
    import importlib.util

    h = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        h.update(name.encode())
        if origin and os.path.exists(origin):
            h.update(file_digest(origin).encode())
    return h.hexdigest()


def cache_key(kind: str, parts: Any, *, files: Iterable[str | Path] = (),
              code: Iterable[str] = ()) -> str:  # fmt: skip
    """The key of an entry: ``kind``, the JSON of ``parts``, the files' and code's digests."""
    payload = {
        "kind": kind,
        "format": FORMAT,
        "parts": parts,
        "files": [file_digest(f) for f in files],
        "code": code_digest(code),
    }
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def entry_path(kind: str, key: str) -> Path:
    return cache_dir() / f"{kind}-{key}.json"


def load(kind: str, key: str) -> dict[str, Any] | None:
    """The entry ``kind``/``key`` or None (absent, unreadable, or not ours)."""
    if not enabled():
        return None
    path = entry_path(kind, key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        STATS["bad"] += 1
        return None
    if not isinstance(data, dict) or data.get("kind") != kind or data.get("key") != key:
        STATS["bad"] += 1
        return None
    value = data.get("value")
    if not isinstance(value, dict):
        STATS["bad"] += 1
        return None
    STATS["hit"] += 1
    return value


def store(kind: str, key: str, value: dict[str, Any]) -> Path | None:
    """Write an entry atomically; None when the directory is not writable (logged by the
    caller's counters, the crawl goes on with the model it built)."""
    if not enabled():
        return None
    path = entry_path(kind, key)
    try:  # a full disk, or SIGTERM at start-up: no partial file left (write_atomic)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"kind": kind, "key": key, "value": value},
                                      ensure_ascii=False))  # fmt: skip
    except OSError:
        return None
    return path


def cached(kind: str, key: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The entry ``kind``/``key``, built by ``build()`` and stored when absent."""
    found = load(kind, key)
    if found is not None:
        return found
    STATS["miss"] += 1
    value = build()
    store(kind, key, value)
    return value
