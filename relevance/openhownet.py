"""OpenHowNet word similarity (``HowNetDict(init_sim=True).calculate_word_similarity``).

OpenHowNet (thunlp) implements the hybrid hierarchical method of Liu, Xu & Zhang (IJCNLP) on
its own sememe trees. Its resources (``resources/`` with ``sememe_all``,
``sememe_triples_taxonomy.txt``, ``HowNet_dict_complete``, ``sememe_sim_table``,
``sense_tree``, ``synonym``) must already be on the machine: topicrawl never calls
``OpenHowNet.download()``. By default they are looked up where OpenHowNet keeps them
(``~/.openhownet``); ``[similarity] openhownet = "DIR"`` names another directory.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from topicrawl.errors import ResourceMissingError

RESOURCE_FILES = (
    "sememe_all",
    "sememe_triples_taxonomy.txt",
    "HowNet_dict_complete",
    "sememe_sim_table",
    "sense_tree",
    "synonym",
)


def resource_root(directory: str | Path | None = None) -> Path:
    """The directory that holds ``resources/`` (``directory`` may also be resources itself)."""
    if directory is None or str(directory) == "":
        from OpenHowNet import Download

        return Path(Download.OPENHOWNET_RESOURCE_PATH)
    d = Path(directory).expanduser()
    if d.name == "resources" and not (d / "resources").exists():
        return d.parent
    return d


class OpenHowNetSimilarity:
    """Similarity source over an installed OpenHowNet; scores in [0, 1]."""

    name = "openhownet"

    def __init__(self, hownet_dict):
        self.dict = hownet_dict
        self._cache: dict[tuple[str, str], float] = {}

    @classmethod
    def from_resources(cls, directory: str | Path | None = None) -> OpenHowNetSimilarity:
        """Load OpenHowNet from ``directory``; ResourceMissingError names any missing file."""
        from OpenHowNet import Download, HowNetDict

        root = resource_root(directory)
        missing = [f for f in RESOURCE_FILES if not (root / "resources" / f).exists()]
        if missing:
            raise ResourceMissingError(
                f"OpenHowNet resources missing under {root / 'resources'}: {', '.join(missing)}. "
                "Install them (OpenHowNet.download() on a machine with internet access, then copy "
                "~/.openhownet) or use the 'hownet' source (glossary.dat + WHOLE.DAT)."
            )
        old = Download.OPENHOWNET_RESOURCE_PATH
        Download.OPENHOWNET_RESOURCE_PATH = str(root)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # OpenHowNet prints progress
                hd = HowNetDict(init_sim=True)
        finally:
            Download.OPENHOWNET_RESOURCE_PATH = old
        if not hasattr(hd, "sense_dic") or getattr(hd, "sense_tree_dic", None) is None:
            raise ResourceMissingError(f"OpenHowNet could not load its resources from {root}")
        return cls(hd)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and (word in self.dict.zh_map or word in self.dict.en_map)

    def similarity(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        key = (a, b) if a <= b else (b, a)
        s = self._cache.get(key)
        if s is None:
            if a not in self or b not in self:
                s = 0.0
            else:
                with contextlib.redirect_stdout(io.StringIO()):
                    s = float(self.dict.calculate_word_similarity(a, b))
                s = min(1.0, max(0.0, s))
            self._cache[key] = s
        return s

    def matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(words_a), len(words_b)), dtype=np.float32)
        for i, a in enumerate(words_a):
            for j, b in enumerate(words_b):
                out[i, j] = self.similarity(a, b)
        return out

    def most_similar(self, word: str, topn: int = 10) -> list[tuple[str, float]]:
        if word not in self:
            return []
        with contextlib.redirect_stdout(io.StringIO()):
            res = self.dict.get_nearest_words(word, language="zh", score=True, merge=True, K=topn)
        return [(w, float(s)) for w, s in (res or []) if w != word][:topn]
