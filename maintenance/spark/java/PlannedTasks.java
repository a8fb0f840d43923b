package icemaint;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.UnboundTerm;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.io.CloseableIterable;

/**
 * A snapshot's scan tasks for the data files a rewrite takes, held in the JVM by location.
 *
 * Why this exists: over Py4J every call costs tens of microseconds, and a rewrite of
 * thousands of small files made several calls per file (find its task, stage it, weigh it,
 * name it in the commit): a third of a second per thousand files. Here each of those is one
 * call per group. Lists of locations cross as one newline-separated string, since Py4J turns
 * a Python list into one call per element. Compiled at run time by Spark's Janino
 * (maintenance/spark/java_helpers.py): raw types, no lambdas.
 */
public class PlannedTasks {
  private final HashMap byLocation = new HashMap();
  private HashMap deletesByKey;  // the held tasks' delete files by record key, built on first use
  private boolean filtered;  // the last plan scanned only the wanted partitions

  /**
   * Plans the snapshot's scan and keeps the task of every wanted location; returns those it
   * did not find, newline-separated. `partitions`: the wanted files' partitions (one line
   * each: spec id, then every partition value encoded as `maintenance/spark/planned_tasks.py`
   * says, tab-separated), from which the scan is filtered to those partitions (see
   * `partitionFilter`); when that scan misses a wanted file, or the filter cannot be made, the
   * whole snapshot is planned, as before there was a filter.
   */
  public String plan(Table table, String snapshotId, String wantedLocations, String partitions) throws java.io.IOException {
    HashSet wanted = new HashSet(split(wantedLocations));
    long id = Long.parseLong(snapshotId);
    filtered = false;
    Expression filter = null;
    try {
      filter = partitionFilter(table, id, partitions);
    } catch (RuntimeException e) {
      filter = null;  // a value or a transform we cannot express: the whole snapshot is planned
    }
    if (filter != null && filter.op() != Expression.Operation.TRUE) {
      try {
        TableScan scan = (TableScan) table.newScan().useSnapshot(id).filter(filter);
        keep((TableScan) scan.ignoreResiduals(), wanted);
        filtered = byLocation.size() == wanted.size();
      } catch (RuntimeException e) {
        filtered = false;  // the filter does not bind (a renamed column, a literal of another type): the whole snapshot is planned
      }
    }
    if (!filtered) {
      byLocation.clear();
      keep(table.newScan().useSnapshot(id), wanted);
    }
    StringBuilder missing = new StringBuilder();
    Iterator each = wanted.iterator();
    while (each.hasNext()) {
      String location = (String) each.next();
      if (!byLocation.containsKey(location)) {
        missing.append(location).append('\n');
      }
    }
    return missing.toString();
  }

  /** Whether the last `plan` held only the wanted partitions' files (for tests and logs). */
  public boolean filtered() {
    return filtered;
  }

  private void keep(TableScan scan, HashSet wanted) throws java.io.IOException {
    CloseableIterable tasks = scan.planFiles();
    try {
      Iterator iterator = tasks.iterator();
      while (iterator.hasNext() && byLocation.size() < wanted.size()) {
        FileScanTask task = (FileScanTask) iterator.next();
        String location = ((DataFile) task.file()).location();
        if (wanted.contains(location)) {
          byLocation.put(location, task);
        }
      }
    } finally {
      tasks.close();
    }
  }

