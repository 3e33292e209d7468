"""Byte-range references to a container's chunks: :func:`to_references` describes a container
as a zarr store (format 2, or 3) whose chunk keys point at the stored Blosc chunks, in
kerchunk's reference format (version 1), so that zarr and xarray read the original files
through fsspec's reference filesystem without a copy; :func:`write_references` saves one as
JSON.

The chunk locations come from each format's :meth:`~bloscpack.containers.base.ContainerFormat.scan`
(its reader's own checked parsing).  Blosc1 chunks are read by the ``blosc`` codec (numcodecs',
zarr's), Blosc2 chunks by imagecodecs' ``imagecodecs_blosc2`` (zarr format 2) or by bloscpack's
``bloscpack_blosc2`` (C-Blosc2 through python-blosc2; zarr format 3).  zarr needs
every chunk whole: with the stock codecs (``codec="stock"``) a short last chunk is inlined,
decoded, padded with zeros and compressed again by the same codec (the one chunk per array
copied); with ``codec="bloscpack"`` it is a byte range too, which bloscpack's ``bloscpack_pad``
filter (:mod:`bloscpack.zarr_codecs`) pads after the decompressor, and the blocks of a b2nd
chunk stored one after another are put in C order by its ``bloscpack_blocks`` filter.  The
special chunks of a frame (no bytes of a file) that hold the array's fill value have no key
(zarr reads the fill value: see :func:`_fill_value`); the others are inlined.  Containers
whose chunks no zarr chunk grid holds are refused, never referenced wrongly."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import math
import os
import posixpath
import struct
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, cast

import blosc2
import numpy as np

from .blosc.header import ChunkHeader
from .containers import registry
from .containers.base import (
    ByteSource,
    ChunkSpan,
    ContainerReader,
    GridReader,
    GroupReader,
    TableReader,
    check_chunk_nbytes,
)
from .errors import ArgumentError, BloscpackError, FileNotFound, UnsupportedError
from .io.paths import PathLike
from .io.staging import staged_output
from .url import filesystem, is_url, local_path, remote_errors

#: The zarr compressor ids of the two chunk formats, by Blosc format version.
CODEC_IDS = {1: "blosc", 2: "imagecodecs_blosc2"}


def to_references(path_or_url: PathLike, *, zarr_format: int = 2, inline: str = "leftover",
                  codec: str = "stock", storage_options: Mapping[str, Any] | None = None,
                  ) -> dict[str, Any]:  # fmt: skip
    """A kerchunk reference dict (version 1) of the container ``path_or_url`` (a path or a
    URL; ``storage_options`` for its filesystem): one zarr array (``zarr_format`` 2 or 3) per
    container (per column of a ctable; per key of a python-blosc2 store, in zarr groups) whose
    chunk keys are ``[file, offset, length]`` of the
    stored chunks (absolute paths, or URLs).  ``codec="stock"``: zarr's own codecs, the short
    last chunk inlined; ``codec="bloscpack"``: bloscpack's ``bloscpack_pad`` filter after the
    decompressor, so that the short last chunk is a byte range too (``refs["bloscpack"]["codec"]``
    says which).  ``inline`` takes only ``"leftover"``."""
    return build_references(
        path_or_url,
        zarr_format=zarr_format,
        inline=inline,
        codec=codec,
        storage_options=storage_options,
        any_fill=zarr_format == 3,
    )


def build_references(path_or_url: PathLike, *, zarr_format: int, inline: str, codec: str,
                     storage_options: Mapping[str, Any] | None, any_fill: bool,
                     ) -> dict[str, Any]:  # fmt: skip
    """:func:`to_references`; ``any_fill``: the special chunks of any one value may be left to
    the fill value, else only NaN ones (xarray reads a zarr format 2 fill value as missing
    data: a NaN fill value turns only NaN into NaN)."""
    name = os.fspath(path_or_url)
    if zarr_format not in (2, 3):
        raise ArgumentError(f"zarr_format={zarr_format!r}: references are zarr format 2 or 3")
    if inline != "leftover":
        raise ArgumentError(f"inline={inline!r}: only 'leftover' (a short last chunk) is inlined")
    if codec not in ("stock", "bloscpack"):
        raise ArgumentError(f"codec={codec!r}: the codecs are 'stock' or 'bloscpack'")
    padded = codec == "bloscpack"
    if padded:
        own_codecs(name)
    if zarr_format == 2:
        refs: dict[str, Any] = {".zgroup": json.dumps({"zarr_format": 2})}
    else:
        group = {"zarr_format": 3, "node_type": "group", "attributes": {}}
        refs = {"zarr.json": json.dumps(group)}
    options = (zarr_format, padded, any_fill)
    with _opened(name, storage_options) as (fmt, reader):
        if isinstance(reader, TableReader):
            counts: Counter[str] = Counter()
            for column in reader.columns:
                ndim = len(reader.column(column).description.shape)
                dims = ["dim_0", *(f"{column}_dim_{axis}" for axis in range(1, ndim))]
                counts.update(_add_array(refs, column, fmt, reader.column(column),
                                         f"{name}: column {column!r}", dims, *options))  # fmt: skip
        elif registry.format_of(fmt).group:
            counts = _add_members(refs, cast(GroupReader, reader), name, *options)
        else:
            array = cast(ContainerReader, reader)
            dims = [f"dim_{axis}" for axis in range(len(array.description.shape))]
            counts = _add_array(refs, "data", fmt, array, name, dims, *options)
    files = _stamps(name, storage_options)
    for value in refs.values():  # (a referenced file outside the container's, if any)
        if isinstance(value, list) and value[0] not in files:
            files.update(_stamps(value[0], storage_options, listed=False))
    record = {"source": _source(name), "files": files, "codec": codec,
              "filled": counts["filled"], "inlined_special": counts["inlined_special"]}  # fmt: skip
    return {"version": 1, "refs": refs, "bloscpack": record}


def own_codecs(name: str) -> None:
    """Register bloscpack's codecs with numcodecs and zarr (:mod:`bloscpack.zarr_codecs`)."""
    try:
        from . import zarr_codecs  # noqa: F401  (registers them)
    except ImportError as exc:
        package = (exc.name or "zarr").split(".")[0]
        raise UnsupportedError(f"{name}: codec='bloscpack' needs {package}"
                               " (pip install 'bloscpack[virtual]')") from None  # fmt: skip


