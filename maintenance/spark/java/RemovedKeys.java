package icemaint;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The snapshot diff: the record keys of every data and delete file a snapshot removed,
 * Iceberg's own diff (the DELETED entries of the manifests the snapshot wrote, as
 * `BaseSnapshot.removedDataFiles` and `removedDeleteFiles` find them), read in the JVM for
 * verification's scope (maintenance/publish/proofs/rows.py, deleted_rows.py; the Python door
 * is maintenance/spark/snapshot_diff.py).
 *
 * Why this exists: a rewrite's commit rewrites every manifest it removes a file from, all 80
 * of a streaming table's when one partition of 64 is compacted. Each manifest is read here
 * with only the columns a record key needs, the data and the delete manifests side by side:
 * reading their entries whole (every column's bounds and counts) took 0.10-0.27 s against
 * 0.07-0.13 s projected (measured on 2 cores, 108 keys). The keys cross as one
 * newline-separated string, since Py4J reads a Java collection one element per call.
 *
 * `ManifestReader.entries()` (every entry, the deleted ones too) and the entry's accessors
 * are package-private in Iceberg 1.10 and 1.11: they are reached by reflection (Iceberg's
 * classes are in the unnamed module, so no module boundary stands in the way). Compiled at
 * run time by Spark's Janino (maintenance/spark/java_helpers.py): raw types, no lambdas.
 */
public class RemovedKeys {
  /** The record keys of the files snapshot `snapshotId` of `table` removed, newline-separated. */
  public String of(Table table, String snapshotId) throws Exception {
    Snapshot snapshot = table.snapshot(Long.parseLong(snapshotId));
    Reading deletes = new Reading(table, snapshot, snapshot.deleteManifests(table.io()));
    deletes.start();
    Reading data = new Reading(table, snapshot, snapshot.dataManifests(table.io()));
    data.run();
    deletes.join();
    if (data.failure != null) {
      throw data.failure;
    }
    if (deletes.failure != null) {
      throw deletes.failure;
    }
    return data.keys.append(deletes.keys).toString();
  }

  /**
   * The record keys of the files that some manifests of a snapshot list as DELETED, reading
   * only the manifests the snapshot wrote (as Iceberg's diff does: a manifest another
   * snapshot wrote lists nothing this one removed) and only the columns of a record key.
   */
  private static class Reading extends Thread {
    private static final List DATA_COLUMNS = Arrays.asList(new String[] {"file_path"});
    private static final List DELETE_COLUMNS = Arrays.asList(new String[] {"file_path", "file_format", "content_offset"});
    private final Table table;
    private final long snapshotId;
    private final List manifests;
    private final StringBuilder keys = new StringBuilder();
    private Exception failure;

    Reading(Table table, Snapshot snapshot, List manifests) {
      this.table = table;
      this.snapshotId = snapshot.snapshotId();
      this.manifests = manifests;
      setDaemon(true);
      setName("icemaint-removed-keys");
    }

    public void run() {
      try {
        Method entries = ManifestReader.class.getDeclaredMethod("entries", new Class[0]);
        entries.setAccessible(true);
        Class entryClass = Class.forName("org.apache.iceberg.ManifestEntry");
        Method status = entryClass.getDeclaredMethod("status", new Class[0]);
        status.setAccessible(true);
        Method file = entryClass.getDeclaredMethod("file", new Class[0]);
        file.setAccessible(true);
        for (int i = 0; i < manifests.size(); i++) {
          ManifestFile manifest = (ManifestFile) manifests.get(i);
          if (manifest.snapshotId() == null || manifest.snapshotId().longValue() != snapshotId) {
            continue;
          }
          boolean data = manifest.content() == ManifestContent.DATA;
          ManifestReader reader = data
              ? ManifestFiles.read(manifest, table.io(), table.specs()).select(DATA_COLUMNS)
              : ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs()).select(DELETE_COLUMNS);
          try {
            Iterator each = ((Iterable) entries.invoke(reader, new Object[0])).iterator();
            while (each.hasNext()) {
              Object entry = each.next();
              if ("DELETED".equals(String.valueOf(status.invoke(entry, new Object[0])))) {
                Object removed = file.invoke(entry, new Object[0]);
                keys.append(data ? ((DataFile) removed).location() : recordKey((DeleteFile) removed)).append('\n');
              }
            }
          } finally {
            reader.close();
          }
        }
      } catch (java.lang.reflect.InvocationTargetException e) {
        failure = e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
      } catch (Exception e) {
        failure = e;
      }
    }
  }

  /** A delete file's record key, as `TableFile.key` (maintenance/table/files.py) spells it:
   *  its location, and a DV's blob offset (PlannedTasks keeps the same rule for its own keys). */
  private static String recordKey(DeleteFile delete) {
    if (delete.format() == FileFormat.PUFFIN && delete.contentOffset() != null) {
      return delete.location() + "#" + delete.contentOffset();
    }
    return delete.location();
  }
}