  /**
   * A row filter that every row of the wanted partitions satisfies: for each spec, the AND over
   * its fields of "the field's transform of its source column is one of the values the wanted
   * files have" (IS NULL for a null), OR-ed over the specs. It can hold rows of other
   * partitions too (two fields of two partitions cross), never lose one of the wanted.
   *
   * Why the tasks of a scan so filtered apply to each wanted file the deletes the whole
   * snapshot's scan applies (the proof that makes it safe for rewrites and for their
   * verification; checked against Iceberg 1.10.2's source): Iceberg applies to a data file
   * delete files of its own spec and partition, global equality deletes (an unpartitioned
   * spec, or only void fields), and deletion vectors and file-scoped position deletes by the
   * path they name. A data file and the deletes of its spec and partition are judged by the
   * same projection of the filter against the same partition tuple, so a wanted file's own
   * partition's deletes pass whenever the file does; on an unpartitioned spec the projection
   * is always true, so global deletes are read unfiltered. With residuals ignored, Iceberg
   * prunes no delete entry by the filter's column metrics (the delete index gets an
   * always-true entry filter); a delete manifest read with a partition filter only drops
   * delete files of zero records, which delete nothing. A deletion vector or file-scoped
   * delete stored outside its data file's partition (the spec forbids it; 1.10 applies it by
   * path) would be pruned: the caller plans the whole snapshot then
   * (`planned_tasks.partitions_to_scan`). A wanted file the filtered scan loses (no records,
   * bounds that contradict its partition, a spec holding one column twice, whose identity
   * projection Iceberg gets wrong) is caught by `plan`, which plans the whole snapshot; so is
   * any failure of the filtered scan. A field whose value or transform cannot be expressed
   * constrains nothing (the filter only widens).
   */
  static Expression partitionFilter(Table table, long snapshotId, String partitions) {
    Snapshot snapshot = table.snapshot(snapshotId);
    if (snapshot == null || partitions.isEmpty()) {
      return Expressions.alwaysTrue();
    }
    Schema schema = snapshot.schemaId() != null ? (Schema) table.schemas().get(snapshot.schemaId()) : table.schema();
    HashMap valuesBySpec = new HashMap();  // spec id -> one HashSet of encoded values per field
    List lines = split(partitions);
    for (int i = 0; i < lines.size(); i++) {
      String[] parts = ((String) lines.get(i)).split("\t", -1);
      Integer specId = Integer.valueOf(parts[0]);
      PartitionSpec spec = (PartitionSpec) table.specs().get(specId);
      if (spec == null || parts.length - 1 != spec.fields().size()) {
        return Expressions.alwaysTrue();
      }
      HashSet[] values = (HashSet[]) valuesBySpec.get(specId);
      if (values == null) {
        values = new HashSet[spec.fields().size()];
        for (int f = 0; f < values.length; f++) {
          values[f] = new HashSet();
        }
        valuesBySpec.put(specId, values);
      }
      for (int f = 0; f < values.length; f++) {
        values[f].add(parts[f + 1]);
      }
    }
    Expression any = Expressions.alwaysFalse();
    Iterator specs = valuesBySpec.keySet().iterator();
    while (specs.hasNext()) {
      Integer specId = (Integer) specs.next();
      PartitionSpec spec = (PartitionSpec) table.specs().get(specId);
      HashSet[] values = (HashSet[]) valuesBySpec.get(specId);
      Expression all = Expressions.alwaysTrue();
      for (int f = 0; f < values.length; f++) {
        all = Expressions.and(all, fieldFilter(schema, (PartitionField) spec.fields().get(f), values[f]));
      }
      any = Expressions.or(any, all);
    }
    return any;
  }

  private static Expression fieldFilter(Schema schema, PartitionField field, HashSet encoded) {
    Transform transform = field.transform();
    Types.NestedField source = schema.findField(field.sourceId());
    if (transform.isVoid() || source == null) {
      return Expressions.alwaysTrue();
    }
    Type type = transform.getResultType(source.type());
    String name = schema.findColumnName(field.sourceId());
    UnboundTerm term = transform.isIdentity() ? (UnboundTerm) Expressions.ref(name) : (UnboundTerm) Expressions.transform(name, transform);
    ArrayList literals = new ArrayList();
    boolean nulls = false;
    Iterator each = encoded.iterator();
    while (each.hasNext()) {
      String value = (String) each.next();
      if (value.equals("n")) {
        nulls = true;
        continue;
      }
      Object literal = decoded(value, type);
      if (literal == null) {
        return Expressions.alwaysTrue();
      }
      literals.add(literal);
    }
    Expression filter = literals.isEmpty() ? Expressions.alwaysFalse() : Expressions.in(term, literals);
    return nulls ? Expressions.or(filter, Expressions.isNull(term)) : filter;
  }

