"""How the package reads a column of texts (src/python/py_support.cc, arrow_texts.cc): Arrow arrays
through the PyCapsule interface without a copy, lists, numpy arrays and pandas Series.

_native._read_texts(x) returns (texts, addresses, arrays): the texts as the engine sees them (None where
null), the address each of its views points at, and how many Arrow arrays were read."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from infercost import _native

read = _native._read_texts
VALUES = ["a", "bb", None, "Ünïcödé 中文 🙂", "", "twelve bytes", "thirteen byte", None, "x" * 40]


def offsets_of(arr):
    width = 8 if pa.types.is_large_string(arr.type) else 4
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=np.int32 if width == 4 else np.int64)


def expected_addresses(arr):
    """Where each row's bytes are in the array's own data buffer (0 for null)."""
    data = arr.buffers()[2].address
    offsets = offsets_of(arr)
    return [0 if not arr[i].is_valid else data + int(offsets[arr.offset + i]) for i in range(len(arr))]


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()], ids=["string", "large_string"])
def test_arrow_strings_zero_copy(type_):
    arr = pa.array(VALUES, type=type_)
    texts, addresses, arrays = read(arr)
    assert texts == VALUES and arrays == 1
    assert addresses == expected_addresses(arr)


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()], ids=["string", "large_string"])
def test_sliced_arrays(type_):
    arr = pa.array(VALUES, type=type_).slice(2, 5)
    assert arr.offset == 2
    texts, addresses, _ = read(arr)
    assert texts == VALUES[2:7]
    assert addresses == expected_addresses(arr)


def test_string_view_arrays():
    arr = pa.array(VALUES, type=pa.string_view())
    texts, addresses, _ = read(arr)
    assert texts == VALUES
    buffers = arr.buffers()
    views = np.frombuffer(buffers[1], dtype=np.int32).reshape(-1, 4)  # length, prefix, buffer, offset
    for i, value in enumerate(VALUES):
        if value is None:
            continue
        if len(value.encode()) <= 12:  # inside its own 16-byte view, after the length
            assert addresses[i] == buffers[1].address + 16 * i + 4, value
        else:  # in a data buffer
            assert addresses[i] == buffers[2 + int(views[i, 2])].address + int(views[i, 3]), value
    assert sum(1 for v in VALUES if v is not None and len(v.encode()) > 12) >= 2
    assert read(arr.slice(3, 4))[0] == VALUES[3:7]


def test_nulls_with_and_without_a_validity_bitmap():
    with_nulls = pa.array(["a", None, "c"])
    assert with_nulls.buffers()[0] is not None
    assert read(with_nulls)[0] == ["a", None, "c"]
    without = pa.array(["a", "b", "c"])
    assert without.buffers()[0] is None
    assert read(without)[0] == ["a", "b", "c"]
    # A bitmap past the first byte, read at an offset that is not a multiple of 8.
    many = pa.array([None if i % 3 == 0 else str(i) for i in range(30)])
    assert read(many.slice(5, 20))[0] == [None if i % 3 == 0 else str(i) for i in range(5, 25)]


def test_all_null_and_empty_arrays():
    assert read(pa.array([None, None]))[0] == [None, None]  # Arrow's null type
    assert read(pa.array([], type=pa.string())) == ([], [], 1)
    assert read(pa.chunked_array([], type=pa.large_string()))[0] == []


def test_chunked_arrays():
    chunked = pa.chunked_array([["a", None], ["b"], ["c", "d", None]], type=pa.string())
    texts, addresses, arrays = read(chunked)
    assert texts == ["a", None, "b", "c", "d", None]
    assert arrays == 3
    expected = []
    for chunk in chunked.chunks:
        expected += expected_addresses(chunk)
    assert addresses == expected


def test_long_strings():
    long = ["é" * 50_000, "y" * 100_000]  # 100 KB each
    arr = pa.array(long, type=pa.large_string())
    texts, addresses, _ = read(arr)
    assert texts == long
    assert addresses == expected_addresses(arr)


class ArrayOnly:
    """An object with only __arrow_c_array__ (as some producers have)."""

    def __init__(self, arr):
        self.arr = arr

    def __arrow_c_array__(self, requested_schema=None):
        return self.arr.__arrow_c_array__(requested_schema)


def test_arrow_c_array_without_a_stream():
    arr = pa.array(VALUES).slice(1, 6)
    texts, addresses, arrays = read(ArrayOnly(arr))
    assert texts == VALUES[1:7] and arrays == 1
    assert addresses == expected_addresses(arr)


@pytest.mark.parametrize("arr,format_", [
    (pa.array([1, 2, 3]), "'l'"),
    (pa.array([b"x"], type=pa.binary()), "'z'"),
    (pa.array(["a", "b", "a"]).dictionary_encode(), "dictionary"),
    (pa.table({"t": ["a"]}), "struct"),
    (pa.array([["a"]]), r"'\+l'"),
])
def test_other_arrow_types_are_type_errors(arr, format_):
    with pytest.raises(TypeError, match=format_):
        read(arr)


def test_invalid_utf8_in_arrow_reaches_the_engine_as_bytes():
    bad = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(np.array([0, 2], np.int32)),
                                                  pa.py_buffer(b"\xff\xfe")])
    with pytest.raises(UnicodeDecodeError):  # the test helper decodes; the engine gets the bytes
        read(bad)


def test_lists_and_tuples():
    assert read(["a", None, "ü"])[0] == ["a", None, "ü"]
    assert read(("a", "b"))[0] == ["a", "b"]
    assert read([]) == ([], [], 0)
    assert read([float("nan"), pd.NA, "z"])[0] == [None, None, "z"]  # pandas' missing values


@pytest.mark.parametrize("bad,match", [
    ([1, "a"], r"texts\[0\]: expected str or None, got int"),
    (["a", b"b"], r"texts\[1\]: expected str or None, got bytes"),
    ("one text", "single str"),
    (b"bytes", "single str"),
    (42, "got int"),
    ({"a": 1}, "got dict"),
    (np.array([["a", "b"]]), "1-D"),
])
def test_other_inputs_are_type_errors(bad, match):
    with pytest.raises(TypeError, match=match):
        read(bad)


def test_lone_surrogates_are_value_errors():
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        read(["fine", "\ud800"])


def test_numpy_arrays():
    assert read(np.array(["a", "bé", ""]))[0] == ["a", "bé", ""]
    assert read(np.array(["a", None, "c"], dtype=object))[0] == ["a", None, "c"]
    assert read(np.array([], dtype=str))[0] == []


def test_pandas_series():
    assert read(pd.Series(["a", None, "c"], dtype=object))[0] == ["a", None, "c"]
    assert read(pd.Series(["a", np.nan, "c"]))[0] == ["a", None, "c"]
    assert read(pd.Series(["x", None, "y"], dtype="string"))[0] == ["x", None, "y"]
    arrow_backed = pd.Series(pa.chunked_array([["p", None], ["q"]]), dtype=pd.ArrowDtype(pa.string()))
    assert read(arrow_backed)[0] == ["p", None, "q"]


def test_a_million_rows():
    arr = pa.array([f"row {i}" for i in range(1_000_000)])
    texts, addresses, _ = read(arr)
    assert len(texts) == 1_000_000 and texts[999_999] == "row 999999"
    assert addresses[0] == arr.buffers()[2].address
