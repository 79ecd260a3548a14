#!/usr/bin/env python3
"""Writes the Parquet compatibility fixtures and their expected values.

Output: tests/data_files/parquet/compat/*.parquet and expected.json, read by
tests/parquet/roundtrip_test.cc. Files come from pyarrow (every codec, data
page v1/v2, dictionary on/off/fallback, DELTA_* and BYTE_STREAM_SPLIT
encodings, nulls, many row groups and pages, page CRCs, large_string,
legacy format 1.0, Spark flavour with INT96, a nested column), DuckDB and
pandas.

expected.json holds, per file, per leaf column: the physical type, codec and
encodings (from pyarrow's view of the footer), the page types and page
encodings found by walking the page headers (a check that each fixture really
exercises what its name says), the null positions and (by values_id into
value_sets, shared between files of the same table) every value in the JSON
form of infercost::parquet::append_value_json: strings as JSON strings
(binary that is not UTF-8: one code point per byte, as \\u00XX escapes
decode), integers as numbers (unsigned honoured, DATE/TIMESTAMP raw),
floats as numbers (NaN/Infinity/-Infinity as strings), INT96 as 24 hex
digits, booleans as true/false, null as null.

Deterministic: running it twice gives the same files (created_by aside, which
names the library versions). Usage: python3 tools/gen_parquet_fixtures.py
[--out DIR]
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import struct
import sys

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from parquet_oracle import Compact, int96_hex, render_bytes, render_float

ROWS = 300

# ---------------------------------------------------------------------------
# Input data


def make_texts(rng, n):
    words = ["hello", "world", "parquet", "tweet", "#infercost", "@user_42", "https://t.co/AbC123",
             "café", "naïve", "Ünïcödé", "日本語", "中文字符", "한국어", "😀", "🚀🔥", "👩‍💻",
             "quote\"inside", "back\\slash", "tab\there", "new\nline", "ctrl\x01char", "ß", "Ω≈ç√",
             "x" * 40]
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.05:
            out.append("")  # empty, not null
        elif r < 0.10:
            out.append(words[i % len(words)])
        else:
            k = 1 + int(rng.random() * rng.random() * 30)
            out.append(" ".join(rng.choice(words) for _ in range(k)))
    return out


def base_table(seed=1, n=ROWS, null_every=7):
    """A table of every flat type the reader renders, with nulls."""
    rng = random.Random(seed)
    texts = make_texts(rng, n)
    text_nullable = [None if i % null_every == 3 else t for i, t in enumerate(texts)]
    i32 = [None if i % 11 == 5 else rng.randint(-2**31, 2**31 - 1) for i in range(n)]
    i32[0] = -2**31
    i32[1] = 2**31 - 1
    i64 = [rng.randint(-2**63, 2**63 - 1) if i % 5 else i * 1000 for i in range(n)]
    i64[2] = -2**63
    i64[3] = 2**63 - 1
    specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 5e-324, 1.7976931348623157e308,
                0.1, 1 / 3]
    dbl = [specials[i % len(specials)] if i % 10 == 0 else rng.uniform(-1e6, 1e6) for i in range(n)]
    dbl = [None if i % 13 == 6 else v for i, v in enumerate(dbl)]
    flt = [float("nan") if i == 9 else (None if i % 17 == 8 else rng.uniform(-100, 100)) for i in range(n)]
    flt[10] = float("inf")
    flt[11] = 3.4028234663852886e38
    flt[12] = 1e-45
    boolean = [None if i % 9 == 4 else (rng.random() < 0.4) for i in range(n)]
    cols = {
        "id": pa.array(range(n), pa.int64()),
        "text": pa.array(text_nullable, pa.string()),
        "text_req": pa.array(texts, pa.string()),
        "i32": pa.array(i32, pa.int32()),
        "i64": pa.array(i64, pa.int64()),
        "f32": pa.array(flt, pa.float32()),
        "f64": pa.array(dbl, pa.float64()),
        "flag": pa.array(boolean, pa.bool_()),
        "all_null": pa.array([None] * n, pa.string()),
        "category": pa.array([None if i % 23 == 0 else ["red", "green", "blue", "ünï"][i % 4] for i in range(n)],
                             pa.string()),
    }
    fields = [pa.field(k, v.type, nullable=(k not in ("id", "text_req"))) for k, v in cols.items()]
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))


def logical_table(seed=2, n=120):
    """Logical types over INT32/INT64/BYTE_ARRAY/FLBA, unsigned ints, binary."""
    rng = random.Random(seed)
    epoch = datetime.datetime(1970, 1, 1)
    cols = {
        "u8": pa.array([rng.randint(0, 255) for _ in range(n)], pa.uint8()),
        "i8": pa.array([rng.randint(-128, 127) for _ in range(n)], pa.int8()),
        "i16": pa.array([rng.randint(-2**15, 2**15 - 1) for _ in range(n)], pa.int16()),
        "u32": pa.array([2**32 - 1 if i == 0 else rng.randint(0, 2**32 - 1) for i in range(n)], pa.uint32()),
        "u64": pa.array([2**64 - 1 if i == 0 else (None if i % 8 == 1 else rng.randint(0, 2**64 - 1))
                         for i in range(n)], pa.uint64()),
        "day": pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-20000, 30000))
                         for _ in range(n)], pa.date32()),
        "ts_us": pa.array([epoch + datetime.timedelta(microseconds=rng.randint(-2**50, 2**50)) for _ in range(n)],
                          pa.timestamp("us")),
        "ts_ms_utc": pa.array([rng.randint(-2**40, 2**40) for _ in range(n)], pa.timestamp("ms", tz="UTC")),
        "blob": pa.array([bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 6))) if i % 3 else b"ascii"
                          for i in range(n)], pa.binary()),
        "fixed4": pa.array([("%04d" % rng.randint(0, 9999)).encode() for _ in range(n)], pa.binary(4)),
        "big_text": pa.array([None if i % 10 == 0 else "large_string ☃ %d" % i for i in range(n)],
                             pa.large_string()),
        "big_blob": pa.array([b"lb%d" % i for i in range(n)], pa.large_binary()),
    }
    return pa.table(cols)


# ---------------------------------------------------------------------------
CODECS = {0: "UNCOMPRESSED", 1: "SNAPPY", 2: "GZIP", 3: "LZO", 4: "BROTLI", 5: "LZ4", 6: "ZSTD", 7: "LZ4_RAW"}


def footer_codecs(data):
    """codecs[row_group][column] as the footer's Thrift spells them (pyarrow
    reports LZ4_RAW as "LZ4", hiding the difference)."""
    (length,) = struct.unpack_from("<I", data, len(data) - 8)
    footer = Compact(data, len(data) - 8 - length).struct()
    return [[CODECS[cc[3][4]] for cc in rg[1]] for rg in footer[4]]


PAGE_TYPES = {0: "DATA_PAGE", 1: "INDEX_PAGE", 2: "DICTIONARY_PAGE", 3: "DATA_PAGE_V2"}
ENCODINGS = {0: "PLAIN", 2: "PLAIN_DICTIONARY", 3: "RLE", 4: "BIT_PACKED", 5: "DELTA_BINARY_PACKED",
             6: "DELTA_LENGTH_BYTE_ARRAY", 7: "DELTA_BYTE_ARRAY", 8: "RLE_DICTIONARY", 9: "BYTE_STREAM_SPLIT"}


def walk_pages(data, chunk):
    """Page types, data page encodings and CRC presence of one column chunk."""
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    if chunk.has_dictionary_page and chunk.dictionary_page_offset == 0:
        start = chunk.data_page_offset  # some writers leave 0 for "absent"
    end = start + chunk.total_compressed_size
    pos, pages = start, []
    values = 0
    while pos < end and values < chunk.num_values:
        c = Compact(data, pos)
        h = c.struct()
        ptype = PAGE_TYPES[h[1]]
        enc = None
        if 5 in h:
            enc = ENCODINGS[h[5][2]]
            values += h[5][1]
        if 8 in h:
            enc = ENCODINGS[h[8][4]]
            values += h[8][1]
        if 7 in h:
            enc = ENCODINGS[h[7][2]]
        pages.append((ptype, enc, 4 in h))
        pos = c.p + h[3]
    return pages


# ---------------------------------------------------------------------------
# Expected values


def expected_values(physical, arrow_array):
    arr = arrow_array
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if physical == "INT96":
        raw = arr.cast(pa.timestamp("ns")).cast(pa.int64()).to_pylist()
        return [None if v is None else int96_hex(v) for v in raw]
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        arr = arr.cast(pa.int64() if t.bit_width == 64 else pa.int32())
    out = []
    for v in arr.to_pylist():
        if v is None:
            out.append(None)
        elif physical in ("FLOAT", "DOUBLE"):
            out.append(render_float(v))
        elif physical == "BOOLEAN":
            out.append(bool(v))
        elif physical in ("INT32", "INT64"):
            out.append(int(v))
        elif isinstance(v, (bytes, bytearray)):
            out.append(render_bytes(bytes(v)))
        else:
            out.append(str(v))
    return out


def describe(path, features, producer, value_sets):
    """Expected-value record for one file, read back with pyarrow."""
    pf = pq.ParquetFile(path)
    md = pf.metadata
    with open(path, "rb") as f:
        data = f.read()
    schema = pf.schema
    flat_names = {schema.column(i).path for i in range(len(schema)) if schema.column(i).max_repetition_level == 0
                  and "." not in schema.column(i).path}
    table = pq.read_table(path, columns=sorted({p.split(".")[0] for p in flat_names}), use_threads=False) \
        if flat_names else None
    raw_codecs = footer_codecs(data)
    columns = []
    for i in range(len(schema)):
        col = schema.column(i)
        codecs, encodings, page_types, page_encodings = set(), set(), {}, set()
        crc_pages = 0
        for rg in range(md.num_row_groups):
            cc = md.row_group(rg).column(i)
            codecs.add(raw_codecs[rg][i])
            encodings.update(cc.encodings)
            for ptype, enc, has_crc in walk_pages(data, cc):
                page_types[ptype] = page_types.get(ptype, 0) + 1
                if enc and ptype != "DICTIONARY_PAGE":
                    page_encodings.add(enc)
                crc_pages += has_crc
        rec = {
            "name": col.path,
            "physical_type": col.physical_type,
            "logical_type": str(col.logical_type),
            "codecs": sorted(codecs),
            "encodings": sorted(encodings),
            "page_types": page_types,
            "data_page_encodings": sorted(page_encodings),
            "pages_with_crc": crc_pages,
            "max_definition_level": col.max_definition_level,
            "max_repetition_level": col.max_repetition_level,
        }
        flat = col.path in flat_names
        rec["flat"] = flat
        if flat:
            values = expected_values(col.physical_type, table.column(col.path))
            rec["num_rows"] = len(values)
            rec["null_positions"] = [k for k, v in enumerate(values) if v is None]
            # Identical value lists (the same table in many files) are
            # stored once, in value_sets, to keep expected.json small.
            key = hashlib.sha1(json.dumps(values, ensure_ascii=False).encode()).hexdigest()[:12]
            value_sets.setdefault(key, values)
            rec["values_id"] = key
        columns.append(rec)
    return {
        "producer": producer,
        "created_by": md.created_by,
        "features": features,
        "num_rows": md.num_rows,
        "num_row_groups": md.num_row_groups,
        "format_version": md.format_version,
        "columns": columns,
    }


# ---------------------------------------------------------------------------
# The fixtures


def pyarrow_fixtures():
    """(name, table, write_table kwargs, features, checks). checks maps a column
    to the encodings / page types it must show (asserted after writing)."""
    base = base_table()
    small = base_table(seed=3, n=60)
    out = []
    for codec, name in [("NONE", "none"), ("SNAPPY", "snappy"), ("GZIP", "gzip"), ("ZSTD", "zstd"),
                        ("LZ4", "lz4raw"), ("BROTLI", "brotli")]:
        for v in ("1.0", "2.0"):
            tag = "v1" if v == "1.0" else "v2"
            tbl = base if (codec, v) in (("SNAPPY", "1.0"), ("ZSTD", "2.0")) else small
            out.append(("pa_%s_%s.parquet" % (name, tag), tbl,
                        dict(compression=codec, data_page_version=v),
                        "pyarrow, codec %s, data page %s, dictionary on" % (codec, v),
                        {"text": {"page": "DATA_PAGE" if v == "1.0" else "DATA_PAGE_V2"}}))
    for v in ("1.0", "2.0"):
        tag = "v1" if v == "1.0" else "v2"
        out.append(("pa_plain_%s.parquet" % tag, base,
                    dict(compression="SNAPPY", data_page_version=v, use_dictionary=False),
                    "dictionary off (PLAIN everywhere), data page %s" % v,
                    {"text": {"data_enc": ["PLAIN"]}, "i64": {"data_enc": ["PLAIN"]}}))
        out.append(("pa_dict_fallback_%s.parquet" % tag, base,
                    dict(compression="SNAPPY", data_page_version=v, dictionary_pagesize_limit=512,
                         write_batch_size=16, data_page_size=512),
                    "dictionary falls back to PLAIN mid-chunk (dictionary_pagesize_limit=512), many pages, "
                    "data page %s" % v,
                    {"text": {"data_enc": ["PLAIN", "RLE_DICTIONARY"]},
                     "text_req": {"data_enc": ["PLAIN", "RLE_DICTIONARY"]}}))
        out.append(("pa_delta_%s.parquet" % tag, base,
                    dict(compression="ZSTD", data_page_version=v, use_dictionary=False,
                         column_encoding={"text": "DELTA_BYTE_ARRAY", "text_req": "DELTA_LENGTH_BYTE_ARRAY",
                                          "category": "DELTA_LENGTH_BYTE_ARRAY", "all_null": "DELTA_BYTE_ARRAY",
                                          "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED",
                                          "id": "DELTA_BINARY_PACKED"},
                         write_batch_size=50, data_page_size=1024),
                    "DELTA_BYTE_ARRAY / DELTA_LENGTH_BYTE_ARRAY strings, DELTA_BINARY_PACKED ints "
                    "(extremes of int32/int64), several pages, data page %s" % v,
                    {"text": {"data_enc": ["DELTA_BYTE_ARRAY"]},
                     "text_req": {"data_enc": ["DELTA_LENGTH_BYTE_ARRAY"]},
                     "i32": {"data_enc": ["DELTA_BINARY_PACKED"]}, "i64": {"data_enc": ["DELTA_BINARY_PACKED"]}}))
        out.append(("pa_bss_%s.parquet" % tag, base,
                    dict(compression="NONE", data_page_version=v, use_dictionary=False,
                         column_encoding={"f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT",
                                          "i32": "BYTE_STREAM_SPLIT", "i64": "BYTE_STREAM_SPLIT"}),
                    "BYTE_STREAM_SPLIT floats, doubles, int32, int64, data page %s" % v,
                    {"f32": {"data_enc": ["BYTE_STREAM_SPLIT"]}, "f64": {"data_enc": ["BYTE_STREAM_SPLIT"]},
                     "i32": {"data_enc": ["BYTE_STREAM_SPLIT"]}}))
    out.append(("pa_row_groups.parquet", base,
                dict(compression="SNAPPY", row_group_size=37),
                "9 row groups of 37 rows (batches cross row-group boundaries)", {}))
    out.append(("pa_many_pages_crc_v1.parquet", base,
                dict(compression="GZIP", data_page_size=128, write_batch_size=5, write_page_checksum=True,
                     row_group_size=100),
                "tiny pages (data_page_size=128, write_batch_size=5), page CRCs, 3 row groups, v1",
                {"text": {"crc": True}}))
    out.append(("pa_many_pages_crc_v2.parquet", base,
                dict(compression="SNAPPY", data_page_version="2.0", data_page_size=128, write_batch_size=5,
                     write_page_checksum=True, use_dictionary=["category"]),
                "tiny pages, page CRCs, data page 2.0, dictionary only on 'category'",
                {"text": {"crc": True, "page": "DATA_PAGE_V2"}}))
    out.append(("pa_logical_types.parquet", logical_table(),
                dict(compression="SNAPPY", store_schema=False),
                "uint8/int8/int16/uint32/uint64, DATE, TIMESTAMP(us) and (ms, UTC), binary with non-UTF-8 "
                "bytes, FIXED_LEN_BYTE_ARRAY(4), large_string, large_binary", {}))
    out.append(("pa_logical_types_v2_bss.parquet", logical_table(seed=5),
                dict(compression="ZSTD", data_page_version="2.0", use_dictionary=False,
                     column_encoding={"fixed4": "BYTE_STREAM_SPLIT", "u32": "DELTA_BINARY_PACKED",
                                      "u64": "DELTA_BINARY_PACKED", "big_text": "DELTA_BYTE_ARRAY"}),
                "logical types, BYTE_STREAM_SPLIT on FIXED_LEN_BYTE_ARRAY, DELTA on unsigned, v2",
                {"fixed4": {"data_enc": ["BYTE_STREAM_SPLIT"]}}))
    # A parquet-mr 1.x-like shape: format 1.0, PLAIN_DICTIONARY, v1 pages,
    # no Arrow schema in the footer.
    out.append(("pa_legacy_format_1_0.parquet", base,
                dict(compression="SNAPPY", version="1.0", store_schema=False, row_group_size=150),
                "format version 1.0 (PLAIN_DICTIONARY, as parquet-mr 1.x writes), no ARROW:schema", {}))
    # Spark-like: flavor='spark' (sanitized names), INT96 timestamps.
    spark = pa.table({
        "user id": pa.array(range(50), pa.int64()),
        "created at": pa.array([datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=9999 * i + 0.123456)
                                if i % 6 else None for i in range(50)], pa.timestamp("us")),
        "full_text": pa.array(["spark row %d ✓" % i for i in range(50)], pa.string()),
    })
    out.append(("pa_spark_flavor_int96.parquet", spark,
                dict(compression="SNAPPY", flavor="spark"),
                "flavor='spark': sanitized column names, INT96 timestamps", {"created_at": {"type": "INT96"}}))
    # A nested column beside flat ones: the reader refuses the nested one and
    # reads the others.
    nested = pa.table({
        "id": pa.array(range(40), pa.int32()),
        "tags": pa.array([["a", "b"] if i % 3 else [] for i in range(40)], pa.list_(pa.string())),
        "point": pa.array([{"x": i, "y": -i} for i in range(40)],
                          pa.struct([("x", pa.int64()), ("y", pa.int64())])),
        "full_text": pa.array(["nested neighbour %d" % i for i in range(40)], pa.string()),
    })
    out.append(("pa_nested_compliant.parquet", nested,
                dict(compression="SNAPPY", use_compliant_nested_type=True),
                "list<string> (compliant 3-level) and struct beside flat columns: nested leaves are "
                "kUnsupported, flat ones read", {}))
    return out


def check(name, path, checks):
    md = pq.ParquetFile(path).metadata
    schema = pq.ParquetFile(path).schema
    with open(path, "rb") as f:
        data = f.read()
    for col, want in checks.items():
        idx = [schema.column(i).path for i in range(len(schema))].index(col)
        pages = []
        for rg in range(md.num_row_groups):
            pages += walk_pages(data, md.row_group(rg).column(idx))
        data_enc = sorted({e for t, e, _ in pages if t != "DICTIONARY_PAGE"})
        if "data_enc" in want:
            assert data_enc == sorted(want["data_enc"]), (name, col, data_enc)
        if "page" in want:
            assert {t for t, _, _ in pages if t != "DICTIONARY_PAGE"} == {want["page"]}, (name, col, pages)
        if want.get("crc"):
            assert all(c for _, _, c in pages), (name, col)
        if "type" in want:
            assert schema.column(idx).physical_type == want["type"], (name, col)


def duckdb_fixtures(out_dir):
    con = duckdb.connect()
    con.execute("""
        CREATE TABLE t AS
        SELECT i AS id,
               CASE WHEN i % 7 = 3 THEN NULL
                    WHEN i % 19 = 0 THEN ''
                    ELSE 'duck ' || i || ' ' || repeat('🦆', i % 4) || ' café ' || (i * 7919 % 1000) END AS txt,
               (i * 2654435761) % 4294967296 - 2147483648 AS i64,
               CAST(i % 100 - 50 AS INTEGER) AS i32,
               CASE WHEN i % 10 = 0 THEN NULL ELSE i / 7.0 END AS dbl,
               CAST(i / 3.0 AS FLOAT) AS flt,
               i % 3 = 0 AS flag,
               CAST(i AS UTINYINT) AS u8,
               CAST(i * 1000003 AS UBIGINT) + 9223372036854775807 AS u64,
               DATE '2000-01-01' + CAST(i AS INTEGER) AS day,
               TIMESTAMP '2020-02-29 12:00:00' + INTERVAL (i * 1001) SECOND AS ts,
               ['red', 'green', 'blue'][i % 3 + 1] AS colour
        FROM range(250) r(i)""")
    res = []
    for name, opts, feat in [
        ("duckdb_zstd.parquet", "FORMAT PARQUET, CODEC 'zstd'", "DuckDB COPY, zstd"),
        ("duckdb_snappy_rowgroups.parquet", "FORMAT PARQUET, CODEC 'snappy', ROW_GROUP_SIZE 64",
         "DuckDB COPY, snappy, small row groups"),
        ("duckdb_v2_uncompressed.parquet", "FORMAT PARQUET, CODEC 'uncompressed', PARQUET_VERSION V2",
         "DuckDB COPY, PARQUET_VERSION V2 (DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, "
         "BYTE_STREAM_SPLIT on v1 data pages), uncompressed"),
    ]:
        path = os.path.join(out_dir, name)
        if os.path.exists(path):
            os.remove(path)
        con.execute("COPY t TO '%s' (%s)" % (path, opts))
        res.append((name, feat, "duckdb %s" % duckdb.__version__))
    return res


def pandas_fixtures(out_dir):
    rng = random.Random(9)
    n = 80
    df = pd.DataFrame({
        "full_text": ["pandas ✨ %d %s" % (i, "x" * (i % 13)) if i % 8 else None for i in range(n)],
        "score": [rng.random() if i % 5 else float("nan") for i in range(n)],
        "count": pd.array([i if i % 6 else None for i in range(n)], dtype="Int64"),
        "label": pd.Categorical([["pos", "neg", "neu"][i % 3] for i in range(n)]),
        "when": pd.date_range("2021-03-01", periods=n, freq="37min"),
    }, index=pd.Index(["r%d" % i for i in range(n)], name="row"))
    res = []
    path = os.path.join(out_dir, "pandas_index.parquet")
    df.to_parquet(path, engine="pyarrow")
    res.append(("pandas_index.parquet", "pandas to_parquet (pyarrow engine): string index stored as a column, "
                "categorical, nullable Int64, NaN scores (stored as nulls: pandas maps NaN to null)",
                "pandas %s" % pd.__version__))
    path = os.path.join(out_dir, "pandas_gzip_noindex.parquet")
    df.reset_index(drop=True).to_parquet(path, engine="pyarrow", compression="gzip", index=False)
    res.append(("pandas_gzip_noindex.parquet", "pandas to_parquet, gzip, index=False",
                "pandas %s" % pd.__version__))
    return res


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data_files", "parquet", "compat"))
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".parquet"):
            os.remove(os.path.join(out_dir, f))

    files, value_sets = {}, {}
    for name, table, kwargs, features, checks in pyarrow_fixtures():
        path = os.path.join(out_dir, name)
        pq.write_table(table, path, **kwargs)
        check(name, path, checks)
        files[name] = describe(path, features, "pyarrow %s" % pa.__version__, value_sets)
    for name, features, producer in duckdb_fixtures(out_dir) + pandas_fixtures(out_dir):
        files[name] = describe(os.path.join(out_dir, name), features, producer, value_sets)

    with open(os.path.join(out_dir, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/gen_parquet_fixtures.py", "files": files, "value_sets": value_sets}, f, ensure_ascii=False,
                  indent=None, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(out_dir, n)) for n in os.listdir(out_dir))
    for name in sorted(files):
        print("%-40s %7d bytes  %s" % (name, os.path.getsize(os.path.join(out_dir, name)), files[name]["features"]))
    print("total %d bytes in %d files" % (total, len(os.listdir(out_dir))), file=sys.stderr)


if __name__ == "__main__":
    main()
