package icemaint;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;

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

  /** Plans the snapshot's scan and keeps the task of every wanted location; returns those it did not find, newline-separated. */
  public String plan(Table table, String snapshotId, String wantedLocations) throws java.io.IOException {
    HashSet wanted = new HashSet(split(wantedLocations));
    CloseableIterable tasks = table.newScan().useSnapshot(Long.parseLong(snapshotId)).planFiles();
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

  /**
   * The record keys of every data and delete file a snapshot removed, newline-separated:
   * Iceberg's own diff (the DELETED entries of the manifests the snapshot wrote), read in the
   * JVM (verification's scope, maintenance/jobs/verification.py).
   */
  public String removedKeys(Table table, String snapshotId) throws InterruptedException {
    Snapshot snapshot = table.snapshot(Long.parseLong(snapshotId));
    snapshot.allManifests(table.io());  // the manifest list, read once before two threads ask for it
    // A rewrite's commit rewrites every manifest it removes a file from: the data and the
    // delete manifests are read side by side (measured: 0.17-0.43 s in one thread for the
    // 80 manifests of a one-partition compaction of a 40-commit table).
    RemovedDeletes deletes = new RemovedDeletes(snapshot, table.io());
    deletes.start();
    StringBuilder keys = new StringBuilder();
    Iterator data = snapshot.removedDataFiles(table.io()).iterator();
    while (data.hasNext()) {
      keys.append(((DataFile) data.next()).location()).append('\n');
    }
    deletes.join();
    if (deletes.failure != null) {
      throw deletes.failure;
    }
    return keys.append(deletes.keys).toString();
  }

  /** The record keys of the delete files a snapshot removed, read in a thread of its own. */
  private static class RemovedDeletes extends Thread {
    private final Snapshot snapshot;
    private final FileIO io;
    private final StringBuilder keys = new StringBuilder();
    private RuntimeException failure;

    RemovedDeletes(Snapshot snapshot, FileIO io) {
      this.snapshot = snapshot;
      this.io = io;
      setDaemon(true);
      setName("icemaint-removed-deletes");
    }

    public void run() {
      try {
        Iterator deletes = snapshot.removedDeleteFiles(io).iterator();
        while (deletes.hasNext()) {
          keys.append(recordKey((DeleteFile) deletes.next())).append('\n');
        }
      } catch (RuntimeException e) {
        failure = e;
      }
    }
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
