"""Another machine's CPU caches, for a test run that proves no test depends on this one's.

python-blosc2 (and this project, to match it) picks default chunk and block shapes from
``blosc2.cpu_info``'s cache sizes, so compressed sizes differ between machines. With this
directory on ``PYTHONPATH`` and ``BLOSCPACK_TEST_CPU_CACHES=L1,L2,L3`` (bytes) set, every Python
process of the run (pytest and the ``blpk`` subprocesses it starts) sees those cache sizes
instead of the detected ones, from the moment ``blosc2`` is imported (``tests/conftest.py``
fails a test that changes them back). ``.ci/run`` runs the suite a second time this way.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

VARIABLE = "BLOSCPACK_TEST_CPU_CACHES"
KEYS = ("l1_data_cache_size", "l2_cache_size", "l3_cache_size")


def simulated_caches() -> dict[str, int]:
    """The cache sizes ``BLOSCPACK_TEST_CPU_CACHES`` names (empty when it is not set)."""
    spec = os.environ.get(VARIABLE, "")
    if not spec:
        return {}
    sizes = [int(part) for part in spec.split(",")]
    if len(sizes) != len(KEYS):
        raise SystemExit(f"{VARIABLE}={spec!r}: expected three sizes in bytes, L1,L2,L3")
    return dict(zip(KEYS, sizes, strict=True))


class _PatchBlosc2(importlib.abc.MetaPathFinder):
    """Finds ``blosc2`` as usual, then overwrites its ``cpu_info`` cache sizes once loaded
    (each time it is loaded)."""

    def __init__(self, caches: dict[str, int]) -> None:
        self.caches = caches

    def find_spec(self, name, path, target=None):
        if name != "blosc2":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run_module, caches = spec.loader.exec_module, self.caches

        def exec_module(module):
            run_module(module)
            module.cpu_info.update(caches)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if caches := simulated_caches():
    sys.meta_path.insert(0, _PatchBlosc2(caches))
