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