def verify_references(
    refs: Mapping[str, Any] | PathLike, *, storage_options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Whether the files that the references ``refs`` (a dict from :func:`to_references`, or
    the path of its JSON) describe are still as they were: ``{"ok": bool, "source": ...,
    "files": <number checked>, "changed": {file: {what: [recorded, now]}}}``, ``what`` being
    ``size``, ``mtime``, ``etag``, or ``exists`` (a file gone, or new in the container).
    ``refs`` may be the directory of parquet references too."""
    loaded = _loaded(refs)
    record = loaded.get("bloscpack")
    name = os.fspath(refs) if not isinstance(refs, Mapping) else "references"
    if not isinstance(record, Mapping) or not isinstance(record.get("files"), Mapping):
        raise ArgumentError(f"{name}: no record of the referenced files (references made by"
                            " bloscpack.to_references hold one)")  # fmt: skip
    recorded: Mapping[str, Any] = record["files"]
    source = str(record["source"])
    try:
        now = _stamps(source, storage_options)
    except FileNotFound:
        now = {}
    changed: dict[str, dict[str, list[Any]]] = {}
    for file, stamp in recorded.items():
        if file not in now:
            try:
                now.update(_stamps(file, storage_options, listed=False))
            except FileNotFound:
                changed[file] = {"exists": [True, False]}
                continue
        differ = {key: [stamp.get(key), now[file].get(key)] for key in ("size", "mtime", "etag")
                  if stamp.get(key) != now[file].get(key)}  # fmt: skip
        if differ:
            changed[file] = differ
    for file in now.keys() - recorded.keys():
        changed[file] = {"exists": [False, True]}
    return {"ok": not changed, "source": source, "files": len(recorded),
            "changed": dict(sorted(changed.items()))}  # fmt: skip


def _loaded(refs: Mapping[str, Any] | PathLike) -> Mapping[str, Any]:
    """The reference dict ``refs``, or the one in the JSON file ``refs`` names (of parquet
    references, the directory: their record of the files)."""
    if isinstance(refs, Mapping):
        return refs
    if os.path.isdir(refs):
        record = os.path.join(refs, PARQUET_RECORD)
        return {"bloscpack": _loaded(record)} if os.path.isfile(record) else {}
    try:
        with open(refs, encoding="utf-8") as fh:
            loaded = json.load(fh)
    except OSError as exc:
        raise FileNotFound(f"{os.fspath(refs)}: cannot read references: {exc.strerror}") from None
    except ValueError as exc:
        raise ArgumentError(f"{os.fspath(refs)}: not JSON references ({exc})") from None
    if not isinstance(loaded, dict):
        raise ArgumentError(f"{os.fspath(refs)}: not JSON references (no object)")
    return loaded


def _source(name: str) -> str:
    """The container ``name`` as its references name it: an absolute path, or the URL."""
    return name if is_url(name) else os.path.abspath(name)


def _stamps(name: str, storage_options: Mapping[str, Any] | None,
            listed: bool = True) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The size, modification time (ISO 8601, UTC) and ETag (where the store gives one) of
    the file ``name``, or (``listed``) of every file of the directory ``name``, by the names
    the references give them (absolute paths, URLs)."""
    local = name if not is_url(name) else local_path(name, storage_options)
    if local is not None:
        return _local_stamps(os.path.abspath(local), listed)
    with remote_errors(name):
        fs, root = filesystem(name, storage_options)
        if listed and fs.isdir(root):
            found = fs.find(root, detail=True)
            base = name.rstrip("/")
            return {f"{base}/{path[len(root.rstrip('/')) + 1:]}": _remote_stamp(info)
                    for path, info in sorted(found.items())}  # fmt: skip
        try:
            return {name: _remote_stamp(fs.info(root))}
        except FileNotFoundError:
            raise FileNotFound(f"{name}: no such file or directory") from None


def _local_stamps(path: str, listed: bool) -> dict[str, dict[str, Any]]:
    """:func:`_stamps` of a local file or directory."""
    if listed and os.path.isdir(path):
        files = sorted(os.path.join(folder, file) for folder, _, names in os.walk(path)
                       for file in names)  # fmt: skip
    else:
        files = [path]
    stamps = {}
    for file in files:
        try:
            status = os.stat(file)
        except OSError:
            raise FileNotFound(f"{file}: no such file or directory") from None
        ns = status.st_mtime_ns
        when = datetime.fromtimestamp(ns // 10**9, UTC).replace(microsecond=ns // 1000 % 10**6)
        stamps[file] = {"size": status.st_size, "mtime": when.isoformat("T", "microseconds")}
    return stamps


def _remote_stamp(info: Mapping[str, Any]) -> dict[str, Any]:
    """The size, modification time and ETag of an object, from its fsspec ``info``."""
    stamp: dict[str, Any] = {"size": info.get("size")}
    when = next((info[key] for key in ("LastModified", "mtime", "updated", "last_modified")
                 if info.get(key) is not None), None)  # fmt: skip
    if isinstance(when, datetime):
        when = when.astimezone(UTC).isoformat("T", "microseconds")
    elif isinstance(when, int | float):
        when = datetime.fromtimestamp(when, UTC).isoformat("T", "microseconds")
    stamp["mtime"] = None if when is None else str(when)
    etag = info.get("ETag", info.get("etag"))
    if etag is not None:
        stamp["etag"] = str(etag)
    return stamp


@contextlib.contextmanager
def _opened(name: str, storage_options: Mapping[str, Any] | None,
            ) -> Iterator[tuple[str, ContainerReader | TableReader | GroupReader]]:  # fmt: skip
    """The format and the reader of the container ``name`` (a path or a URL; of a format of
    groups of arrays, its group reader), closed after."""
    with contextlib.ExitStack() as stack:
        if is_url(name):
            fmt, source = stack.enter_context(registry.opened_url(name, storage_options))
        elif not os.path.exists(name):
            raise FileNotFound(f"{name}: no such file or directory")
        else:
            fmt, source = registry.detect(name), name
        found = registry.format_of(fmt)
        reader = found.open_group(source) if found.group else registry.open_reader(source, fmt)
        stack.callback(reader.close)
        yield fmt, reader


def _add_members(refs: dict[str, Any], group: GroupReader, name: str, zarr_format: int,
                 padded: bool, any_fill: bool) -> Counter[str]:  # fmt: skip
    """Every array of the store ``group`` (named ``name``) into ``refs``, under its key
    (``/g/x``: the array ``x`` of the zarr group ``g``), its dimensions named
    ``x_dim_<axis>``, the attributes of each group that has them; the counts of
    :func:`_add_array`.  A member of an archive is referenced where it lies in the archive;
    an array embedded in another frame (whose chunks are compressed again) is refused."""
    counts: Counter[str] = Counter()
    groups = {"/": group.attrs("/")}
    keys = group.keys()
    for key in keys:
        path = key.strip("/")
        where = f"{name}: key {key!r}"
        member = group.member(key)
        if not isinstance(member, ByteSource):
            raise UnsupportedError(
                f"{where} is a frame embedded in the store's own frame, whose chunks compress"
                " it again: no byte range of a file holds its chunks"
            )
        with contextlib.ExitStack() as stack:
            stack.callback(member.close)
            fmt = registry.detect_source(member)
            reader = registry.open_reader(member, fmt)
            stack.callback(reader.close)
            if isinstance(reader, TableReader):
                raise UnsupportedError(f"{where}: a table in a store cannot be referenced")
            leaf = posixpath.basename(path)
            dims = [f"{leaf}_dim_{axis}" for axis in range(len(reader.description.shape))]
            counts.update(_add_array(refs, path, fmt, reader, where, dims, zarr_format,
                                     padded, any_fill, member))  # fmt: skip
        for parent in _parents(path):
            groups.setdefault(parent, group.attrs(parent))
    for parent, attrs in groups.items():
        kept = _json_only(attrs)
        prefix = "" if parent == "/" else parent.strip("/") + "/"
        if zarr_format == 2:
            refs[f"{prefix}.zgroup"] = json.dumps({"zarr_format": 2})
            if kept:
                refs[f"{prefix}.zattrs"] = json.dumps(kept)
        else:
            refs[f"{prefix}zarr.json"] = json.dumps({"zarr_format": 3, "node_type": "group",
                                                     "attributes": kept})  # fmt: skip
    return counts


def _parents(path: str) -> Iterator[str]:
    """The groups above the array ``path`` (``g/h/x``: ``/g``, ``/g/h``)."""
    parts = path.split("/")[:-1]
    for end in range(1, len(parts) + 1):
        yield "/" + "/".join(parts[:end])


def write_references(refs: Mapping[str, Any], path: PathLike, *,
                     record_size: int = 10_000) -> None:  # fmt: skip
    """Save the reference dict ``refs`` (from :func:`to_references`) at ``path``: as JSON, or
    where ``path`` ends in ``.parq`` or ``.parquet`` as kerchunk's parquet references (a
    directory: ``.zmetadata`` and ``<array>/refs.<n>.parq`` of ``record_size`` chunks each,
    written with pyarrow, read by fsspec's ``reference://`` filesystem with ``fo=path``, with
    pandas and fastparquet; zarr format 2 only), an existing one replaced."""
    name = os.fspath(path)
    if name.rstrip("/").endswith((".parq", ".parquet")):
        _write_parquet(refs, name, record_size)
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(refs, fh)
    except OSError as exc:
        raise FileNotFound(f"{name}: cannot write references: {exc.strerror}") from None


#: The file of a parquet references directory that holds the record of the referenced files.
PARQUET_RECORD = "bloscpack.json"


def _write_parquet(refs: Mapping[str, Any], name: str, record_size: int) -> None:
    """:func:`write_references` as parquet, in the layout of fsspec's ``LazyReferenceMapper``
    (:func:`_parquet_rows`), the record of the files in ``bloscpack.json``."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UnsupportedError(f"{name}: parquet references need pyarrow"
                               " (pip install 'bloscpack[virtual]')") from None  # fmt: skip
    entries = refs.get("refs", {})
    if "zarr.json" in entries:
        raise ArgumentError(f"{name}: parquet references hold zarr format 2 only (fsspec's"
                            " LazyReferenceMapper); write zarr format 3 ones as JSON")  # fmt: skip
    if record_size < 1:
        raise ArgumentError(f"{name}: record_size={record_size}: at least 1")
    meta = {key: json.loads(value) for key, value in entries.items()
            if key.rsplit("/", 1)[-1].startswith(".z")}  # fmt: skip
    fields = [key[: -len("/.zarray")] for key in meta if key.endswith("/.zarray")]
    with staged_output(name, replaces=_is_parquet_refs, what="parquet references") as built:
        os.mkdir(built)
        kinds = {"path": pa.string(), "offset": pa.int64(), "size": pa.int64(),
                 "raw": pa.binary()}  # fmt: skip
        for field in fields:
            columns = _parquet_rows(entries, field, meta[f"{field}/.zarray"])
            os.makedirs(os.path.join(built, field))
            for number, start in enumerate(range(0, len(columns["path"]), record_size)):
                rows = slice(start, start + record_size)
                table = pa.table({key: pa.array(values[rows], kinds[key])
                                  for key, values in columns.items()})  # fmt: skip
                pq.write_table(table, os.path.join(built, field, f"refs.{number}.parq"),
                               compression="zstd")  # fmt: skip
        zmetadata = {"metadata": meta, "record_size": record_size}
        with open(os.path.join(built, ".zmetadata"), "w", encoding="utf-8") as fh:
            json.dump(zmetadata, fh)
        if "bloscpack" in refs:
            with open(os.path.join(built, PARQUET_RECORD), "w", encoding="utf-8") as fh:
                json.dump(refs["bloscpack"], fh)


def _parquet_rows(entries: Mapping[str, Any], field: str,
                  zarray: Mapping[str, Any]) -> dict[str, list[Any]]:  # fmt: skip
    """The parquet columns of the array ``field`` (of metadata ``zarray``): one row per chunk
    number (C order over the chunk grid), ``path``, ``offset``, ``size``, or the chunk's bytes
    in ``raw``.  A chunk with no key (left to the fill value) is held inline, as the fill value
    compressed: fsspec reads a row with neither path nor raw, with pandas 3, as a path NaN."""
    counts = [-(-n // c) for n, c in zip(zarray["shape"], zarray["chunks"], strict=True)] or [1]
    total = math.prod(counts)
    paths: list[str | None] = [None] * total
    offsets, sizes = [0] * total, [0] * total
    raws: list[bytes | None] = [None] * total
    for key, value in entries.items():
        parent, chunk = key.rsplit("/", 1) if "/" in key else ("", key)
        if parent != field or chunk.startswith(".z"):
            continue
        number = int(np.ravel_multi_index([int(c) for c in chunk.split(".")], counts))
        if isinstance(value, list):
            paths[number], offsets[number], sizes[number] = value
        else:
            text = value.encode() if isinstance(value, str) else bytes(value)
            raws[number] = base64.b64decode(text[7:]) if text.startswith(b"base64:") else text
    fill = _fill_chunk(zarray)
    if fill is not None:
        raws = [fill if raw is None and path is None else raw
                for path, raw in zip(paths, raws, strict=True)]  # fmt: skip
    return {"path": paths, "offset": offsets, "size": sizes, "raw": raws}


def _fill_chunk(zarray: Mapping[str, Any]) -> bytes | None:
    """A chunk of the zarr format 2 array ``zarray`` (its metadata) all of its fill value,
    encoded by its filters and compressor (None: no fill value)."""
    fill = zarray["fill_value"]
    if fill is None:
        return None
    import numcodecs

    dtype = np.dtype(zarray["dtype"] if isinstance(zarray["dtype"], str)
                     else [tuple(field) for field in zarray["dtype"]])  # fmt: skip
    data: Any = np.full(zarray["chunks"], fill_item(fill, dtype), dtype)
    for config in zarray["filters"] or ():
        data = numcodecs.get_codec(config).encode(data)
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    if zarray["compressor"]["id"] == CODEC_IDS[2]:
        return bytes(blosc2.compress2(raw, typesize=dtype.itemsize))
    return bytes(numcodecs.get_codec(zarray["compressor"]).encode(raw))


def _is_parquet_refs(path: str) -> bool:
    """Whether the directory ``path`` holds parquet references (which writing replaces)."""
    return os.path.isfile(os.path.join(path, ".zmetadata"))


def _add_array(refs: dict[str, Any], key: str, fmt: str, reader: ContainerReader,
               where: str, dims: list[str], zarr_format: int, padded: bool, any_fill: bool,
               source: ByteSource | None = None) -> Counter[str]:  # fmt: skip
    """The zarr array ``key`` of the container ``reader`` (``where``, for messages) into
    ``refs``, its dimensions named ``dims`` (``padded``: with bloscpack's filters, a short
    chunk referenced by byte range, b2nd blocks put in C order; ``source``: what the reader
    reads, whose chunks are referenced where it lies in its file); the number of its chunks
    left to the fill value (no key, ``filled``) and of its special chunks held inline
    (``inlined_special``)."""
    described = reader.description
    dtype, shape = described.dtype, described.shape
    if dtype.hasobject:
        raise UnsupportedError(f"{where}: object arrays cannot be referenced")
    order = "F" if described.order == "F" and len(shape) > 1 else "C"
    refused = _refused_dtype(dtype)
    if refused:
        raise UnsupportedError(f"{where}: {refused} cannot be referenced (zarr reads none)")
    if isinstance(reader, GridReader):
        assert described.chunks is not None
        chunks = described.chunks
        counts = reader.grid.grid
    elif not shape:
        chunks = counts = ()
    else:
        chunks = _flat_chunks(reader, order, where)
        if order == "C":
            counts = (reader.nchunks, *(1,) * (len(shape) - 1))
        else:
            counts = (*(1,) * (len(shape) - 1), reader.nchunks)
    keys = list(chunk_keys(counts, zarr_format)) if math.prod(shape) else []
    full = stored = math.prod(chunks) * dtype.itemsize
    filters = [{"id": "bloscpack_pad", "nbytes": full}] if padded else []
    grid = reader.grid if isinstance(reader, GridReader) else None
    if padded and grid is not None and not grid.decodes_in_c_order:
        # b2nd blocks one after another, the chunk padded to whole blocks
        stored = grid.chunk_nbytes
        filters.append({"id": "bloscpack_blocks", "chunks": list(chunks),
                        "blocks": list(grid.blocks), "itemsize": dtype.itemsize})  # fmt: skip
        scanned = registry.format_of(fmt).scan(reader, block_major=True)  # type: ignore[call-arg]
    else:
        scanned = registry.format_of(fmt).scan(reader)
    spans = list(scanned)[: len(keys)]
    if source is not None:
        file, start = source.located()
        spans = [dataclasses.replace(span, path=file, offset=start + span.offset)
                 if span.path == source.name else span for span in spans]  # fmt: skip
    version = _one_version(spans, where, zarr_format)
    if zarr_format == 3 and version == 2:
        own_codecs(where)  # (bloscpack_blosc2 reads Blosc2 chunks)
    fill, filled = _fill_value(reader, spans, dtype, zarr_format, any_fill)
    if zarr_format == 3:  # (refused before any chunk is inlined)
        first = spans[0].header if spans else None
        meta = _zarr_json(shape, chunks, dtype, order, first, version, where)
        if fill is not None:
            meta["fill_value"] = fill
        for kept in filters:  # (before the compressor, as zarr format 2 filters are)
            named = {key: value for key, value in kept.items() if key != "id"}
            meta["codecs"].insert(-1, {"name": f"numcodecs.{kept['id']}",
                                       "configuration": named})  # fmt: skip
    special = sum(span.path is None and span.index not in filled for span in spans)
    held = Counter({"filled": len(filled), "inlined_special": special})
    for span, chunk_key in zip(spans, keys, strict=True):
        if span.index not in filled:
            refs[f"{key}/{chunk_key}"] = _reference(reader, span, stored, where, padded)
    if zarr_format == 3:
        refs[f"{key}/zarr.json"] = json.dumps(
            {**meta, "attributes": _json_attrs(reader), "dimension_names": dims}
        )
        return held
    zarray = {
        "zarr_format": 2, "shape": list(shape), "chunks": list(chunks),
        "dtype": dtype.descr if dtype.names else dtype.str,
        "compressor": {"id": CODEC_IDS[version]}, "fill_value": fill, "order": order,
        "filters": filters or None,
    }  # fmt: skip
    refs[f"{key}/.zarray"] = json.dumps(zarray)
    refs[f"{key}/.zattrs"] = json.dumps({**_json_attrs(reader), "_ARRAY_DIMENSIONS": dims})
    return held


#: The zarr format-3 data types of numpy's kinds and sizes (the core types).
V3_TYPES = {
    ("b", 1): "bool", **{("i", n): f"int{8 * n}" for n in (1, 2, 4, 8)},
    **{("u", n): f"uint{8 * n}" for n in (1, 2, 4, 8)},
    **{("f", n): f"float{8 * n}" for n in (2, 4, 8)},
    ("c", 8): "complex64", ("c", 16): "complex128",
}  # fmt: skip
#: zarr's names of the Blosc shuffles, by the number a Blosc header gives.
V3_SHUFFLES = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


def _zarr_json(shape: tuple[int, ...], chunks: tuple[int, ...], dtype: np.dtype, order: str,
               header: ChunkHeader | None, version: int, where: str) -> dict[str, Any]:  # fmt: skip
    """The zarr format-3 metadata of an array of Blosc chunks of format ``version``: Blosc1
    chunks read by zarr's ``blosc`` codec, Blosc2 chunks by ``numcodecs.bloscpack_blosc2``
    (datetime64 and timedelta64 as zarr-python's ``numpy.datetime64``/``timedelta64``)."""
    data_type: Any = V3_TYPES.get((dtype.kind, dtype.itemsize))
    if dtype.kind in "mM":
        unit, count = np.datetime_data(dtype)
        data_type = {"name": f"numpy.{'datetime64' if dtype.kind == 'M' else 'timedelta64'}",
                     "configuration": {"unit": unit, "scale_factor": count}}  # fmt: skip
    if data_type is None:
        raise UnsupportedError(f"{where}: dtype {dtype.str} has no zarr format 3 data type here"
                               " (zarr_format=2 holds it)")  # fmt: skip
    endian = {"<": "little", ">": "big"}.get(dtype.byteorder, "little" if sys.byteorder
                                             == "little" else "big")  # fmt: skip
    codecs: list[dict[str, Any]] = []
    if order == "F":
        codecs.append({"name": "transpose",
                       "configuration": {"order": list(range(len(shape)))[::-1]}})  # fmt: skip
    codecs.append({"name": "bytes", "configuration": {"endian": endian}})
    blosc = {"cname": header.codec if header else "lz4", "clevel": 5,
             "shuffle": V3_SHUFFLES.get(header.shuffle if header else 1, "shuffle"),
             "typesize": dtype.itemsize}  # fmt: skip
    if version == 1:
        codecs.append({"name": "blosc", "configuration": {**blosc, "blocksize": 0}})
    else:
        codecs.append({"name": "numcodecs.bloscpack_blosc2", "configuration": blosc})
    fill: Any = [0.0, 0.0] if dtype.kind == "c" else (False if dtype.kind == "b" else 0)
    return {
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "codecs": codecs, "fill_value": fill,
    }  # fmt: skip


def _refused_dtype(dtype: np.dtype) -> str | None:
    """Why zarr format 2 holds no array of the structured ``dtype`` as numpy has it."""
    if dtype.names is None:
        return None
    if len(dtype.fields or {}) != len(dtype.names):
        return "a structured dtype with field titles"
    if dtype.itemsize != sum(dtype[name].itemsize for name in dtype.names):
        return "a structured dtype with padding (aligned or with offsets)"
    for name in dtype.names:
        if dtype[name].names is not None or dtype[name].shape:
            return f"a structured dtype whose field {name!r} is itself structured or an array"
    return None


def _flat_chunks(reader: ContainerReader, order: str, where: str) -> tuple[int, ...]:
    """The zarr chunk shape of a container whose chunks hold runs of its flat bytes in
    ``order``: whole rows (C order; whole slabs of the last axis in Fortran order) of equal
    count, but the last chunk's."""
    shape, dtype = reader.description.shape, reader.description.dtype
    rest = shape[1:] if order == "C" else shape[:-1]
    row = dtype.itemsize * math.prod(rest)
    sizes = reader.sizes
    if sizes.every is not None:
        every = sizes.every
    else:
        assert sizes.each is not None
        firsts = set(sizes.each[:-1])
        every = firsts.pop() if len(firsts) == 1 else max(sizes.each, default=row)
        if firsts or (len(sizes.each) and sizes.each[-1] > every):
            raise UnsupportedError(f"{where}: chunks of different sizes cannot be referenced")
    if not row or every % row:
        what = "rows" if order == "C" else "slabs of the last axis"
        raise UnsupportedError(
            f"{where}: chunks of {every} bytes do not hold whole {what} of {row} bytes, so no"
            " zarr chunk grid holds them"
        )
    count = max(every // row, 1)
    return (count, *rest) if order == "C" else (*rest, count)


def _fill_value(reader: ContainerReader, spans: list[ChunkSpan], dtype: np.dtype,
                zarr_format: int, any_fill: bool) -> tuple[Any, set[int]]:  # fmt: skip
    """The array's zarr fill value (JSON; None: none) and the chunks left to it: the special
    chunks of a frame (no bytes of a file) that decode to one value repeated, which zarr reads
    where a chunk key is absent.  Of several such values, the one of the most chunks (on a
    tie, the first met); a value no fill value of format ``zarr_format`` gives exactly (a
    structured or string item; but in format 3 a NaN of another payload than NaN's) is no
    fill value.  ``any_fill``: any value, else only one xarray does not read as missing data
    in zarr format 2 (:func:`_unmasked`)."""
    if dtype.kind not in "biufcmM":
        return None, set()
    by_value: dict[bytes, list[int]] = {}
    for span in spans:
        if span.path is not None:
            continue
        data = np.frombuffer(reader.read_chunk(span.index), np.uint8)
        if not data.size or data.size % dtype.itemsize:
            continue
        items = data.reshape(-1, dtype.itemsize)
        if not (items == items[0]).all():
            continue
        by_value.setdefault(items[0].tobytes(), []).append(span.index)
    for value, indices in sorted(by_value.items(), key=lambda item: -len(item[1])):
        if not any_fill and not _unmasked(value, dtype):
            continue
        fill = _json_fill(value, dtype, zarr_format)
        if fill is not None:
            return fill, set(indices)
    return None, set()


def _unmasked(value: bytes, dtype: np.dtype) -> bool:
    """Whether xarray reads the zarr format 2 fill value ``value`` (an item of ``dtype``) as
    itself, not as missing data: a NaN (of a complex number, a NaN part), which it leaves
    alone, and any value of a datetime64 or timedelta64 array, which it never masks."""
    if dtype.kind in "mM":
        return True
    if dtype.kind == "f":
        return bool(np.isnan(np.frombuffer(value, dtype)[0]))
    if dtype.kind == "c":
        return bool(np.isnan(np.frombuffer(value, _part(dtype))).any())
    return False


def _part(dtype: np.dtype) -> np.dtype:
    """The float dtype of the real and imaginary parts of the complex ``dtype``."""
    return np.dtype(f"{dtype.byteorder.replace('|', '=')}f{dtype.itemsize // 2}")


def _json_fill(value: bytes, dtype: np.dtype, zarr_format: int) -> Any:
    """The zarr (format ``zarr_format``) JSON of the fill value whose item is ``value``, or
    None where zarr would read another item from any JSON of it: a float as a number,
    ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``, in format 3 a NaN of another payload as
    the hex of its bits; a complex number as its two parts; a datetime64 or timedelta64 as
    its integer count of units (``NaT``: the smallest int64)."""
    item = np.frombuffer(value, dtype)
    fill: Any
    if dtype.kind in "mM":
        fill = int(item.view(dtype.str[0] + "i8")[0])
    elif dtype.kind == "c":
        fill = [_json_float(part, zarr_format) for part in item.view(_part(dtype))]
    elif dtype.kind == "f":
        fill = _json_float(item[0], zarr_format)
    else:
        fill = item[0].item()
    return fill if fill_item(fill, dtype).tobytes() == value else None


def _json_float(number: np.floating, zarr_format: int) -> Any:
    """The zarr JSON of the float ``number``."""
    if np.isnan(number):
        canonical = np.array(math.nan, number.dtype).tobytes() == number.tobytes()
        if zarr_format == 3 and not canonical:
            return "0x" + np.array(number, number.dtype.newbyteorder(">")).tobytes().hex()
        return "NaN"
    if np.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return float(number)


def fill_item(fill: Any, dtype: np.dtype) -> np.ndarray:
    """The item (a 0-d array of ``dtype``) that zarr reads from the JSON fill value ``fill``
    (of either zarr format)."""
    if dtype.kind in "mM":
        return np.array(fill, "i8").astype(dtype)
    if dtype.kind == "c":
        return np.array(complex(_float(fill[0]), _float(fill[1])), dtype)
    if dtype.kind == "f":
        return np.array(_float(fill), dtype)
    return np.array(fill, dtype)


def _float(fill: Any) -> float:
    """The float that zarr reads from the JSON ``fill``: a number, ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"`` or (format 3) ``"0x"`` and the hex of the bits of a float16, 32 or 64."""
    if isinstance(fill, str) and fill.startswith("0x"):
        code = {4: ">e", 8: ">f", 16: ">d"}[len(fill) - 2]
        return float(struct.unpack(code, bytes.fromhex(fill[2:]))[0])
    return float({"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(fill, fill))


def _one_version(spans: list[ChunkSpan], where: str, zarr_format: int) -> int:
    """The Blosc format of every chunk (1 if none): one zarr codec reads them all (that of
    Blosc2 chunks in zarr format 3 is bloscpack's own)."""
    versions = {span.header.blosc_version for span in spans}
    if len(versions) > 1:
        raise UnsupportedError(f"{where}: Blosc1 and Blosc2 chunks mixed cannot be referenced")
    for span in spans:
        if span.header.codec == "snappy":
            raise UnsupportedError(
                f"{where}: chunk {span.index} is compressed with snappy, which the zarr codecs"
                " do not decode"
            )
    version = versions.pop() if versions else 1
    if zarr_format == 2 or version == 1:
        _codec(version, where)
    return version


def _reference(reader: ContainerReader, span: ChunkSpan, full: int, where: str,
               pad: bool) -> Any:  # fmt: skip
    """The reference of one chunk: ``[path, offset, length]``, or where it is no whole chunk
    of a file (a short last chunk, unless the ``pad`` filter reads it; a special entry of a
    frame) its data as read, padded with zeros to a whole chunk, compressed again and inlined
    (base64)."""
    check_chunk_nbytes(reader, span.index, span.header.nbytes)
    whole = span.header.nbytes == full or (pad and span.header.nbytes < full)
    if span.path is not None and whole:
        where_ = span.path if is_url(span.path) else os.path.abspath(span.path)
        return [where_, span.offset, span.length]
    padded = np.zeros(full, np.uint8)
    part = np.frombuffer(reader.read_chunk(span.index), np.uint8)
    padded[: part.size] = part
    return "base64:" + base64.b64encode(_encode(padded, span, where)).decode("ascii")


def _encode(data: np.ndarray, span: ChunkSpan, where: str) -> bytes:
    """``data`` compressed as a chunk of the format of the chunk ``span`` (Blosc2: by
    C-Blosc2, which every Blosc2 codec reads)."""
    header = span.header
    if header.blosc_version == 1:
        codec = _codec(1, where)
        sized = header.typesize in (1, 2, 4, 8) and not data.size % header.typesize
        typed = data.view(f"u{header.typesize}") if sized else data
        return bytes(codec(cname=header.codec, clevel=5, shuffle=header.shuffle).encode(typed))
    return bytes(blosc2.compress2(data, typesize=header.typesize or 1))


def _codec(version: int, where: str) -> Any:
    """The numcodecs codec class that reads Blosc chunks of format ``version``: numcodecs'
    ``Blosc`` (1), imagecodecs' ``Blosc2`` (2)."""
    try:
        if version == 1:
            from numcodecs import Blosc

            return Blosc
        from imagecodecs.numcodecs import Blosc2
    except ImportError:
        package = "numcodecs" if version == 1 else "imagecodecs"
        raise UnsupportedError(
            f"{where}: Blosc{version} chunks are read by {package}' codec, which is not"
            " installed (pip install 'bloscpack[virtual]')"
        ) from None
    return Blosc2


def _json_attrs(reader: ContainerReader) -> dict[str, Any]:
    """The container's user metadata entries that JSON holds (the others are left out)."""
    try:
        user = reader.stored_metadata().user
    except BloscpackError:
        return {}
    return _json_only(user)


def _json_only(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``attrs`` that JSON holds."""
    kept = {}
    for key, value in attrs.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        kept[str(key)] = value
    return kept


def chunk_keys(counts: tuple[int, ...], zarr_format: int = 2) -> Iterator[str]:
    """The keys of a grid of ``counts`` chunks, in C order: ``0.1`` (zarr format 2; a 0-d
    array's one chunk: ``0``) or ``c/0/1`` (format 3; a 0-d array's: ``c``)."""
    if not counts:
        yield "0" if zarr_format == 2 else "c"
        return
    if not math.prod(counts):
        return
    for coords in np.ndindex(*counts):
        yield ".".join(map(str, coords)) if zarr_format == 2 else "c/" + "/".join(map(str, coords))
