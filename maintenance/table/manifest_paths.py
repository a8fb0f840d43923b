"""Reading only the content file paths of a manifest.

Orphan cleanup, expiry and their verification need, of each manifest entry, its status and
its file's path. Decoding whole entries (`files.read_manifest`: statistics maps, partition
records, entry objects, inherited sequence numbers) costs ten times that in time and holds
every entry of a manifest at once. Here the entries are decoded against a projection of
the file's schema with just those two fields: Avro still walks every byte (its encoding
has no offsets), but skips what is not asked for without building it.

pyiceberg's resolver can skip any field the read schema lacks, but its partner accessor
refuses a map, list or struct that has no partner in the read schema; the accessor below
answers "no partner" for those instead, so they are skipped like primitives.
"""

from __future__ import annotations

from pyiceberg.avro.file import AvroFile
from pyiceberg.avro.resolver import ReadSchemaResolver, SchemaPartnerAccessor
from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestEntryStatus
from pyiceberg.schema import Schema, visit_with_partner
from pyiceberg.typedef import Record
from pyiceberg.types import IcebergType, IntegerType, NestedField, StringType, StructType

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


class _PathsFile(AvroFile[Record]):
    """A manifest opened with its own schema, then read through the projection."""

    def __enter__(self) -> _PathsFile:
        super().__enter__()
        self.reader = visit_with_partner(self.schema, _PATHS_ONLY, ReadSchemaResolver({}, {}), _SkippingAccessor())  # type: ignore[arg-type]
        return self


def manifest_paths(io: FileIO, manifest_path: str, *, live_only: bool) -> list[str]:
    """The content files a manifest names (only ADDED/EXISTING entries if `live_only`)."""
    CACHE.manifests_read += 1
    with _PathsFile(io.new_input(manifest_path)) as reader:
        return [entry[1][0] for entry in reader if not live_only or entry[0] != _DELETED]
