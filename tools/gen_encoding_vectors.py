#!/usr/bin/env python3
"""Writes tests/data_files/parquet/encodings/vectors.json: raw Parquet value
encodings produced by pyarrow, with the values they encode, for
tests/parquet/encoding_test.cc.

Each case writes a one-column table (a required column, so a v1 data page
holds no levels: the page body is exactly the encoded values) with
use_dictionary=False, compression NONE and the encoding under test. The
script skips the Thrift-compact PageHeader at data_page_offset, checks the
page's encoding and value count, and stores the body as hex.

JSON: {"pyarrow": version, "cases": [{"name", "encoding", "type", "width"
(FIXED_LEN_BYTE_ARRAY only), "count", "data_hex", and "ints" (list of ints)
or "strings_hex" (list of hex strings) or "plain_hex" (the PLAIN bytes of
the values, for BYTE_STREAM_SPLIT)}]}.

Deterministic (fixed seed). Run: python3 tools/gen_encoding_vectors.py
Python is for generating this file only; infercost never runs it.
"""

import io
import json
import os
import random
import struct

import pyarrow as pa
import pyarrow.parquet as pq

from parquet_oracle import Compact

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data_files", "parquet",
                   "encodings", "vectors.json")

ENCODING_IDS = {"PLAIN": 0, "RLE": 3, "DELTA_BINARY_PACKED": 5, "DELTA_LENGTH_BYTE_ARRAY": 6, "DELTA_BYTE_ARRAY": 7,
                "BYTE_STREAM_SPLIT": 9, "RLE_DICTIONARY": 8}


def page_body(table, encoding):
    buf = io.BytesIO()
    if encoding == "RLE_DICTIONARY":
        pq.write_table(table, buf, use_dictionary=True, compression="NONE", data_page_version="1.0",
                       write_statistics=False)
    else:
        pq.write_table(table, buf, use_dictionary=False, compression="NONE", column_encoding={"col": encoding},
                       data_page_version="1.0", write_statistics=False)
    raw = buf.getvalue()
    col = pq.ParquetFile(io.BytesIO(raw)).metadata.row_group(0).column(0)
    start = col.data_page_offset
    reader = Compact(raw, start)
    header = reader.struct()
    assert header[1] == 0, "expected a v1 DATA_PAGE"
    size = header[3]
    assert header[2] == size, "uncompressed"
    dph = header[5]
    assert dph[1] == table.num_rows, "one page holds every value"
    assert dph[2] == ENCODING_IDS[encoding], f"page encoding {dph[2]}, wanted {encoding}"
    chunk_start = col.dictionary_page_offset if col.has_dictionary_page else start
    assert reader.p + size == chunk_start + col.total_compressed_size, "exactly one data page"
    return raw[reader.p:reader.p + size]


def int_case(rng_values, name, encoding, arrow_type, physical):
    table = pa.table({"col": pa.array(rng_values, type=arrow_type)},
                     schema=pa.schema([pa.field("col", arrow_type, nullable=False)]))
    return {"name": name, "encoding": encoding, "type": physical, "count": len(rng_values),
            "data_hex": page_body(table, encoding).hex(), "ints": rng_values}


def string_case(values, name, encoding):
    table = pa.table({"col": pa.array(values, type=pa.binary())},
                     schema=pa.schema([pa.field("col", pa.binary(), nullable=False)]))
    return {"name": name, "encoding": encoding, "type": "BYTE_ARRAY", "count": len(values),
            "data_hex": page_body(table, encoding).hex(), "strings_hex": [v.hex() for v in values]}


def split_case(values, name, arrow_type, physical, fmt_char=None, width=None):
    table = pa.table({"col": pa.array(values, type=arrow_type)},
                     schema=pa.schema([pa.field("col", arrow_type, nullable=False)]))
    if fmt_char:
        plain = b"".join(struct.pack("<" + fmt_char, v) for v in values)
        width = struct.calcsize(fmt_char)
    else:
        plain = b"".join(values)
    return {"name": name, "encoding": "BYTE_STREAM_SPLIT", "type": physical, "width": width, "count": len(values),
            "data_hex": page_body(table, "BYTE_STREAM_SPLIT").hex(), "plain_hex": plain.hex()}


