"""The names of the files of a bcolz directory (what recognising one needs, without the rest
of :mod:`.layout`)."""

from __future__ import annotations

import os

ATTRS_FILE = "__attrs__"
ROOTDIRS_FILE = "__rootdirs__"
DATA_DIR = "data"
META_DIR = "meta"
SIZES_FILE = os.path.join(META_DIR, "sizes")
STORAGE_FILE = os.path.join(META_DIR, "storage")
#: The files that make a directory readable, in the order they are written last where the files
#: appear one by one (uploads to a URL): a carray's (and a ctable column's) metadata, then the
#: ctable's list of columns.  Chunk files and ``__attrs__`` come before them.
PUBLISHED_LAST = (SIZES_FILE, STORAGE_FILE, ROOTDIRS_FILE)
#: The members that tell a bcolz directory, and are read first when it is opened.
META_MEMBERS = (ROOTDIRS_FILE, STORAGE_FILE, SIZES_FILE, ATTRS_FILE)
