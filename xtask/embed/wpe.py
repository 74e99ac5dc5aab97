"""Writes tool search's word-vector table (`mcp-tools/src/search/*.wpe`).

The one home of the format, for `distill.py` and `from_wordllama.py` alike
(little endian): b"MCPWPE4\\0", u32 dims (even), u32 count; count pieces,
each a u8 length and its bytes; count x dims / 2 bytes, two four-bit two's
complement values each (the even dimension in the low half); count f32
scales (a value is its four bits times its piece's scale). Each row is
quantized to -7..7 with a scale of its own.
"""

import os
import struct

import numpy as np


def write(out, pieces, vecs):
    """Quantizes `vecs` (one row a piece, an even number of columns) and
    writes the table to `out`."""
    count, dims = vecs.shape
    assert count == len(pieces) and dims % 2 == 0
    scale = np.abs(vecs).max(1) / 7.0
    scale[scale == 0] = 1.0
    q = np.round(vecs / scale[:, None]).clip(-7, 7).astype(np.int8)
    nibbles = q.astype(np.uint8) & 0xF
    packed = nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)
    with open(out, "wb") as f:
        f.write(b"MCPWPE4\0")
        f.write(struct.pack("<II", dims, count))
        for p in pieces:
            b = p.encode()
            f.write(struct.pack("<B", len(b)) + b)
        f.write(packed.tobytes())
        f.write(scale.astype("<f4").tobytes())
    print(f"{out}: {count} pieces x {dims} dimensions, {os.path.getsize(out)} bytes")
