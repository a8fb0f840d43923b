"""Deletion vectors (format 3): the blob bytes of one data file's deleted positions.

The spec's "Deletion Vectors" section, which Iceberg's `BitmapPositionDeleteIndex`
implements: a blob is
- the length of what follows up to the checksum (magic bytes and bitmap), 4 bytes big-endian;
- the magic bytes `D1 D3 39 64`;
- the positions as a 64-bit Roaring bitmap in the portable format: the number of 32-bit
  bitmaps (8 bytes, little-endian), then for each, in key order from 0, its key (the high
  32 bits, 4 bytes little-endian) and the 32-bit Roaring bitmap in the portable format
  (little-endian: a cookie, the containers' keys and cardinalities, their offsets, then
  array, bitmap or run containers);
- a CRC-32 of the magic bytes and the bitmap, 4 bytes big-endian.

Containers are written in their smallest form (array, bitmap or runs). Only the blob
needs writing here; Iceberg's Java Puffin writer puts blobs into files and
Java's own deserializer checks these bytes (`PositionDeleteIndex.deserialize`) before any
is committed. Reading handles run containers too, which Iceberg's writer uses.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from itertools import groupby

MAGIC = bytes.fromhex("D1D33964")
_NO_RUN_COOKIE = 12346
_RUN_COOKIE = 12347
_ARRAY_MAX = 4096  # an array container holds at most this many values; denser ones are bitmaps
_NO_OFFSET_THRESHOLD = 4


def serialize_dv(positions: Iterable[int]) -> bytes:
    """The blob of a deletion vector holding `positions` (non-negative, any order, repeats ignored)."""
    ordered = sorted(set(positions))
    if ordered and ordered[0] < 0:
        raise ValueError("a deleted position cannot be negative")
    by_key = {key: [p & 0xFFFFFFFF for p in group] for key, group in groupby(ordered, key=lambda p: p >> 32)}
    count = (max(by_key) + 1) if by_key else 0
    bitmap = bytearray(struct.pack("<q", count))
    for key in range(count):
        bitmap += struct.pack("<I", key)
        bitmap += _serialize_32(by_key.get(key, []))
    data = MAGIC + bytes(bitmap)
    return struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data) & 0xFFFFFFFF)


def deserialize_dv(blob: bytes) -> list[int]:
    """The positions of a deletion vector blob, ascending (checks length, magic and checksum)."""
    (length,) = struct.unpack_from(">I", blob, 0)
    data = blob[4 : 4 + length]
    if len(blob) != length + 8 or data[:4] != MAGIC:
        raise ValueError("not a deletion vector blob (length or magic bytes)")
    (crc,) = struct.unpack_from(">I", blob, 4 + length)
    if zlib.crc32(data) & 0xFFFFFFFF != crc:
        raise ValueError("deletion vector checksum mismatch")
    (count,) = struct.unpack_from("<q", data, 4)
    offset, positions = 12, []
    for _ in range(count):
        (key,) = struct.unpack_from("<I", data, offset)
        values, offset = _deserialize_32(data, offset + 4)
        positions.extend((key << 32) | v for v in values)
    return positions


def _serialize_32(values: list[int]) -> bytes:
    """A 32-bit Roaring bitmap of sorted unique values, each container in its smallest form
    (array, bitmap or runs), as Iceberg's own writer does after `runOptimize`."""
    containers = [_container([v & 0xFFFF for v in group]) for _, group in groupby(values, key=lambda v: v >> 16)]
    keys = [high for high, _ in groupby(values, key=lambda v: v >> 16)]
    cardinalities = [sum(1 for _ in group) for _, group in groupby(values, key=lambda v: v >> 16)]
    size = len(containers)
    runs = [is_run for is_run, _ in containers]
    if any(runs):
        flags = bytearray((size + 7) // 8)
        for i, is_run in enumerate(runs):
            if is_run:
                flags[i // 8] |= 1 << (i % 8)
        header = struct.pack("<I", _RUN_COOKIE | ((size - 1) << 16)) + bytes(flags)
        with_offsets = size >= _NO_OFFSET_THRESHOLD
    else:
        header = struct.pack("<II", _NO_RUN_COOKIE, size)
        with_offsets = True
    for high, cardinality in zip(keys, cardinalities):
        header += struct.pack("<HH", high, cardinality - 1)
    bodies = [body for _, body in containers]
    offsets = b""
    if with_offsets:
        offset = len(header) + 4 * size
        for body in bodies:
            offsets += struct.pack("<I", offset)
            offset += len(body)
    return header + offsets + b"".join(bodies)


def _container(lows: list[int]) -> tuple[bool, bytes]:
    """(is a run container, its bytes) for one container's sorted low 16-bit values."""
    runs: list[tuple[int, int]] = []
    for low in lows:
        if runs and low == runs[-1][0] + runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((low, 0))
    plain = 2 * len(lows) if len(lows) <= _ARRAY_MAX else 8192
    if 2 + 4 * len(runs) < plain:
        return True, struct.pack(f"<H{2 * len(runs)}H", len(runs), *(v for run in runs for v in run))
    if len(lows) <= _ARRAY_MAX:
        return False, struct.pack(f"<{len(lows)}H", *lows)
    words = [0] * 1024
    for low in lows:
        words[low >> 6] |= 1 << (low & 63)
    return False, struct.pack("<1024Q", *words)


def _deserialize_32(data: bytes, start: int) -> tuple[list[int], int]:
    """Values of the 32-bit Roaring bitmap at `start`, and where it ends."""
    (cookie,) = struct.unpack_from("<I", data, start)
    offset = start + 4
    if cookie & 0xFFFF == _RUN_COOKIE:
        size = (cookie >> 16) + 1
        run_flags = data[offset : offset + (size + 7) // 8]
        offset += (size + 7) // 8
        has_offsets = size >= _NO_OFFSET_THRESHOLD
    elif cookie == _NO_RUN_COOKIE:
        (size,) = struct.unpack_from("<I", data, offset)
        offset += 4
        run_flags, has_offsets = b"", True
    else:
        raise ValueError(f"not a portable Roaring bitmap (cookie {cookie})")
    descriptions = [struct.unpack_from("<HH", data, offset + 4 * i) for i in range(size)]
    offset += 4 * size + (4 * size if has_offsets else 0)
    values: list[int] = []
    for i, (high, cardinality_minus_one) in enumerate(descriptions):
        cardinality = cardinality_minus_one + 1
        base = high << 16
        if run_flags and run_flags[i // 8] >> (i % 8) & 1:
            (runs,) = struct.unpack_from("<H", data, offset)
            pairs = struct.unpack_from(f"<{2 * runs}H", data, offset + 2)
            offset += 2 + 4 * runs
            for first, extra in zip(pairs[::2], pairs[1::2]):
                values.extend(range(base + first, base + first + extra + 1))
        elif cardinality <= _ARRAY_MAX:
            values.extend(base + low for low in struct.unpack_from(f"<{cardinality}H", data, offset))
            offset += 2 * cardinality
        else:
            words = struct.unpack_from("<1024Q", data, offset)
            offset += 8192
            values.extend(base + (index << 6) + bit for index, word in enumerate(words) if word for bit in range(64) if word >> bit & 1)
    return values, offset
