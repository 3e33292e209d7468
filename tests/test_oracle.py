"""The bloscpack 0.16 oracle used by the interoperability tests works."""


def test_bloscpack016_runs(bloscpack016):
    proc = bloscpack016.run("print(bloscpack.pack_bytes_to_bytes(b'abc')[:4])")
    assert proc.stdout.strip() == "b'blpk'"
