"""The exception tree of bloscpack.

Every error the library raises on bad input derives from :class:`BloscpackError`.  The names
bloscpack 0.16 exported (``ChecksumMismatch``, ``NotEnoughSpace``, ...) are kept, with their old
builtin bases, so that existing ``except`` clauses keep working.
"""

from __future__ import annotations


class BloscpackError(Exception):
    """Root of every error raised by bloscpack."""


# --- malformed or unsupported input -------------------------------------------------------


class FormatError(BloscpackError, ValueError):
    """The bytes do not follow the format they claim to be in."""


class TruncatedError(FormatError):
    """The input ends before a structure it announces."""


class ChunkError(FormatError):
    """A Blosc chunk is malformed (header, layout or stream sizes)."""


class InvalidCodePoint(FormatError):
    """Text (``U``) data holds a value that is no Unicode code point (above U+10FFFF)."""


class UnsupportedError(BloscpackError, ValueError):
    """The input is valid but uses a feature this installation cannot handle."""


class DataLossError(UnsupportedError):
    """Saving would silently drop part of what was given (a mask, coordinates, variables): the
    message says how to keep it, or how to accept the loss."""


class LazyChunkError(UnsupportedError):
    """A lazy chunk (bstarts plus a pointer into its frame) cannot be decoded on its own."""


class UnmodelledFeature(UnsupportedError):
    """The file uses a feature that changes what its bytes mean and that this library does not
    model (a python-blosc2 lazy expression, proxy cache or reference, an EmbedStore): it is
    refused by name rather than read around.

    ``lazy_expression``: a python-blosc2 lazy expression's stored payload, when that is the
    feature (``bloscpack.load(path, evaluate=True)`` evaluates it); ``array``: the
    ``(dtype, shape)`` its file says the result has, where the format says."""

    lazy_expression: dict | None = None
    array: tuple | None = None


class IntegrityError(BloscpackError, RuntimeError):
    """Decoded data does not match what the container recorded (sizes, checksums)."""


class FileChangedError(BloscpackError, RuntimeError):
    """The file was changed (appended to, edited) since it was opened: open it again."""

    @classmethod
    def since_opened(cls, name: str) -> FileChangedError:
        return cls(
            f"{name}: was changed (appended to or edited) since it was opened; open it again"
        )


class NotAContainer(FormatError):
    """The input is not in any format bloscpack recognises."""


class AttributeValueError(BloscpackError, TypeError):
    """A user attribute cannot be stored (JSON cannot represent it)."""


class ArgumentError(BloscpackError, ValueError, TypeError):
    """A function argument has an invalid value or type (out of range, wrong kind)."""


class ReadOnlyError(ArgumentError):
    """A mode other than reading was asked of a function that opens containers read-only
    (``bloscpack.open(path, "w")``)."""


class SelectionError(BloscpackError, IndexError):
    """An index selects nothing the array has: out of bounds, a mask of the wrong length, or a
    kind of index a lazy array does not take (the message says what to use instead)."""


# --- names kept from bloscpack 0.16 -------------------------------------------------------


class FileNotFound(BloscpackError, OSError):
    """A file named on input does not exist."""


class PermissionDenied(BloscpackError, PermissionError):
    """An output cannot be created where it goes: its directory is not writable."""


class RemoteError(BloscpackError, OSError):
    """A URL could not be read or written: not found, access denied, a server that ignores
    ``Range``, a truncated response, a connection refused or timed out."""


class NoSuchChecksum(BloscpackError, ValueError):
    """Unknown checksum name or id."""


class NoSuchCodec(BloscpackError, ValueError):
    """Unknown codec name or id."""


class UnwritableCodec(NoSuchCodec, UnsupportedError):
    """A codec that is read but cannot be written (snappy)."""


class NoSuchSerializer(BloscpackError, ValueError):
    """Unknown metadata serializer (magic format)."""


class ChunkSizeTypeSizeMismatch(BloscpackError, ValueError):
    """The chunk size is not a multiple of the array's item size."""


class ChunkingException(BloscpackError, ValueError):
    """Invalid chunking parameters (0.16 derived this from BaseException)."""


class ChecksumMismatch(IntegrityError):
    """A stored digest does not match the data."""


class FormatVersionMismatch(FormatError, RuntimeError):
    """The container's format version is not one bloscpack reads."""


class ChecksumLengthMismatch(FormatError, RuntimeError):
    """A digest has the wrong length for its checksum."""


class NoMetadataFound(BloscpackError, RuntimeError):
    """The container holds no metadata."""


class NoChangeInMetadata(BloscpackError, RuntimeError):
    """The new metadata equals the stored metadata."""


class MetadataSectionTooSmall(BloscpackError, RuntimeError):
    """The metadata does not fit in the space reserved for it."""


class NonUniformTypesize(BloscpackError, RuntimeError):
    """Chunks of one container disagree on their typesize."""


class NotEnoughSpace(BloscpackError, RuntimeError):
    """No preallocated offset slots are left for the chunks to append.  ``cli``: the message
    in the command line's terms (how to grow the file with ``blpk``), when the raiser knows
    it."""

    def __init__(self, message: str, cli: str | None = None) -> None:
        super().__init__(message)
        self.cli = cli or message


class NotAppendable(UnsupportedError):
    """The container's format cannot grow in place (a single Blosc chunk, say)."""


class NotANumpyArray(BloscpackError, RuntimeError):
    """The container does not hold a numpy array."""


class OutputExistsError(BloscpackError, FileExistsError):
    """The output path exists and replacing it was not asked for."""


class ObjectNumpyArrayRejection(BloscpackError, RuntimeError):
    """Object arrays cannot be stored (they would need pickling)."""


__all__ = [
    "ArgumentError",
    "AttributeValueError",
    "BloscpackError",
    "UnwritableCodec",
    "ChecksumLengthMismatch",
    "ChecksumMismatch",
    "ChunkError",
    "ChunkSizeTypeSizeMismatch",
    "ChunkingException",
    "DataLossError",
    "FileChangedError",
    "FileNotFound",
    "FormatError",
    "InvalidCodePoint",
    "PermissionDenied",
    "RemoteError",
    "SelectionError",
    "FormatVersionMismatch",
    "IntegrityError",
    "LazyChunkError",
    "MetadataSectionTooSmall",
    "NoChangeInMetadata",
    "NoMetadataFound",
    "NoSuchChecksum",
    "NoSuchCodec",
    "NoSuchSerializer",
    "NonUniformTypesize",
    "NotANumpyArray",
    "NotAContainer",
    "NotAppendable",
    "NotEnoughSpace",
    "OutputExistsError",
    "ObjectNumpyArrayRejection",
    "ReadOnlyError",
    "TruncatedError",
    "UnmodelledFeature",
    "UnsupportedError",
]
