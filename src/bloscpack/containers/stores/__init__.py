"""The stores a :class:`~bloscpack.array.BloscArray` reads its items from, one per capability
of a reader: :mod:`.flat` (chunks that are runs of the array), :mod:`.grid` (an N-d chunk
grid) and :mod:`.table` (columns), on the protocol and helpers of :mod:`.base`."""
