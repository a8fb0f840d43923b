package icemaint;

import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * The positions that position delete files and DVs committed after a rewrite planned delete
 * in the data files it replaces (maintenance/jobs/file_groups/rebase.py says why).
 *
 * `positions` walks the snapshots from `base` back to `planning` (each one's parent): every
 * delete file one of them added with position content is read by Iceberg's own delete loader
 * (`BaseDeleteLoader`: a DV's blob, checked; a v2 file's entries for one data file), for each
 * replaced data file it may name (its referenced data file: a DV's, or a v2 file's whose
 * path bounds are one file, as Iceberg's `ContentFileUtil` reads it; or every one when it
 * names none).
 * Deleted positions only accumulate, so the union over every added file is what the base
 * snapshot deletes beyond the planning one (a DV that replaces an older one holds the older
 * one's positions too; the caller keeps only positions of rows that were live at planning).
 * Answer: "!" when `planning` is not an ancestor of `base` (the history was rewritten: no
 * rebase), else one line per data file with positions, "FILES\tLOCATION\tPOS,POS,...", where
 * FILES counts the delete files that named it, after one line "-\tKEY" per delete file those
 * snapshots removed (its record key: the location, "#" and the blob offset for a DV; a writer
 * that deletes in a file replaces the file-scoped deletes it had). The live ones among the
 * added files that name one replaced file are kept for `removeFileScoped`: a rewrite of that
 * file removes them in its commit (they would delete nothing after it, and Iceberg's
 * RewriteFiles adds delete files only where it removes some). Janino: raw types, no lambdas.
 */
public class ConcurrentPositionDeletes {
  /** Of the last `positions` call: the live delete files (added since planning, not removed since) that name one replaced file. */
  private java.util.List fileScoped = new java.util.ArrayList();

  /** `operation` (a RewriteFiles) removing `fileScoped`: they name only a file it replaces. */
  public org.apache.iceberg.RewriteFiles removeFileScoped(org.apache.iceberg.RewriteFiles operation) {
    Iterator files = fileScoped.iterator();
    while (files.hasNext()) {
      operation = operation.deleteFile((DeleteFile) files.next());
    }
    return operation;
  }

  public int fileScopedCount() {
    return fileScoped.size();
  }

  /** Of the last `positions` call: the live delete files added since planning that name no one data file and delete in a replaced one. */
  private java.util.List partitionScoped = new java.util.ArrayList();

  public java.util.List partitionScoped() {
    return partitionScoped;
  }

  public String positions(final Table table, String planning, String base, String replacedPaths) {
    Set replaced = new HashSet(java.util.Arrays.asList(replacedPaths.split("\n")));
    long planningId = Long.parseLong(planning);
    Snapshot snapshot = table.snapshot(Long.parseLong(base));
    java.util.List added = new java.util.ArrayList();
    Set goneKeys = new HashSet();
    StringBuilder out = new StringBuilder();
    while (snapshot != null && snapshot.snapshotId() != planningId) {
      Iterator gone = snapshot.removedDeleteFiles(table.io()).iterator();
      while (gone.hasNext()) {
        String key = key((DeleteFile) gone.next());
        goneKeys.add(key);
        out.append("-\t").append(key).append('\n');
      }
      Iterator files = snapshot.addedDeleteFiles(table.io()).iterator();
      while (files.hasNext()) {
        DeleteFile file = (DeleteFile) files.next();
        if (file.content() == FileContent.POSITION_DELETES) {
          added.add(file);
        }
      }
      snapshot = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId().longValue());
    }
    if (snapshot == null) {
      return "!";
    }
    fileScoped = new java.util.ArrayList();
    partitionScoped = new java.util.ArrayList();
    Iterator live = added.iterator();
    while (live.hasNext()) {
      DeleteFile file = (DeleteFile) live.next();
      String referenced = ContentFileUtil.referencedDataFileLocation(file);
      if (referenced != null && replaced.contains(referenced) && !goneKeys.contains(key(file))) {
        fileScoped.add(file);
      }
    }
    BaseDeleteLoader loader = new BaseDeleteLoader(new java.util.function.Function() {
      public Object apply(Object file) {
        return table.io().newInputFile((DeleteFile) file);
      }
    });
    Map deleted = new TreeMap();
    Map namedBy = new TreeMap();
    Iterator files = added.iterator();
    while (files.hasNext()) {
      DeleteFile file = (DeleteFile) files.next();
      java.util.Collection targets;
      String referenced = ContentFileUtil.referencedDataFileLocation(file);
      if (referenced != null) {
        targets = replaced.contains(referenced) ? java.util.Collections.singletonList(referenced) : java.util.Collections.EMPTY_LIST;
      } else {
        targets = replaced;
      }
      Iterator paths = targets.iterator();
      while (paths.hasNext()) {
        String path = (String) paths.next();
        PositionDeleteIndex index = loader.loadPositionDeletes(java.util.Collections.singletonList(file), path);
        if (index.isEmpty()) {
          continue;
        }
        if (referenced == null && !goneKeys.contains(key(file)) && !partitionScoped.contains(file)) {
          partitionScoped.add(file);
        }
        final Set positions = deleted.containsKey(path) ? (Set) deleted.get(path) : new TreeSet();
        deleted.put(path, positions);
        namedBy.put(path, Integer.valueOf((namedBy.containsKey(path) ? ((Integer) namedBy.get(path)).intValue() : 0) + 1));
        index.forEach(new java.util.function.LongConsumer() {
          public void accept(long position) {
            positions.add(Long.valueOf(position));
          }
        });
      }
    }
    Iterator entries = deleted.entrySet().iterator();
    while (entries.hasNext()) {
      Map.Entry entry = (Map.Entry) entries.next();
      out.append(namedBy.get(entry.getKey())).append('\t').append(entry.getKey()).append('\t');
      Iterator positions = ((Set) entry.getValue()).iterator();
      boolean first = true;
      while (positions.hasNext()) {
        if (!first) {
          out.append(',');
        }
        out.append(positions.next());
        first = false;
      }
      out.append('\n');
    }
    return out.toString();
  }

  /** A delete file record's key: its location, and a DV's blob offset. */
  private static String key(DeleteFile file) {
    return file.contentOffset() == null ? file.location() : file.location() + "#" + file.contentOffset();
  }
}
