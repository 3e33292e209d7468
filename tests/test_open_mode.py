"""``bloscpack.open(path, "r")``, as h5py and python-blosc2 are called: the second argument is
a read mode, and ``storage_options`` is given by name in every public function."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import bloscpack
from bloscpack.errors import ArgumentError, ReadOnlyError

ARRAY = np.arange(100, dtype=np.int32)


@pytest.fixture
def path(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.b2nd")
    return tmp_path / "a.b2nd"


@pytest.mark.parametrize("mode", ["r", "rb"])
def test_read_modes_open(path, mode):
    with bloscpack.open(path, mode) as array:
        np.testing.assert_array_equal(array[...], ARRAY)
    with bloscpack.open(path, mode=mode) as array:
        assert array.shape == (100,)


@pytest.mark.parametrize("mode", ["w", "wb", "a", "r+", "x", "w-", "R", ""])
def test_other_modes_are_refused_by_name(path, mode):
    with pytest.raises(ReadOnlyError) as raised:
        bloscpack.open(path, mode)
    assert str(raised.value) == (
        f"{path}: mode {mode!r}: containers are opened read-only (mode 'r' or 'rb'); write them"
        " with bloscpack.save or bloscpack.convert"
    )
    assert isinstance(raised.value, ArgumentError)


def test_settings_in_place_of_the_mode_say_storage_options(path):
    with pytest.raises(ReadOnlyError) as raised:
        bloscpack.open(path, {"anon": True})
    assert str(raised.value) == (
        f"{path}: the second argument of open() is the mode ('r'); pass the settings of the file"
        " system as storage_options={...}"
    )


def _takes_storage_options():
    found = []
    for name in bloscpack.__all__:
        value = getattr(bloscpack, name)
        if callable(value) and not isinstance(value, type):
            try:
                params = inspect.signature(value).parameters
            except (TypeError, ValueError):
                continue
            if "storage_options" in params:
                found.append(name)
    return sorted(found)


def test_the_functions_that_read_urls_are_all_checked():
    assert {"convert", "detect", "info", "load", "open", "read_table", "save", "to_dask",
            "verify"} <= set(_takes_storage_options())  # fmt: skip


@pytest.mark.parametrize("name", _takes_storage_options())
def test_storage_options_is_keyword_only(name):
    param = inspect.signature(getattr(bloscpack, name)).parameters["storage_options"]
    assert param.kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("name", ["load", "info", "verify", "detect"])
def test_a_second_positional_argument_is_refused(path, name):
    with pytest.raises(TypeError, match=r"takes 1 positional argument but 2 were given"):
        getattr(bloscpack, name)(path, "r")
