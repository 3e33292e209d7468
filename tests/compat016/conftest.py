"""The unmodified 0.16 files in ``upstream/`` are not collected: their adapted copies here are.
(A conftest of this package, so that its module name does not shadow ``tests/conftest.py``.)"""

collect_ignore = ["upstream"]
