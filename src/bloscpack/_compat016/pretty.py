"""bloscpack 0.16's ``bloscpack.pretty``: human-readable sizes."""

from ..containers.bloscpack.args import double_pretty_size, pretty_size, reverse_pretty


def join_with_eol(items: list[str]) -> str:
    """``'a, b\\n'`` from ``['a', 'b']``."""
    return ", ".join(items) + "\n"


__all__ = ["double_pretty_size", "join_with_eol", "pretty_size", "reverse_pretty"]
