"""Shared helpers of the Parquet oracle scripts in tools/: a minimal Thrift
compact-protocol reader (to walk footers and page headers of files other
writers made) and the JSON rendering that parquet::append_value_json uses."""

import math
import struct


class Compact:
    """Just enough Thrift compact protocol to read footers and page headers.
    struct() returns {field id: value}; lists come back as Python lists,
    binaries and maps are skipped (None)."""

    def __init__(self, data, pos):
        self.d = data
        self.p = pos

    def byte(self):
        b = self.d[self.p]
        self.p += 1
        return b

    def varint(self):
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def value(self, t):
        if t in (1, 2):
            return t == 1
        if t == 3:
            return self.byte()
        if t in (4, 5, 6):
            return self.zigzag()
        if t == 7:
            self.p += 8
            return None
        if t == 8:
            n = self.varint()
            self.p += n
            return None
        if t in (9, 10):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            items = []
            for _ in range(n):
                items.append(self.byte() == 1 if et in (1, 2) else self.value(et))
            return items
        if t == 11:
            n = self.varint()
            if n:
                kv = self.byte()
                for _ in range(n):
                    self.value(kv >> 4)
                    self.value(kv & 0x0F)
            return None
        if t == 12:
            return self.struct()
        raise ValueError("thrift type %d" % t)

    def struct(self):
        fields, last = {}, 0
        while True:
            h = self.byte()
            if h == 0:
                return fields
            delta = h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            fields[fid] = self.value(h & 0x0F)


def render_bytes(b):
    """A byte value as append_value_json shows it: UTF-8 text, else one
    character per byte (JSON escapes them as \\u00XX)."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("latin-1")


def render_float(x):
    """NaN and infinities as the strings append_value_json writes."""
    if x is None:
        return None
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def int96_hex(ns):
    """An INT96 timestamp (nanoseconds since the epoch) as its 12 stored bytes in hex."""
    days, nanos = divmod(ns, 86400 * 10**9)
    return (struct.pack("<q", nanos) + struct.pack("<i", days + 2440588)).hex()
