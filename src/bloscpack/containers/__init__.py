"""Container formats: one package (or module) per format, each exporting ``FORMAT``, an
instance of :class:`~bloscpack.containers.base.ContainerFormat`."""