  /** A partition value as `planned_tasks._encoded` wrote it, as a literal of `type`; null if it is not one. */
  private static Object decoded(String value, Type type) {
    if (value.isEmpty()) {
      return null;
    }
    char kind = value.charAt(0);
    String text = value.substring(1);
    Type.TypeID id = type.typeId();
    if (kind == 'b' && id == Type.TypeID.BOOLEAN) {
      return Boolean.valueOf(text.equals("1"));
    }
    if (kind == 'i' && (id == Type.TypeID.INTEGER || id == Type.TypeID.DATE)) {
      return Integer.valueOf(text);
    }
    if (kind == 'i' && (id == Type.TypeID.LONG || id == Type.TypeID.TIME || id == Type.TypeID.TIMESTAMP || id == Type.TypeID.TIMESTAMP_NANO)) {
      return Long.valueOf(text);
    }
    if (kind == 's' && id == Type.TypeID.STRING) {
      return new String(hex(text), StandardCharsets.UTF_8);
    }
    if (kind == 'd' && id == Type.TypeID.DECIMAL) {
      return new BigDecimal(text);
    }
    if (kind == 'u' && id == Type.TypeID.UUID) {
      return UUID.fromString(text);
    }
    if (kind == 'x' && (id == Type.TypeID.BINARY || id == Type.TypeID.FIXED)) {
      return ByteBuffer.wrap(hex(text));
    }
    return null;
  }

  private static byte[] hex(String text) {
    byte[] bytes = new byte[text.length() / 2];
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
    }
    return bytes;
  }

  /** The tasks of these locations, in their order. */
  public ArrayList tasks(String locations) {
    List wanted = split(locations);
    ArrayList found = new ArrayList(wanted.size());
    for (int i = 0; i < wanted.size(); i++) {
      found.add(task((String) wanted.get(i)));
    }
    return found;
  }

  /** Each task's size as Iceberg packs splits by (data plus its deletes), comma-separated. */
  public String sizes(List tasks) {
    StringBuilder sizes = new StringBuilder();
    for (int i = 0; i < tasks.size(); i++) {
      if (i > 0) {
        sizes.append(',');
      }
      sizes.append(((FileScanTask) tasks.get(i)).sizeBytes());
    }
    return sizes.toString();
  }

  /**
   * The record key of every delete file that applies to a task held, each once,
   * newline-separated: its location, and for a deletion vector "#" and its blob offset
   * (icemaint's `TableFile.key`, `maintenance/table/files.py`).
   */
  public String deleteKeys() {
    StringBuilder keys = new StringBuilder();
    Iterator each = deletesByKey().keySet().iterator();
    while (each.hasNext()) {
      keys.append((String) each.next()).append('\n');
    }
    return keys.toString();
  }

  /** The operation with the delete files of these record keys (see `deleteKeys`) removed. */
  public RewriteFiles removeDeleteFiles(RewriteFiles operation, String keys) {
    HashMap byKey = deletesByKey();
    List wanted = split(keys);
    RewriteFiles result = operation;
    for (int i = 0; i < wanted.size(); i++) {
      DeleteFile file = (DeleteFile) byKey.get(wanted.get(i));
      if (file == null) {
        throw new IllegalArgumentException("no delete file applies to the planned tasks under " + wanted.get(i));
      }
      result = result.deleteFile(file);
    }
    return result;
  }

  private HashMap deletesByKey() {
    if (deletesByKey == null) {
      deletesByKey = new HashMap();
      Iterator each = byLocation.values().iterator();
      while (each.hasNext()) {
        List deletes = ((FileScanTask) each.next()).deletes();
        for (int i = 0; i < deletes.size(); i++) {
          DeleteFile delete = (DeleteFile) deletes.get(i);
          deletesByKey.put(recordKey(delete), delete);
        }
      }
    }
    return deletesByKey;
  }

  private static String recordKey(DeleteFile delete) {
    if (delete.format() == FileFormat.PUFFIN && delete.contentOffset() != null) {
      return delete.location() + "#" + delete.contentOffset();
    }
    return delete.location();
  }

  /** The operation with the data files of these locations removed. */
  public RewriteFiles removeDataFiles(RewriteFiles operation, String locations) {
    List wanted = split(locations);
    RewriteFiles result = operation;
    for (int i = 0; i < wanted.size(); i++) {
      DataFile file = (DataFile) task((String) wanted.get(i)).file();
      result = result.deleteFile(file);
    }
    return result;
  }

  private FileScanTask task(String location) {
    FileScanTask task = (FileScanTask) byLocation.get(location);
    if (task == null) {
      throw new IllegalArgumentException("no scan task planned for " + location);
    }
    return task;
  }

  private static List split(String joined) {
    ArrayList parts = new ArrayList();
    int start = 0;
    while (start < joined.length()) {
      int end = joined.indexOf('\n', start);
      if (end < 0) {
        end = joined.length();
      }
      parts.add(joined.substring(start, end));
      start = end + 1;
    }
    return parts;
  }
}
