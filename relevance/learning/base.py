"""The interface of a model the crawl learns: observe outcomes, predict, save as JSON.

A learned model's state is plain JSON (numbers, strings, lists, dicts): it is stored with the
run and written into topic files, never pickled, so a state read from a database or a file
cannot run code.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from topicrawl.errors import ResourceMissingError
from topicrawl.files import write_atomic


def sigmoid(z: float) -> float:
    """The logistic function, overflow-safe."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def reservoir_put(items: list[Any], item: Any, seen: int, size: int, rng: Any) -> bool:
    """Vitter's algorithm R: ``item``, the ``seen``-th of a stream, into the uniform sample
    ``items`` of at most ``size`` (appended while not full, else in a random slot or not
    kept); returns whether it was kept."""
    if len(items) < size:
        items.append(item)
        return True
    j = rng.randrange(seen)
    if j < size:
        items[j] = item
        return True
    return False


def retrain_due(since: int, seen: int, every: int) -> bool:
    """The learned models' geometric schedule: ``since`` pages after the last training, once
    they are at least ``every`` and a quarter of the ``seen`` pages."""
    return since >= max(every, seen // 4)


def logit(p: float, eps: float = 1e-4) -> float:
    p = min(1.0 - eps, max(eps, p))
    return math.log(p / (1.0 - p))


class LearnedModel(ABC):
    """A model learned during a crawl. Subclasses name themselves with ``kind`` and
    round-trip through :meth:`to_state` / :meth:`from_state`."""

    kind: ClassVar[str] = ""

    @abstractmethod
    def to_state(self) -> dict[str, Any]:
        """The model as a JSON-able dict (includes ``kind``)."""

    @classmethod
    @abstractmethod
    def from_state(cls, state: dict[str, Any]) -> LearnedModel:
        """Rebuild from :meth:`to_state` output; raises ValueError on a malformed state."""

    def save(self, path: str | Path) -> None:
        """Write the model's state as JSON (atomically)."""
        write_atomic(path, json.dumps(self.to_state(), ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> LearnedModel:
        try:
            state = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ResourceMissingError(f"learned model {path}: {exc}") from None
        if not isinstance(state, dict) or state.get("kind") != cls.kind:
            raise ResourceMissingError(f"learned model {path}: not a {cls.kind!r} model")
        try:
            return cls.from_state(state)
        except (KeyError, TypeError, ValueError) as exc:
            raise ResourceMissingError(f"learned model {path}: malformed ({exc})") from None
