"""Bridges to other libraries, each an optional extra, written once on the container protocol:
:mod:`.dask` (``bloscpack[dask]``), :mod:`.pandas` (``bloscpack[pandas]``)."""
