"""What the real suites compare with, and how: the golden tweets as an input file, the emulated GPU's
share of them, and sentence-transformers' vectors of them (tools/make_real_embedding_golden.py), every
vector whole.

The emulated CUDA backend runs the kernels one thread at a time on the CPU (its time is in proportion
to the tokens it runs): its passes take the golden rows longer than EMULATOR_LONG tokens (every long
tweet, those the 128- and 256-token truncations would cut among them, the longest) and, of the
shorter ones, the first golden row of each token count (every length from the shortest to
EMULATOR_LONG that the golden has); the CPU passes take all 2,000.
Those are every row length the golden rows reach (each through the kernels on the emulated GPU: its
attention's key tiles, masks and pooling, short rows batched together, the long ones too); the
other short rows are the same lengths again, other tweets' words through the same arithmetic, which
the CPU passes check on all 2,000.
"""

import json

import numpy as np

import real_data

TOL = 1e-5
GOLDEN = json.loads(real_data.EMBEDDING_GOLDEN.read_text())
ROWS = GOLDEN["rows"]
VECTORS = real_data.unpack_vectors(real_data.EMBEDDING_VECTORS.read_bytes())
if VECTORS.shape != (len(ROWS), GOLDEN["dimensions"]):
    raise ValueError(f"{real_data.EMBEDDING_VECTORS}: {VECTORS.shape} vectors for {len(ROWS)} rows")
# A classifier golden row or an embedding golden row is a dict with "row" and "tokens".
EMULATOR_LONG = 64
# The emulated CUDA module of this build's tests (tests/backend), loaded through INFERCOST_CUDA_MODULE.
EMULATED_CUDA_MODULE_NAME = "tests/backend/infercost_cuda_emu.so"


def emulator_indexes(rows):
    """Indexes of the rows the emulated GPU runs, in golden order: every row over EMULATOR_LONG tokens,
    and of the others the first of each token count."""
    seen = set()
    out = []
    for i, g in enumerate(rows):
        if g["tokens"] > EMULATOR_LONG:
            out.append(i)
        elif g["tokens"] not in seen:
            seen.add(g["tokens"])
            out.append(i)
    return out


def write_input(path, tweets, rows):
    """The golden tweets as JSON lines {"row", "full_text"}, in golden order."""
    with open(path, "w", encoding="utf-8") as f:
        for g in rows:
            f.write(json.dumps({"row": g["row"], "full_text": tweets[g["row"]].text}) + "\n")
    return path


def assert_matches_golden(vectors, where, indexes=None):
    """`vectors`: float32 [rows, dimensions] in golden order (of the golden rows at `indexes`, when
    given): every element within TOL of sentence-transformers'."""
    want = VECTORS if indexes is None else VECTORS[indexes]
    assert vectors.shape == want.shape, (where, vectors.shape, want.shape)
    diff = np.abs(vectors.astype(np.float64) - want.astype(np.float64))
    row, dim = np.unravel_index(int(diff.argmax()), diff.shape)
    golden_row = ROWS[row if indexes is None else indexes[row]]
    assert diff[row, dim] <= TOL, (f"{where}: tweet row {golden_row['row']} ({golden_row['tokens']} tokens), "
                                   f"dimension {dim}: {vectors[row, dim]} vs sentence-transformers' "
                                   f"{want[row, dim]} ({diff[row, dim]:.2e} apart)")
    print(f"{where}: {len(want)} whole vectors, largest element difference {diff.max():.2e} "
          f"(tweet row {golden_row['row']})")


def parquet_vectors(path):
    """(the table, its `embedding` column as float32 [rows, dimensions]) of an embed output."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    column = table.column("embedding")
    assert column.type == pa.list_(pa.field("element", pa.float32(), False), GOLDEN["dimensions"])
    flat = column.combine_chunks().flatten().to_numpy()
    return table, flat.reshape(len(table), GOLDEN["dimensions"])
