"""A VirtualiZarr parser (the optional extra ``virtual``): ``virtualizarr.open_virtual_dataset(url,
parser=BloscpackParser(), registry=...)`` describes any container as virtual zarr arrays whose
chunks are byte ranges of its files, ready to be written as kerchunk references or to icechunk.

The parser converts :func:`~bloscpack.references.to_references` (zarr format 2) with
VirtualiZarr's kerchunk translator.  Blosc1 chunks are read by the ``numcodecs.blosc`` codec,
Blosc2 chunks by bloscpack's ``numcodecs.bloscpack_blosc2``, which the package's entry points
make known to zarr and numcodecs wherever bloscpack is installed.  VirtualiZarr's manifests
hold no chunk data (VirtualiZarr 2.5), only byte ranges: with ``codec="bloscpack"`` (the
default) a short last chunk is a byte range read through bloscpack's ``bloscpack_pad``
filter, and b2nd blocks are put in order by ``bloscpack_blocks``; the special chunks of a
frame that hold the array's fill value have no manifest entry (zarr reads the fill value, set
exactly from the chunks' item); a chunk that references still hold inline (a special chunk of
another value; a short last chunk with ``codec="stock"``) and a 0-d array are refused by name.
A python-blosc2 store's nested groups are the manifest's groups (``open_virtual_datatree``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import UnsupportedError
from .references import CODEC_IDS, build_references, own_codecs

#: The numcodecs id of bloscpack's Blosc2 codec (:class:`bloscpack.zarr_codecs.Blosc2`).
BLOSC2_ID = "bloscpack_blosc2"

#: How to install what the parser needs.
EXTRA = "pip install 'bloscpack[virtual]'"


class BloscpackParser:
    """A VirtualiZarr parser of every container: ``skip_variables`` are left out (a ctable's
    columns, by name), ``storage_options`` reach the container at a URL, ``codec`` is that of
    :func:`~bloscpack.references.to_references` (``"bloscpack"``: no short chunk inline)."""

    def __init__(self, skip_variables: Iterable[str] | None = None,
                 storage_options: Mapping[str, Any] | None = None,
                 codec: str = "bloscpack") -> None:  # fmt: skip
        self.skip_variables = list(skip_variables or ())
        self.storage_options = storage_options
        self.codec = codec

    def __call__(self, url: str, registry: Any) -> Any:
        """The ``ManifestStore`` of the container at ``url`` (``file:///...``, ``s3://...``;
        ``registry``: the ObjectStoreRegistry that reads its chunks)."""
        try:
            from virtualizarr.manifests import ManifestStore
            from virtualizarr.parsers.kerchunk.translator import manifestgroup_from_kerchunk_refs
            from virtualizarr.types.kerchunk import KerchunkStoreRefs
        except ImportError:
            raise UnsupportedError(f"{url}: the VirtualiZarr parser needs virtualizarr ({EXTRA})"
                                   ) from None  # fmt: skip
        own_codecs(url)  # (bloscpack_blosc2 reads Blosc2 chunks)
        refs = build_references(
            url,
            zarr_format=2,
            inline="leftover",
            codec=self.codec,
            storage_options=self.storage_options,
            any_fill=True,
        )
        converted, fills = _manifest_refs(refs["refs"], url)

        def translated(path: str) -> Any:
            """The ManifestGroup of the zarr group ``path`` (``""``: the root) and those
            under it (the translator reads one group's arrays)."""
            prefix = f"{path}/" if path else ""
            own = {key[len(prefix):]: value for key, value in converted.items()
                   if key.startswith(prefix) and key[len(prefix):].count("/") <= 1}  # fmt: skip
            group = manifestgroup_from_kerchunk_refs(
                KerchunkStoreRefs({"version": 1, "refs": own}),
                skip_variables=self.skip_variables,
            )
            children = {key[len(prefix):].split("/")[0] for key in converted
                        if key.startswith(prefix) and key.endswith("/.zgroup")
                        and key[len(prefix):].count("/") == 1}  # fmt: skip
            groups = {child: translated(prefix + child) for child in sorted(children)}
            return _filled(group, fills, prefix, groups)

        return ManifestStore(group=translated(""), registry=registry)


def _manifest_refs(refs: Mapping[str, Any], url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``refs`` as VirtualiZarr's translator reads them: the compressor as a filter before the
    others (it reads filters and codec lists), Blosc2 chunks read by bloscpack's own codec, no
    fill value (the translator reads only NaN's: :func:`_filled` sets them), no inlined chunk
    and no 0-d array (refused); and the fill values, by array path."""
    converted, fills = dict(refs), {}
    for key, value in refs.items():
        if key.endswith("/.zarray"):
            zarray = json.loads(value)
            if not zarray["shape"]:
                raise UnsupportedError(
                    f"{url}: array {key[: -len('/.zarray')]!r} is 0-d, whose one chunk"
                    " VirtualiZarr's manifests cannot hold (bloscpack.to_references and fsspec's"
                    " reference filesystem read it)"
                )
            compressor = zarray["compressor"]
            if compressor == {"id": CODEC_IDS[2]}:
                compressor = {"id": BLOSC2_ID}
            filters = [*(zarray["filters"] or ()), compressor]
            zarray["filters"], zarray["compressor"] = filters, None
            fills[key[: -len("/.zarray")]] = zarray["fill_value"]
            zarray["fill_value"] = None
            converted[key] = json.dumps(zarray)
        elif isinstance(value, str) and value.startswith("base64:"):
            raise UnsupportedError(
                f"{url}: chunk {key} is held inline (a short last chunk with codec='stock', or"
                " a special chunk of another value than the fill value, or of a NaN no fill"
                " value gives), which VirtualiZarr's manifests cannot hold"
                " (bloscpack.to_references and fsspec's reference filesystem read it)"
            )
    return converted, fills


def _filled(group: Any, fills: Mapping[str, Any], prefix: str, groups: Mapping[str, Any]) -> Any:
    """The ManifestGroup ``group`` (of the zarr group ``prefix``), its subgroups ``groups``,
    with the fill values ``fills`` (zarr format 2 JSON, by array path; None: NaN for
    floating-point and complex arrays, which xarray does not read as missing data in the
    kerchunk references VirtualiZarr writes, else zarr's default), each manifest over the
    whole chunk grid (the translator's ends at the last chunk listed)."""
    from virtualizarr.manifests import ChunkManifest, ManifestArray, ManifestGroup
    from zarr.core.metadata import ArrayV3Metadata

    arrays = {}
    for name, array in group.arrays.items():
        meta = array.metadata
        fill = fills.get(prefix + name)
        if fill is None and meta.data_type.to_native_dtype().kind == "c":
            fill = ["NaN", "NaN"]
        if fill is not None:
            meta = ArrayV3Metadata.from_dict({**meta.to_dict(), "fill_value": fill})
        grid = tuple(-(-size // chunk) for size, chunk in zip(meta.shape, meta.chunks,
                                                              strict=True))  # fmt: skip
        manifest = ChunkManifest(entries=array.manifest.dict(), shape=grid)
        arrays[name] = ManifestArray(metadata=meta, chunkmanifest=manifest)
    return ManifestGroup(arrays=arrays, groups=groups, attributes=dict(group.metadata.attributes))


def register_codecs() -> None:
    """Make imagecodecs' Blosc2 codec known to numcodecs (``imagecodecs_blosc2``) and, wrapped,
    to zarr format 3 (``numcodecs.imagecodecs_blosc2``), as VirtualiZarr names it."""
    try:
        import numcodecs
        import zarr.registry
        from imagecodecs.numcodecs import Blosc2
        from zarr.codecs.numcodecs import _NumcodecsBytesBytesCodec
    except ImportError as exc:
        raise UnsupportedError(f"reading Blosc2 chunks through zarr needs {exc.name} ({EXTRA})"
                               ) from None  # fmt: skip

    class ImagecodecsBlosc2(_NumcodecsBytesBytesCodec, codec_name="imagecodecs_blosc2"):
        """imagecodecs' Blosc2 codec as a zarr format 3 codec."""

    numcodecs.register_codec(Blosc2)
    try:
        zarr.registry.get_codec_class("numcodecs.imagecodecs_blosc2")
    except KeyError:  # (not yet registered, by this or by imagecodecs' own package)
        zarr.registry.register_codec("numcodecs.imagecodecs_blosc2", ImagecodecsBlosc2)
