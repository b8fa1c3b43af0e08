"""A data-only serializer for the scrapy-redis frontier (``SCHEDULER_SERIALIZER``).

scrapy-redis stores each request as ``serializer.dumps(request.to_dict())`` and reads it
back with ``request_from_dict(serializer.loads(data))``; its default serializer is pickle,
so anyone who can write to the shared Redis runs code in every worker. This module is JSON
with two tags, so a request dict round-trips exactly and nothing in Redis is ever executed:

- ``{"$b": "<base64>"}`` for bytes (request bodies, header names and values);
- ``{"$d": [[key, value], ...]}`` for a dict whose keys are not all strings (Scrapy's
  headers dict has bytes keys) or that uses a tag name as a key.

Anything else (a callable, an arbitrary object in ``meta``) cannot be stored: ``dumps``
raises :class:`TypeError`. ``loads`` accepts only this format and raises ``ValueError`` on
anything else (a pickle, truncated JSON, a JSON value that is not an object).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

_TAGS = ("$b", "$d")


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray):
        return {"$b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not any(t in value for t in _TAGS):
            return {k: _encode(v) for k, v in value.items()}
        return {"$d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise TypeError(f"{type(value).__name__} cannot be stored in the frontier (data only)")


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and "$b" in value:
            try:
                return base64.b64decode(value["$b"], validate=True)
            except (binascii.Error, TypeError) as exc:
                raise ValueError(f"bad base64 in a frontier entry: {exc}") from exc
        if len(value) == 1 and "$d" in value:
            pairs = value["$d"]
            if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in pairs
            ):
                raise ValueError("bad key/value list in a frontier entry")
            return {_hashable(_decode(k)): _decode(v) for k, v in pairs}
        return {k: _decode(v) for k, v in value.items()}
    return value


def dumps(obj: dict[str, Any]) -> bytes:
    """A request dict (``Request.to_dict()``) as UTF-8 JSON bytes."""
    return json.dumps(_encode(obj), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")  # fmt: skip


def loads(data: bytes | str) -> dict[str, Any]:
    """The request dict of :func:`dumps`'s output; ValueError for anything else."""
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a JSON frontier entry: {exc}") from exc
    if not isinstance(obj, dict):
        raise ValueError(f"a frontier entry must be a JSON object, not {type(obj).__name__}")
    return _decode(obj)
