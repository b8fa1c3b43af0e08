"""Another checkout's module beside this tree's: the side-by-side benchmarks load the code
they compare with (``--base``, e.g. a detached worktree of main) or a benchmark script under
a name of its own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(name: str, path: Path) -> ModuleType:
    """The module at ``path`` imported as ``name`` and registered in ``sys.modules`` (its
    dataclasses and the imports of later loads resolve to it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
