"""Deletion vector blobs: written in Python, read by Iceberg's own Java deserializer, and the
other way round (Java's blobs use run containers, which ours use only where smaller)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maintenance.table.dv import deserialize_dv, serialize_dv

POSITIONS = st.one_of(
    st.sets(st.integers(0, 300_000), max_size=6000),
    st.sets(st.integers(0, 2**34), max_size=50),
    st.builds(lambda start, length, step: set(range(start, start + length, step)), st.integers(0, 2**33), st.integers(1, 80_000), st.integers(1, 3)),
)


@settings(max_examples=60, deadline=None)
@given(POSITIONS)
def test_blobs_round_trip_in_python(positions: set[int]) -> None:
    assert deserialize_dv(serialize_dv(positions)) == sorted(positions)


def test_a_damaged_blob_is_refused() -> None:
    blob = bytearray(serialize_dv([1, 2, 3]))
    blob[10] ^= 0xFF
    with pytest.raises(ValueError, match="checksum"):
        deserialize_dv(bytes(blob))


def java_index(spark, blob: bytes, cardinality: int):  # type: ignore[no-untyped-def]
    iceberg = spark._jvm.org.apache.iceberg
    dv = (iceberg.FileMetadata.deleteFileBuilder(iceberg.PartitionSpec.unpartitioned()).ofPositionDeletes().withFormat(iceberg.FileFormat.PUFFIN)
          .withPath("/t/dv.puffin").withFileSizeInBytes(len(blob) + 100).withRecordCount(cardinality).withReferencedDataFile("/t/data.parquet")
          .withContentOffset(4).withContentSizeInBytes(len(blob)).build())
    return iceberg.deletes.PositionDeleteIndex.deserialize(bytearray(blob), dv)


@pytest.mark.parametrize("seed", range(6))
def test_iceberg_reads_our_blobs_and_writes_the_same_bytes(spark, seed: int) -> None:  # type: ignore[no-untyped-def]
    rnd = random.Random(seed)
    positions = sorted({*rnd.sample(range(0, 300_000), rnd.choice([1, 50, 5000, 70_000])), *range(10**6, 10**6 + rnd.randint(0, 20_000)),
                        *(2**32 + rnd.randint(0, 10) for _ in range(seed))})
    blob = serialize_dv(positions)
    index = java_index(spark, blob, len(positions))
    assert index.cardinality() == len(positions)
    for position in rnd.sample(positions, 30):
        assert index.isDeleted(position)
    assert not index.isDeleted(positions[-1] + 1)
    buffer = index.serialize()
    java_blob = bytes(spark._jvm.java.util.Arrays.copyOfRange(buffer.array(), buffer.arrayOffset(), buffer.arrayOffset() + buffer.remaining()))
    assert java_blob == blob and deserialize_dv(java_blob) == positions
