#!/usr/bin/env python3
"""Checks Parquet files written by infercost's ParquetWriter with three
independent readers: pyarrow (values, schema, Arrow types, footer metadata,
statistics, page CRCs), pandas and duckdb (values).

Usage: check_parquet_with_pyarrow.py MANIFEST.json
  MANIFEST is a list of cases: {"name", "file", "expected"}, where expected
  is a JSON file:
    {"num_rows": N, "num_row_groups": K or null, "codec": "SNAPPY",
     "key_value_metadata": {"k": "v"}, "statistics": true,
     "columns": [{"name", "kind": "string|int32|int64|float|double|float_list",
                  "nullable": bool, "values": [...],
                  "list_size": N, "bits": [[uint32, ...] or null, ...],
                  "encodings_include": [...], "encodings_exclude": [...],
                  "dictionary_page": true|false|null}]}
  Floating-point values may be the strings "NaN", "Infinity", "-Infinity".
  A float_list column (a fixed-size list of float32, a 3-level Parquet LIST
  NAME.list.element) has rows of list_size floats or null, and their bits
  (the float32 bit patterns, compared exactly); the file must then carry the
  ARROW:schema key-value entry (left out of the key_value_metadata compared)
  and pyarrow must read the column as fixed_size_list<element: float not
  null>[list_size].
Prints "PASS <name>" or "FAIL <name>: <reason>" per case; exits 1 if any failed.
"""

import json
import math
import sys
import traceback

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

# String min/max statistics are left out above this size (see writer.cc).
MAX_STAT_BYTES = 1024

# pyarrow reports LZ4_RAW as "LZ4" and Hadoop-framed LZ4 as "UNKNOWN".
PYARROW_CODEC_NAME = {"LZ4_RAW": "LZ4", "LZ4": "UNKNOWN"}

PHYSICAL = {"string": "BYTE_ARRAY", "int32": "INT32", "int64": "INT64", "float": "FLOAT", "double": "DOUBLE",
            "float_list": "FLOAT"}

# The Arrow type pyarrow should read each kind as (float_list: see arrow_type).
ARROW_TYPE = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float": pa.float32(),
              "double": pa.float64()}


class Mismatch(Exception):
    pass


def arrow_type(col):
    if col["kind"] == "float_list":
        return pa.list_(pa.field("element", pa.float32(), nullable=False), col["list_size"])
    return ARROW_TYPE[col["kind"]]


def decode_expected(kind, v):
    if v is None:
        return None
    if kind == "float_list":
        return [decode_expected("float", x) for x in v]
    if kind in ("float", "double"):
        if isinstance(v, str):
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
        return float(v)
    return v


def same(kind, got, want):
    if want is None:
        return got is None
    if got is None:
        return False
    if kind == "float_list":
        got = [None if g is None else float(g) for g in got]  # numpy float32 from pandas
        return len(got) == len(want) and all(same("float", g, w) for g, w in zip(got, want))
    if kind in ("float", "double"):
        if math.isnan(want):
            return isinstance(got, float) and math.isnan(got)
        # Exact, including the sign of zero.
        return float(got) == want and math.copysign(1.0, float(got)) == math.copysign(1.0, want)
    return got == want


