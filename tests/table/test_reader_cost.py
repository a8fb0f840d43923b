"""What delete and small files cost readers (`table/reader_cost.py`), on hand-built metadata."""

from __future__ import annotations

from maintenance.table.health import TableHealth, count_files
from maintenance.table.reader_cost import TARGET_FILE_BYTES, reader_cost
from tests.support.metadata import data, eq, snapshot


def test_reader_cost_weighs_deletes_by_the_data_files_they_apply_to() -> None:
    """100 equality deletes newer than 1,000 data files cost readers far more than 100 newer
    than 2; the same 100 older than every data file (applying to none) cost nothing."""
    def health(data_seqs: list[int], delete_seqs: list[int]) -> TableHealth:
        result = TableHealth()
        count_files(result, snapshot(*(data(s, size=2**20) for s in data_seqs), *(eq(s) for s in delete_seqs)), small_file_bytes=1)
        return result

    many, few, none = health([1] * 1000, [5] * 100), health([1] * 2, [5] * 100), health([9] * 1000, [5] * 100)
    assert many.equality_deletes_applied == 100_000 and few.equality_deletes_applied == 200 and none.equality_deletes_applied == 0
    assert reader_cost(many).extra_bytes > 100 * reader_cost(few).extra_bytes
    assert reader_cost(none).extra_bytes == reader_cost(health([9] * 1000, [])).extra_bytes


def test_reader_cost_of_a_tiny_table_is_a_readers_slowdown_not_its_file_count() -> None:
    """The model's own calibration (table/reader_cost.py): 1,000 files of 900 bytes scanned
    ×22.6 slower than one file here; the model must say so within a small factor, where the
    former model (no per-scan floor) said ×~1,000 and "3,996 MiB extra" for a 0.9 MB table.
    On a table of full-sized files small files barely move the ratio, and the components
    say what a scan does."""
    def health(sizes: list[int], delete_seqs: list[int] = ()) -> TableHealth:  # type: ignore[assignment]
        result = TableHealth()
        count_files(result, snapshot(*(data(1, size=s) for s in sizes), *(eq(s) for s in delete_seqs)), small_file_bytes=1)
        return result

    tiny = reader_cost(health([900] * 1000))
    assert tiny.extra_opens == 999 and tiny.delete_records == 0
    assert 22.6 / 3 < tiny.amplification < 22.6 * 3
    big = reader_cost(health([TARGET_FILE_BYTES] * 1000 + [2**20] * 10))
    assert big.extra_opens == 9 and 1.0 < big.amplification < 1.001  # the 10 MiB fill one more clean file
    with_deletes = reader_cost(health([2**20] * 4, [5] * 3))  # 3 equality deletes of 10 keys, each applying to 4 data files
    assert with_deletes.extra_opens == 3 + 4 * 3 and with_deletes.delete_records == 4 * 3 * 10


def test_what_each_job_relieves_a_scan_of() -> None:
    """`relieved_bytes`: MERGE removes every applied delete file and its entries and the data
    files beyond a clean scan's, CONVERT only
    the keys held (the opens stay, as position files), REWRITE the position files beyond one
    per data file, COMPACT the data files beyond a clean scan's; a full scan's shape is the
    health's own counters, so it relieves exactly reader_cost's extra of that kind."""
    from maintenance.table.reader_cost import (
        DELETE_RECORD_BYTES,
        EQUALITY_DELETES,
        OPEN_COST_BYTES,
        POSITION_DELETES,
        REWRITTEN,
        SMALL_FILES,
        DeleteWeights,
        ScanShape,
        relieved_bytes,
        scan_extra_bytes,
    )

    health = TableHealth()
    count_files(health, snapshot(*(data(1, size=2**20) for _ in range(4)), eq(5), eq(6)), small_file_bytes=1)
    full = ScanShape.full_scan(health)
    assert (full.data_files, full.equality_delete_files, full.position_delete_files) == (4, 8, 0)
    keys_per_file = health.equality_delete_records_applied / health.equality_deletes_applied
    weights = DeleteWeights.of(health)
    assert (weights.equality_records, weights.position_records) == (keys_per_file, 0.0)
    assert relieved_bytes(REWRITTEN, full, weights) == 8 * (OPEN_COST_BYTES + keys_per_file * DELETE_RECORD_BYTES) + 3 * OPEN_COST_BYTES
    assert scan_extra_bytes(full, weights) == reader_cost(health).extra_bytes
    assert relieved_bytes(EQUALITY_DELETES, full, weights) == 8 * keys_per_file * DELETE_RECORD_BYTES
    assert relieved_bytes(SMALL_FILES, full, weights) == 3 * OPEN_COST_BYTES  # 4 MiB in 4 files, one clean file
    a_filtered_scan = ScanShape(data_files=1, data_bytes=2**20, equality_delete_files=2, position_delete_files=3)
    assert relieved_bytes(POSITION_DELETES, a_filtered_scan, weights) == 2 * OPEN_COST_BYTES
    assert relieved_bytes(SMALL_FILES, a_filtered_scan, weights) == 0
