"""The features of python-blosc2 frames that change what their bytes mean and that this library
does not model: one list for every frame format (``b2frame``, ``sframe``, ``b2nd``, contiguous
or sparse), and :func:`refuse_unmodelled`, which every reader of a whole frame calls on open.

python-blosc2 marks them with a metalayer (what ``blosc2.open`` dispatches on), and keeps their
payload in a vlmetalayer:

* ``b2o`` (vlmeta ``b2o``): a persisted object whose chunks are placeholders — a lazy
  expression (``kind`` ``lazyexpr``), a lazy UDF (``lazyudf``), a C2Array reference
  (``c2array``), a RemoteArray (``remote_array``);
* ``LazyArray`` (vlmeta ``_LazyArray``): the older lazy expression (0) or lazy UDF (1);
* ``proxy-source`` and ``proxy``: a Proxy's cache, filled only where it was read;
* ``b2embed`` (vlmeta ``estore_metadata``): an EmbedStore, arrays embedded as frames in its
  data; ``b2dict`` and ``b2tree``: the same inside a DictStore or TreeStore;
* ``vlarray``, ``listarray``, ``batcharray``: msgpack-serialized objects in the chunks.

Every other metalayer and vlmetalayer (user attributes, this library's numpy metadata,
``_b2o_user_vlmeta``) leaves the chunks meaning what they say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import BloscpackError, UnmodelledFeature
from .core import FrameCore
from .records import unpack_value

#: Longest stored text (an expression, a path) quoted in a message.
QUOTE_LEN = 80

_EVALUATE = "evaluate it with python-blosc2 and save the result"
_EVALUATE_EXPRESSION = "load it with evaluate=True, or " + _EVALUATE


def _quote(value: Any) -> str:
    """``value`` quoted on one line, cut to :data:`QUOTE_LEN` characters (``unknown`` when the
    file does not say)."""
    if value is None:
        return "unknown"
    text = repr(str(value))
    return text if len(text) <= QUOTE_LEN else text[: QUOTE_LEN - 4] + "...'"


def _operands(payload: dict[str, Any]) -> str:
    """``o0=a.b2nd, o1=b.b2nd``: the operands a lazy payload names (paths or references)."""
    operands = payload.get("operands")
    if not isinstance(operands, dict) or not operands:
        return "no operands"
    names = []
    for key, ref in list(operands.items())[:8]:
        if isinstance(ref, dict):
            ref = ref.get("urlpath") or ref.get("path") or ref.get("kind")
        names.append(f"{key}={str(ref)[:QUOTE_LEN]}")
    more = ", ..." if len(operands) > 8 else ""
    return "operands " + ", ".join(names) + more


def _lazy_expression(payload: dict[str, Any]) -> str:
    return (
        f"a python-blosc2 lazy expression ({_quote(payload.get('expression'))} over"
        f" {_operands(payload)}) stored as placeholder chunks; {_EVALUATE_EXPRESSION}"
    )


def _lazy_udf(payload: dict[str, Any]) -> str:
    return (
        f"a python-blosc2 lazy UDF (function {_quote(payload.get('name'))} over"
        f" {_operands(payload)}) stored as placeholder chunks; {_EVALUATE}"
    )


def _b2o(core: FrameCore, marker: Any) -> str:
    payload = _vlmeta(core, "b2o")
    kind = payload.get("kind") or (marker.get("kind") if isinstance(marker, dict) else None)
    if kind == "lazyexpr":
        return _lazy_expression(payload)
    if kind == "lazyudf":
        return _lazy_udf(payload)
    if kind == "c2array":
        return (
            f"a python-blosc2 C2Array reference (to {_quote(payload.get('path'))} at"
            f" {_quote(payload.get('urlbase'))}) stored as placeholder chunks; fetch the array"
            " with python-blosc2 and save it"
        )
    if kind == "remote_array":
        return (
            "a python-blosc2 RemoteArray (a reference to data stored elsewhere) stored as"
            " placeholder chunks; fetch the array with python-blosc2 and save it"
        )
    return (
        f"a python-blosc2 persisted object of kind {_quote(kind)} stored as placeholder chunks;"
        " open it with python-blosc2 and save the array it gives"
    )


def _legacy_lazy(core: FrameCore, marker: Any) -> str:
    payload = _vlmeta(core, "_LazyArray")
    if marker == 1 or "UDF" in payload:
        return _lazy_udf(payload)
    return _lazy_expression(payload)


def _proxy(core: FrameCore, marker: Any) -> str:
    source = marker if isinstance(marker, dict) else {}
    origin = source.get("urlpath") or source.get("local_abspath") or source.get("source_kind")
    return (
        f"a python-blosc2 Proxy cache of {_quote(origin)}, whose chunks hold only what was read"
        " through it; read its source, or save the proxy's data with python-blosc2"
    )


def _remote_carrier(core: FrameCore, marker: Any) -> str:
    return (
        "a python-blosc2 proxy carrier of data stored elsewhere, whose chunks hold only what"
        " was fetched; fetch the array with python-blosc2 and save it"
    )


def _store(kind: str) -> Callable[[FrameCore, Any], str]:
    def describe(core: FrameCore, marker: Any) -> str:
        return (
            f"a python-blosc2 {kind} (arrays embedded as frames in its data), which this"
            " version cannot read yet; open it with python-blosc2"
        )

    return describe


def _objects(kind: str) -> Callable[[FrameCore, Any], str]:
    def describe(core: FrameCore, marker: Any) -> str:
        return (
            f"a python-blosc2 {kind} (msgpack-serialized objects in its chunks), which this"
            " version cannot read; open it with python-blosc2"
        )

    return describe


#: The metalayers that change what a frame's bytes mean, each with what it says about the file.
METALAYERS: dict[str, Callable[[FrameCore, Any], str]] = {
    "b2o": _b2o,
    "LazyArray": _legacy_lazy,
    "proxy-source": _proxy,
    "proxy": _remote_carrier,
    "b2embed": _store("EmbedStore"),
    "b2dict": _store("DictStore's embedded store"),
    "b2tree": _store("TreeStore's embedded store"),
    "vlarray": _objects("ObjectArray"),
    "listarray": _objects("ListArray"),
    "batcharray": _objects("BatchArray"),
}
#: The vlmetalayers that hold such a feature's payload, refused even without their metalayer
#: (with the metalayer whose payload they are).
VLMETA_KEYS: dict[str, str] = {
    "b2o": "b2o",
    "_LazyArray": "LazyArray",
    "estore_metadata": "b2embed",
}


def _vlmeta(core: FrameCore, name: str) -> dict[str, Any]:
    """The vlmetalayer ``name`` when it holds a map; ``{}`` when absent or anything else."""
    try:
        value = unpack_value(core.vlmeta_raw(name), name)
    except (KeyError, BloscpackError):
        return {}
    return value if isinstance(value, dict) else {}


def unmodelled(core: FrameCore) -> str | None:
    """What the open frame ``core`` is, when a metalayer or vlmetalayer of :data:`METALAYERS`
    or :data:`VLMETA_KEYS` says its chunks do not hold its data; None for an ordinary frame."""
    layers = dict(core.metalayers)
    found = next((name for name in METALAYERS if name in layers), None)
    if found is None:
        keys = {name for name, _ in core.vlmeta}
        found = next((VLMETA_KEYS[key] for key in VLMETA_KEYS if key in keys), None)
    if found is None:
        return None
    try:
        marker = unpack_value(layers[found], found) if found in layers else None
    except BloscpackError:
        marker = None
    return METALAYERS[found](core, marker)


def refuse_unmodelled(core: FrameCore) -> None:
    """Raise :class:`~bloscpack.errors.UnmodelledFeature` naming the frame and the feature when
    :func:`unmodelled` finds one."""
    feature = unmodelled(core)
    if feature is not None:
        error = UnmodelledFeature(f"{core.name}: {feature}")
        payload = _vlmeta(core, "b2o") if "b2o" in dict(core.metalayers) else {}
        if payload.get("kind") == "lazyexpr":
            error.lazy_expression = payload
        raise error