def compare_column(reader, col, got, want):
    if len(got) != len(want):
        raise Mismatch(f"{reader}: column {col['name']}: {len(got)} values, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if not same(col["kind"], g, w):
            gs, ws = repr(g), repr(w)
            raise Mismatch(f"{reader}: column {col['name']} row {i}: got {gs[:80]}, expected {ws[:80]}")


def level_entries(col, values):
    """A column chunk's num_values: rows, or for a list column its level
    entries (one per element, one per null row)."""
    if col["kind"] != "float_list":
        return len(values)
    return sum(1 if v is None else len(v) for v in values)


def check_list_bits(reader, col, rows):
    """rows: per row None or a float32 numpy array; compared bit for bit."""
    if len(rows) != len(col["bits"]):
        raise Mismatch(f"{reader}: column {col['name']}: {len(rows)} rows, expected {len(col['bits'])}")
    for i, (got, want) in enumerate(zip(rows, col["bits"])):
        if (got is None) != (want is None):
            raise Mismatch(f"{reader}: column {col['name']} row {i}: null is {got is None}, expected {want is None}")
        if want is None:
            continue
        got_bits = np.asarray(got, dtype=np.float32).view(np.uint32).tolist()
        if got_bits != want:
            raise Mismatch(f"{reader}: column {col['name']} row {i}: bits {got_bits[:4]}..., expected {want[:4]}...")


def expected_stats(col, values):
    """(has_min_max, min, max, null_count) the writer should record; for a
    list column the bounds of its floats and the null rows."""
    kind = col["kind"]
    nulls = sum(1 for v in values if v is None)
    present = [v for v in values if v is not None]
    if kind == "float_list":
        present = [x for v in present for x in v]
        kind = "float"
    if kind in ("float", "double"):
        present = [v for v in present if not math.isnan(v)]
    if not present:
        return False, None, None, nulls
    if kind == "string":
        raw = [v.encode("utf-8") for v in present]
        lo, hi = min(raw), max(raw)
        if len(lo) > MAX_STAT_BYTES or len(hi) > MAX_STAT_BYTES:
            return False, None, None, nulls
        return True, lo, hi, nulls
    return True, min(present), max(present), nulls


def check_case(case):
    exp = json.load(open(case["expected"], encoding="utf-8"))
    path = case["file"]
    cols = exp["columns"]
    for c in cols:
        c["values"] = [decode_expected(c["kind"], v) for v in c["values"]]

    # ---- pyarrow: footer ----
    pf = pq.ParquetFile(path)
    md = pf.metadata
    if md.num_rows != exp["num_rows"]:
        raise Mismatch(f"pyarrow: num_rows {md.num_rows}, expected {exp['num_rows']}")
    if exp.get("num_row_groups") is not None and md.num_row_groups != exp["num_row_groups"]:
        raise Mismatch(f"pyarrow: {md.num_row_groups} row groups, expected {exp['num_row_groups']}")
    if not (md.created_by or "").startswith("infercost version "):
        raise Mismatch(f"pyarrow: created_by {md.created_by!r}")
    kv = {k.decode(): v.decode() for k, v in (md.metadata or {}).items()}
    has_list = any(c["kind"] == "float_list" for c in cols)
    if "ARROW:schema" not in exp.get("key_value_metadata", {}):
        if ("ARROW:schema" in kv) != has_list:
            raise Mismatch(f"pyarrow: ARROW:schema present: {'ARROW:schema' in kv}, expected {has_list}")
        kv.pop("ARROW:schema", None)
    if kv != exp.get("key_value_metadata", {}):
        raise Mismatch(f"pyarrow: key_value_metadata {kv}, expected {exp.get('key_value_metadata', {})}")
    if md.num_columns != len(cols):
        raise Mismatch(f"pyarrow: {md.num_columns} columns, expected {len(cols)}")

    # ---- pyarrow: schema ----
    schema = pf.schema
    for i, c in enumerate(cols):
        sc = schema.column(i)
        is_list = c["kind"] == "float_list"
        want_path = c["name"] + ".list.element" if is_list else c["name"]
        if sc.path != want_path:
            raise Mismatch(f"schema: column {i} is {sc.path!r}, expected {want_path!r}")
        if sc.physical_type != PHYSICAL[c["kind"]]:
            raise Mismatch(f"schema: {c['name']}: physical type {sc.physical_type}")
        if sc.max_definition_level != (1 if c["nullable"] else 0) + (1 if is_list else 0):
            raise Mismatch(f"schema: {c['name']}: max_definition_level {sc.max_definition_level}")
        if sc.max_repetition_level != (1 if is_list else 0):
            raise Mismatch(f"schema: {c['name']}: max_repetition_level {sc.max_repetition_level}")
        if c["kind"] == "string":
            if str(sc.logical_type) != "String" or sc.converted_type != "UTF8":
                raise Mismatch(f"schema: {c['name']}: logical {sc.logical_type} converted {sc.converted_type}")
        elif str(sc.logical_type) != "None":
            raise Mismatch(f"schema: {c['name']}: unexpected logical type {sc.logical_type}")
    # The Arrow types pyarrow reads (ARROW:schema for the lists).
    arrow_schema = pf.schema_arrow
    for c in cols:
        field = arrow_schema.field(c["name"])
        if field.type != arrow_type(c) or field.nullable != c["nullable"]:
            raise Mismatch(f"arrow schema: {c['name']}: {field}, expected {arrow_type(c)} nullable {c['nullable']}")
        if c["kind"] == "float_list":
            t = field.type
            if (not pa.types.is_fixed_size_list(t) or t.list_size != c["list_size"]
                    or t.value_type != pa.float32() or t.value_field.nullable or t.value_field.name != "element"):
                raise Mismatch(f"arrow schema: {c['name']}: {t}")

    # ---- pyarrow: row groups, column chunks, statistics ----
    start = 0
    for r in range(md.num_row_groups):
        rg = md.row_group(r)
        end = start + rg.num_rows
        if rg.num_rows <= 0:
            raise Mismatch(f"row group {r} is empty")
        for i, c in enumerate(cols):
            cc = rg.column(i)
            where = f"row group {r} column {c['name']}"
            if cc.compression != PYARROW_CODEC_NAME.get(exp["codec"], exp["codec"]):
                raise Mismatch(f"{where}: codec {cc.compression}, expected {exp['codec']}")
            want_values = level_entries(c, c["values"][start:end])
            if cc.num_values != want_values:
                raise Mismatch(f"{where}: num_values {cc.num_values}, expected {want_values}")
            for e in c.get("encodings_include", []):
                if e not in cc.encodings:
                    raise Mismatch(f"{where}: encodings {cc.encodings} lack {e}")
            for e in c.get("encodings_exclude", []):
                if e in cc.encodings:
                    raise Mismatch(f"{where}: encodings {cc.encodings} include {e}")
            dp = c.get("dictionary_page")
            if dp is not None and cc.has_dictionary_page != dp:
                raise Mismatch(f"{where}: has_dictionary_page {cc.has_dictionary_page}, expected {dp}")
            if not exp.get("statistics", True):
                if cc.is_stats_set:
                    raise Mismatch(f"{where}: statistics written although disabled")
                continue
            if not cc.is_stats_set:
                raise Mismatch(f"{where}: no statistics")
            st = cc.statistics
            has, lo, hi, nulls = expected_stats(c, c["values"][start:end])
            if st.null_count != nulls:
                raise Mismatch(f"{where}: null_count {st.null_count}, expected {nulls}")
            if st.has_min_max != has:
                raise Mismatch(f"{where}: has_min_max {st.has_min_max}, expected {has}")
            if has:
                if c["kind"] == "string":
                    # Raw bytes of the statistics (unsigned byte order).
                    got_lo, got_hi = raw_string_stats(cc)
                else:
                    got_lo, got_hi = st.min, st.max
                if got_lo != lo or got_hi != hi:
                    raise Mismatch(f"{where}: min/max {got_lo!r:.80}/{got_hi!r:.80}, expected {lo!r:.80}/{hi!r:.80}")
        start = end
    if start != exp["num_rows"]:
        raise Mismatch(f"row groups hold {start} rows, expected {exp['num_rows']}")

    # ---- pyarrow: values (with page CRC verification) ----
    table = pq.read_table(path, page_checksum_verification=True)
    for c in cols:
        if table.schema.field(c["name"]).type != arrow_type(c):
            raise Mismatch(f"pyarrow: read_table: {c['name']}: {table.schema.field(c['name']).type}")
        compare_column("pyarrow", c, table.column(c["name"]).to_pylist(), c["values"])
        if c["kind"] == "float_list":
            arr = table.column(c["name"]).combine_chunks()
            rows = [None if not arr[i].is_valid else arr[i].values.to_numpy(zero_copy_only=False)
                    for i in range(len(arr))]
            check_list_bits("pyarrow", c, rows)
    # The dictionary path of the reader too (strings as arrow dictionaries).
    string_cols = [c["name"] for c in cols if c["kind"] == "string"]
    if string_cols:
        dtable = pq.read_table(path, read_dictionary=string_cols)
        for c in cols:
            if c["kind"] == "string":
                compare_column("pyarrow(read_dictionary)", c, dtable.column(c["name"]).to_pylist(), c["values"])

    # ---- pandas ----
    df = pd.read_parquet(path)
    if len(df) != exp["num_rows"]:
        raise Mismatch(f"pandas: {len(df)} rows")
    for c in cols:
        series = df[c["name"]]
        kind = c["kind"]
        want = c["values"]
        if kind == "float_list":
            # An object column of float32 arrays, None for a null row.
            got = series.tolist()
            check_list_bits("pandas", c, [None if g is None else g for g in got])
            compare_column("pandas", c, got, want)
            continue
        got = [None if na else v for v, na in zip(series.tolist(), series.isna().tolist())]
        if kind in ("float", "double"):
            # pandas reads null floats as NaN.
            got = [math.nan if g is None else float(g) for g in got]
            want = [math.nan if v is None else v for v in want]
        elif kind in ("int32", "int64") and any(v is None for v in want):
            # Integer columns with nulls come back as float64.
            got = [None if g is None else float(g) for g in got]
            want = [None if v is None else float(v) for v in want]
            kind = "double"
        compare_column("pandas", dict(c, kind=kind), got, want)

    # ---- duckdb ----
    con = duckdb.connect()
    names = ", ".join('"' + c["name"].replace('"', '""') + '"' for c in cols)
    rows = con.sql(f"select {names} from read_parquet('{path}')").fetchall()
    if len(rows) != exp["num_rows"]:
        raise Mismatch(f"duckdb: {len(rows)} rows")
    for i, c in enumerate(cols):
        compare_column("duckdb", c, [row[i] for row in rows], c["values"])
        if c["kind"] == "float_list":
            # FLOAT[] (duckdb reads the Parquet LIST) or FLOAT[N].
            col_name = '"' + c["name"].replace('"', '""') + '"'
            dtype = str(con.sql(f"select {col_name} from read_parquet('{path}')").types[0])
            if dtype not in ("FLOAT[]", f"FLOAT[{c['list_size']}]"):
                raise Mismatch(f"duckdb: {c['name']}: type {dtype}")
            check_list_bits("duckdb", c, [None if row[i] is None else np.array(row[i], dtype=np.float32)
                                          for row in rows])
    n = con.execute(f"select count(*) from read_parquet('{path}')").fetchall()[0][0]
    if n != exp["num_rows"]:
        raise Mismatch(f"duckdb: count(*) {n}")
    # duckdb names the codecs as parquet-format does (pyarrow does not).
    codecs = {r[0] for r in con.execute(f"select compression from parquet_metadata('{path}')").fetchall()}
    if codecs and codecs != {exp["codec"]}:
        raise Mismatch(f"duckdb: parquet_metadata compression {codecs}, expected {exp['codec']}")
    con.close()


def raw_string_stats(cc):
    """min/max of a BYTE_ARRAY column chunk as bytes, from duckdb-independent
    pyarrow statistics (pyarrow gives str for UTF8 columns)."""
    st = cc.statistics
    lo, hi = st.min, st.max
    if isinstance(lo, str):
        lo = lo.encode("utf-8")
    if isinstance(hi, str):
        hi = hi.encode("utf-8")
    return lo, hi


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    manifest = json.load(open(sys.argv[1], encoding="utf-8"))
    failed = 0
    for case in manifest:
        try:
            check_case(case)
            print(f"PASS {case['name']}")
        except Mismatch as e:
            failed += 1
            print(f"FAIL {case['name']}: {e}")
        except Exception as e:  # a reader refusing the file is a failure too
            failed += 1
            msg = traceback.format_exception_only(type(e), e)[-1].strip()
            print(f"FAIL {case['name']}: {msg}")
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
