"""Container formats: one module per format, each with ``sniff``, a reader and a writer."""
