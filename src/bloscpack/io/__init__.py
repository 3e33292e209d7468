"""Files: paths, locks, copies, byte sources, staged outputs and durability, one module each."""