def main():
    rng = random.Random(20240611)
    i32_min, i32_max = -(2**31), 2**31 - 1
    i64_min, i64_max = -(2**63), 2**63 - 1

    i32 = [rng.randint(i32_min, i32_max) for _ in range(300)]
    i32[10:14] = [i32_min, i32_max, i32_min, 0]  # deltas that wrap in 32 bits
    i32[200:203] = [i32_max, i32_min, i32_max]
    i64 = [rng.randint(i64_min, i64_max) for _ in range(200)]
    i64[5:9] = [i64_min, i64_max, i64_min, -1]
    i64[150:152] = [i64_max, i64_min]
    sorted_ids = sorted(rng.randint(0, 10**6) for _ in range(1000))
    small64 = [rng.randint(-50, 50) for _ in range(77)]

    cases = [
        int_case(i32, "dbp_int32_random_extremes", "DELTA_BINARY_PACKED", pa.int32(), "INT32"),
        int_case(sorted_ids, "dbp_int32_sorted_1000", "DELTA_BINARY_PACKED", pa.int32(), "INT32"),
        int_case([7], "dbp_int32_single", "DELTA_BINARY_PACKED", pa.int32(), "INT32"),
        int_case([-5, 7], "dbp_int32_two", "DELTA_BINARY_PACKED", pa.int32(), "INT32"),
        int_case(i64, "dbp_int64_random_extremes", "DELTA_BINARY_PACKED", pa.int64(), "INT64"),
        int_case([123456789012] * 500, "dbp_int64_constant", "DELTA_BINARY_PACKED", pa.int64(), "INT64"),
        int_case(small64, "dbp_int64_small_77", "DELTA_BINARY_PACKED", pa.int64(), "INT64"),
    ]

    words = ["", "a", "", "héllo wörld", "日本語テキスト", "emoji \U0001F600 end", "x" * 300, "x" * 300 + "y",
             "x" * 299, "prefix/shared/path/" + "z" * 40, "prefix/shared/path/" + "z" * 41 + "tail", ""]
    rand_strings = ["".join(rng.choice("abcdeé日") for _ in range(rng.randint(0, 20))) for _ in range(150)]
    strings = [w.encode("utf-8") for w in words + rand_strings]
    sorted_urls = sorted(f"https://example.com/users/{rng.randint(0, 99999):05d}/status/{rng.randint(0, 10**12)}"
                         .encode() for _ in range(200))
    cases += [
        string_case(strings, "dlba_mixed", "DELTA_LENGTH_BYTE_ARRAY"),
        string_case([b""] * 40, "dlba_all_empty", "DELTA_LENGTH_BYTE_ARRAY"),
        string_case(strings, "dba_mixed", "DELTA_BYTE_ARRAY"),
        string_case(sorted_urls, "dba_sorted_urls", "DELTA_BYTE_ARRAY"),
    ]

    floats = [struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0] for _ in range(100)]
    floats[:4] = [0.0, -0.0, float("inf"), 1.5]
    doubles = [rng.uniform(-1e300, 1e300) for _ in range(100)]
    doubles[:3] = [-0.0, float("-inf"), 2.5e-308]
    flba = [bytes(rng.randrange(256) for _ in range(3)) for _ in range(33)]
    cases += [
        split_case(floats, "bss_float", pa.float32(), "FLOAT", "f"),
        split_case(doubles, "bss_double", pa.float64(), "DOUBLE", "d"),
        split_case([rng.randint(i32_min, i32_max) for _ in range(50)], "bss_int32", pa.int32(), "INT32", "i"),
        split_case([rng.randint(i64_min, i64_max) for _ in range(50)], "bss_int64", pa.int64(), "INT64", "q"),
        split_case(flba, "bss_flba3", pa.binary(3), "FIXED_LEN_BYTE_ARRAY", width=3),
    ]

    # Dictionary indices (first-occurrence order, as Arrow assigns them):
    # the page body is one bit-width byte, then the RLE/bit-packed hybrid.
    palette = [f"label{k}" for k in range(37)]
    seq = []
    while len(seq) < 2000:
        word = rng.choice(palette[:rng.choice([2, 37])])
        seq += [word] * rng.choice([1, 1, 2, 3, 9, 30])
    seq = seq[:2000]
    order = {}
    indices = [order.setdefault(w, len(order)) for w in seq]
    table = pa.table({"col": pa.array(seq, type=pa.string())},
                     schema=pa.schema([pa.field("col", pa.string(), nullable=False)]))
    cases.append({"name": "rle_dict_indices", "encoding": "RLE_DICTIONARY", "type": "INT32", "count": len(seq),
                  "data_hex": page_body(table, "RLE_DICTIONARY").hex(), "ints": indices})
    # Booleans under RLE in a v1 page: a 4-byte length, then the hybrid at width 1.
    bools = []
    while len(bools) < 1500:
        bools += [rng.random() < 0.5] * rng.choice([1, 2, 5, 8, 20, 100])
    bools = bools[:1500]
    table = pa.table({"col": pa.array(bools, type=pa.bool_())},
                     schema=pa.schema([pa.field("col", pa.bool_(), nullable=False)]))
    cases.append({"name": "rle_booleans", "encoding": "RLE", "type": "BOOLEAN", "count": len(bools),
                  "data_hex": page_body(table, "RLE").hex(), "ints": [int(b) for b in bools]})

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"pyarrow": pa.__version__, "cases": cases}, f, indent=0)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.normpath(OUT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
