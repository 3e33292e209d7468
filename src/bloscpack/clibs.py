"""Where the C libraries are, and their versions, found without importing numpy or the Python
packages that carry them (``blpk --version`` starts in a few tens of milliseconds).

:mod:`bloscpack.engine` calls the libraries; this module only locates them.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import sys
from types import ModuleType

from .errors import UnsupportedError


def _package_dir(package: str) -> str | None:
    """The directory of the installed ``package``, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def package_version(package: str) -> str:
    """The version of the installed ``package``, from the ``METADATA`` of the ``.dist-info``
    beside it (``importlib.metadata``, which imports the email parser and zipfile, for other
    kinds of installs)."""
    root = _package_dir(package)
    if root is not None:
        pattern = os.path.join(os.path.dirname(root), f"{package}-*.dist-info", "METADATA")
        for metadata in glob.glob(pattern):
            with open(metadata, encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
                    if not line.strip():  # the end of the headers
                        break
    import importlib.metadata

    return importlib.metadata.version(package)


def libblosc2_path() -> str:
    """The ``libblosc2`` shipped inside the ``blosc2`` wheel."""
    root = _package_dir("blosc2")
    if root is None:
        raise UnsupportedError("the blosc2 package is not installed: pip install blosc2")
    libdir = os.path.join(root, "lib")
    candidates = sorted(glob.glob(os.path.join(libdir, "libblosc2.so*")))
    candidates += sorted(glob.glob(os.path.join(libdir, "libblosc2*.dylib")))
    candidates += sorted(glob.glob(os.path.join(libdir, "*blosc2*.dll")))
    if not candidates:
        raise UnsupportedError(f"libblosc2 not found in {libdir}: reinstall the blosc2 package")
    return candidates[0]


def c_blosc2_version() -> str:
    """The version of that C-Blosc2 library."""
    lib = ctypes.CDLL(libblosc2_path())
    lib.blosc2_get_version_string.restype = ctypes.c_char_p
    return str(lib.blosc2_get_version_string().decode())


def blosc_extension() -> ModuleType:
    """python-blosc's C extension (C-Blosc 1.x), loaded on its own: the ``blosc`` package
    imports numpy and its test runner."""
    name = "blosc.blosc_extension"
    if name in sys.modules:
        return sys.modules[name]
    root = _package_dir("blosc")
    found = glob.glob(os.path.join(root, "blosc_extension*")) if root else []
    spec = importlib.util.spec_from_file_location(name, found[0]) if found else None
    if spec is None or spec.loader is None:
        raise UnsupportedError("python-blosc is not installed: pip install blosc")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def c_blosc_version() -> str:
    """The version of C-Blosc 1.x inside python-blosc."""
    return str(blosc_extension().BLOSC_VERSION_STRING)


__all__ = [
    "blosc_extension",
    "c_blosc2_version",
    "c_blosc_version",
    "libblosc2_path",
    "package_version",
]
