package icemaint;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * The digest of the multiset of a snapshot's live entries, read by Iceberg's own manifest
 * readers (so with the sequence numbers and first row ids Iceberg's planning inherits).
 *
 * Why this exists: a rewrite of manifests, or anything else that should leave a snapshot's
 * entries alone, is verified by comparing this digest on both sides. Reading the entries in
 * the JVM, data manifests without their column statistics, takes a tenth of a second for the
 * ten thousand entries of a thousand commits, where decoding them in Python takes over one.
 *
 * An entry is its content, location, data and file sequence numbers, spec id, partition
 * values, record count, size, equality field ids, the data file it references, first row id,
 * blob offset and size, and the statistics Iceberg's planning decides by which delete
 * applies to which data file (DeleteFileIndex: lower and upper bounds, null and value
 * counts; a narrowed bound could stop a delete from applying); each is hashed (SHA-256) and
 * the hashes are added modulo 2^256,
 * so the order of entries and manifests does not matter and a lost, duplicated or changed
 * entry changes the sum. Compiled at run time by Spark's Janino
 * (maintenance/spark/java_helpers.py): raw types, no lambdas.
 */
public class LiveEntries {
  private static final BigInteger MODULUS = BigInteger.ONE.shiftLeft(256);
  private static final List DATA_COLUMNS = Arrays.asList(new String[] {
      "content", "file_path", "partition", "record_count", "file_size_in_bytes", "first_row_id",
      "lower_bounds", "upper_bounds", "null_value_counts", "value_counts"});

  private long count;
  private String digest;

  /**
   * Reads the live entries of the snapshot (`positionDeletes` false: every live entry but
   * position delete files and DVs, what a change that rewrites only those must leave alone;
   * the positions they delete are compared apart); `count` and `digest` then say what it read.
   */
  public void read(Table table, String snapshotId, boolean positionDeletes) throws java.io.IOException, NoSuchAlgorithmException {
    Snapshot snapshot = table.snapshot(Long.parseLong(snapshotId));
    if (snapshot == null) {
      throw new IllegalArgumentException("table has no snapshot " + snapshotId);
    }
    Map specs = table.specs();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    BigInteger sum = BigInteger.ZERO;
    long entries = 0;
    Iterator manifests = snapshot.allManifests(table.io()).iterator();
    while (manifests.hasNext()) {
      ManifestFile manifest = (ManifestFile) manifests.next();
      if (!manifest.hasAddedFiles() && !manifest.hasExistingFiles()) {
        continue;  // only deleted entries (as Iceberg's planning skips it)
      }
      ManifestReader reader = manifest.content() == ManifestContent.DATA
          ? ManifestFiles.read(manifest, table.io(), specs).select(DATA_COLUMNS)
          : ManifestFiles.readDeleteManifest(manifest, table.io(), specs);
      try {
        Iterator files = reader.iterator();
        while (files.hasNext()) {
          ContentFile file = (ContentFile) files.next();
          if (!positionDeletes && file.content() == org.apache.iceberg.FileContent.POSITION_DELETES) {
            continue;
          }
          byte[] hash = sha.digest(entry(file, (PartitionSpec) specs.get(Integer.valueOf(file.specId()))).getBytes(StandardCharsets.UTF_8));
          sum = sum.add(new BigInteger(1, hash));
          entries++;
        }
      } finally {
        reader.close();
      }
    }
    count = entries;
    digest = sum.mod(MODULUS).toString(16);
  }

  /** How many live entries the last `read` read. */
  public long count() {
    return count;
  }

  /** Their digest (hexadecimal). */
  public String digest() {
    return digest;
  }

  private static String entry(ContentFile file, PartitionSpec spec) {
    StringBuilder text = new StringBuilder();
    text.append(file.content().id()).append('|').append(file.location())
        .append('|').append(file.dataSequenceNumber()).append('|').append(file.fileSequenceNumber())
        .append('|').append(file.specId()).append('|');
    StructLike partition = file.partition();
    int fields = spec == null ? partition.size() : spec.fields().size();
    for (int i = 0; i < fields; i++) {
      text.append(value(partition.get(i, Object.class))).append(',');
    }
    text.append('|').append(file.recordCount()).append('|').append(file.fileSizeInBytes())
        .append('|').append(file.equalityFieldIds())
        .append('|').append(file instanceof DeleteFile ? ContentFileUtil.referencedDataFileLocation((DeleteFile) file) : null)
        .append('|').append(file.firstRowId());
    appendMap(text, file.lowerBounds());
    appendMap(text, file.upperBounds());
    appendMap(text, file.nullValueCounts());
    appendMap(text, file.valueCounts());
    if (file instanceof DeleteFile) {
      DeleteFile delete = (DeleteFile) file;
      text.append('|').append(delete.contentOffset()).append('|').append(delete.contentSizeInBytes());
    }
    return text.toString();
  }

  /** A map of statistics by field id, in field id order (null stays null). */
  private static void appendMap(StringBuilder text, Map map) {
    text.append('|');
    if (map == null) {
      text.append("null");
      return;
    }
    Iterator keys = new java.util.TreeMap(map).entrySet().iterator();
    while (keys.hasNext()) {
      Map.Entry entry = (Map.Entry) keys.next();
      text.append(entry.getKey()).append('=').append(value(entry.getValue())).append(',');
    }
  }

  /** A partition value as text that depends on the value only (a buffer's bytes, not its identity). */
  private static String value(Object value) {
    if (value instanceof ByteBuffer) {
      ByteBuffer bytes = (ByteBuffer) ((ByteBuffer) value).duplicate();
      StringBuilder hex = new StringBuilder("0x");
      while (bytes.hasRemaining()) {
        hex.append(Integer.toHexString(0x100 | (bytes.get() & 0xff)).substring(1));
      }
      return hex.toString();
    }
    if (value instanceof byte[]) {
      return value(ByteBuffer.wrap((byte[]) value));
    }
    return value == null ? "null" : value.getClass().getSimpleName() + ":" + value;
  }
}
