"""Custom checkers shipped in a bundle's ``checkers/`` folder, and how they are loaded.

A checker file is ordinary Python that registers checkers with eval752's registry, e.g.::

    from eval752.checkers.base import CHECKERS, Checker
    from eval752.types import Verdict

    @CHECKERS.register("shouting")
    class Shouting(Checker):
        def check(self, item, response):
            ok = response.text.isupper()
            return Verdict(score=float(ok), passed=ok, reason="all caps" if ok else "not all caps")

Items or ``checker.by_type`` then name it like a built-in one. Because this is code from whoever made the
bundle, eval752 never runs it on its own: ``eval752-bundle import`` copies ``checkers/`` into the target only
with ``--trust-checkers``, ``inspect`` and ``verify`` never execute it, and ``load_checkers`` below refuses
unless the caller passes ``trust=True``. Files are executed in name order, each as its own module.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ..errors import ConfigError


def load_checkers(folder: Path, *, trust: bool = False) -> list[str]:
    """Execute every ``*.py`` in ``folder`` (sorted); return the module names. Needs ``trust=True``."""
    if not trust:
        raise ConfigError(f"refusing to run checker code from {folder}: pass trust=True (--trust-checkers)")
    import eval752.checkers  # noqa: F401  (built-ins first, so a bundle cannot take their names)

    loaded = []
    for path in sorted(Path(folder).glob("*.py")):
        name = f"eval752_bundle_checker_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"cannot load checker file {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        loaded.append(name)
    return loaded
