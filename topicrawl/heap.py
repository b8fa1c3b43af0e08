"""glibc's ``malloc_trim``: freed heap given back to the system. Shared by the crawl's
periodic trim (crawler/memory.py) and the extraction's one-off trim after building jusText's
stop-word trie (topicrawl/extract.py)."""

from __future__ import annotations

import ctypes
from typing import Any


def malloc_trim() -> Any:
    """glibc's ``malloc_trim`` function, or None when the C library has none."""
    try:
        fn = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn
