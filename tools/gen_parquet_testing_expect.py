#!/usr/bin/env python3
"""Writes tests/data_files/parquet/parquet_testing_expected.json: what pyarrow
reads from every file of parquet-testing/data, per flat (top-level, not
nested) column: the row count, the null count and every value as a JSON value
in the form infercost's append_value_json renders it (binary that is not
UTF-8 as a string of U+0080..U+00FF code points, INT96 as 24 hex digits,
NaN/Infinity as strings, dates/timestamps as their raw numbers). Nested
top-level fields are listed so the test can check they are refused.

Usage: tools/gen_parquet_testing_expect.py [SHARED_DATA_DIR] (default ../shared/data)
"""
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from parquet_oracle import int96_hex, render_bytes, render_float

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data_files", "parquet", "parquet_testing_expected.json")


def column_values(arr, physical):
    t = arr.type
    if physical == "INT96":
        ints = arr.cast(pa.int64()).to_pylist()
        return [None if v is None else int96_hex(v) for v in ints]
    if physical in ("FLOAT", "DOUBLE"):
        return [render_float(v) for v in arr.to_pylist()]
    if physical == "BOOLEAN":
        return arr.to_pylist()
    if physical in ("INT32", "INT64"):
        if pa.types.is_integer(t):
            return arr.to_pylist()
        if pa.types.is_date32(t) or pa.types.is_time32(t):
            return arr.cast(pa.int32()).to_pylist()
        if pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_date64(t):
            return arr.cast(pa.int64()).to_pylist()
        return None
    if physical in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return arr.to_pylist()
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            return [None if v is None else render_bytes(v) for v in arr.to_pylist()]
        return None
    return None


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data")
    data = os.path.join(shared, "parquet-testing", "data")
    result = {"generator": "tools/gen_parquet_testing_expect.py", "pyarrow": pa.__version__, "files": {}}
    for name in sorted(os.listdir(data)):
        if not name.endswith(".parquet"):
            continue
        path = os.path.join(data, name)
        entry = {"columns": {}, "nested": [], "skipped": {}}
        try:
            pf = pq.ParquetFile(path)
            table = pf.read()
        except Exception as e:  # recorded: the C++ test then expects a clean error
            entry["pyarrow_error"] = f"{type(e).__name__}: {e}"
            result["files"][name] = entry
            continue
        schema = pf.metadata.schema
        physical = {schema.column(i).path: schema.column(i).physical_type for i in range(len(schema))}
        for field in table.schema:
            t = field.type
            if pa.types.is_nested(t):
                entry["nested"].append(field.name)
                continue
            arr = table.column(field.name).combine_chunks()
            values = column_values(arr, physical[field.name])
            if values is None:
                entry["skipped"][field.name] = f"type {t} not rendered by this script"
                continue
            entry["columns"][field.name] = {
                "physical": physical[field.name],
                "rows": len(arr),
                "nulls": arr.null_count,
                "values": values,
            }
        result["files"][name] = entry
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1, ensure_ascii=True, allow_nan=False)
        f.write("\n")
    print(f"wrote {OUT}: {len(result['files'])} files")


if __name__ == "__main__":
    main()
