"""Reading only a few fields of a manifest's entries (the content file paths, or counts).

Orphan cleanup, expiry and their verification need, of each manifest entry, its status and
its file's path. Decoding whole entries (`files.read_manifest`: statistics maps, partition
records, entry objects, inherited sequence numbers) costs ten times that in time and holds
every entry of a manifest at once. Here the entries are decoded against a projection of
the file's schema with just those two fields: Avro still walks every byte (its encoding
has no offsets), but skips what is not asked for without building it.

pyiceberg's resolver can skip any field the read schema lacks, but its partner accessor
refuses a map, list or struct that has no partner in the read schema; the accessor below
answers "no partner" for those instead, so they are skipped like primitives. And pyiceberg
0.12 skips a decimal as if it were length-prefixed bytes, where Iceberg writes it as Avro
`fixed` (no length): every entry after a skipped decimal partition value would be read
from the wrong offset (a crash, a hang, or wrong paths for ORPHANS to keep). The resolver
below skips a decimal by its fixed length.
"""

from __future__ import annotations

from collections.abc import Iterator

from pyiceberg.avro.decoder import BinaryDecoder
from pyiceberg.avro.file import AvroFile
from pyiceberg.avro.reader import DecimalReader, Reader
from pyiceberg.avro.resolver import ReadSchemaResolver, SchemaPartnerAccessor
from pyiceberg.io import FileIO, InputFile
from pyiceberg.manifest import ManifestEntryStatus
from pyiceberg.schema import Schema, visit_with_partner
from pyiceberg.typedef import Record
from pyiceberg.types import DecimalType, IcebergType, IntegerType, NestedField, StringType, StructType

from maintenance.table.files import CACHE

_PATHS_ONLY = Schema(
    NestedField(0, "status", IntegerType(), required=True),
    NestedField(2, "data_file", StructType(NestedField(100, "file_path", StringType(), required=True)), required=True),
)
_DELETED = ManifestEntryStatus.DELETED.value


class _SkippingAccessor(SchemaPartnerAccessor):
    """The read schema's partner of a file field, or None: the field is then skipped."""

    def field_partner(self, partner: IcebergType | None, field_id: int, field_name: str) -> IcebergType | None:
        return None if partner is None else super().field_partner(partner, field_id, field_name)

    def list_element_partner(self, partner_list: IcebergType | None) -> IcebergType | None:
        return None if partner_list is None else super().list_element_partner(partner_list)

    def map_key_partner(self, partner_map: IcebergType | None) -> IcebergType | None:
        return None if partner_map is None else super().map_key_partner(partner_map)

    def map_value_partner(self, partner_map: IcebergType | None) -> IcebergType | None:
        return None if partner_map is None else super().map_value_partner(partner_map)


class _DecimalReader(DecimalReader):
    """A decimal read as pyiceberg reads it, skipped as Iceberg writes it: `fixed`, of the
    bytes its precision needs."""

    def skip(self, decoder: BinaryDecoder) -> None:
        decoder.skip(self._length)


class _Resolver(ReadSchemaResolver):
    def visit_decimal(self, decimal_type: DecimalType, partner: IcebergType | None) -> Reader:
        return _DecimalReader(decimal_type.precision, decimal_type.scale)


class _ProjectedFile(AvroFile[Record]):
    """A manifest opened with its own schema, then read through a projection of it."""

    def __init__(self, input_file: InputFile, projection: Schema) -> None:
        super().__init__(input_file)
        self.projection = projection

    def __enter__(self) -> _ProjectedFile:
        super().__enter__()
        self.reader = visit_with_partner(self.schema, self.projection, _Resolver({}, {}), _SkippingAccessor())  # type: ignore[arg-type]
        return self


def read_projected(io: FileIO, manifest_path: str, projection: Schema) -> Iterator[Record]:
    """A manifest's entries with only `projection`'s fields (by field id; an optional field
    the file lacks reads as None), one at a time."""
    CACHE.manifests_read += 1
    with _ProjectedFile(io.new_input(manifest_path), projection) as reader:
        yield from reader


def manifest_paths(io: FileIO, manifest_path: str, *, live_only: bool) -> list[str]:
    """The content files a manifest names (only ADDED/EXISTING entries if `live_only`)."""
    return [entry[1][0] for entry in read_projected(io, manifest_path, _PATHS_ONLY) if not live_only or entry[0] != _DELETED]
