package icemaint;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.CloseableIterator;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;
import org.apache.iceberg.util.StructLikeMap;
import org.apache.iceberg.util.StructLikeSet;
import org.apache.iceberg.util.StructProjection;

/**
 * The rows each data file has deleted in two snapshots of a table that hold the same data
 * files, as readers of each snapshot delete them: the "deleted rows" proof of a change that
 * rewrites only delete files (CONVERT, REWRITE; maintenance/publish/proofs/deleted_rows.py states it).
 *
 * Each side is given as Iceberg's own scan tasks of the same data files, planned on that
 * snapshot (maintenance/spark/planned_tasks.py): a task carries every delete Iceberg's
 * planner applies to its file there, so which delete applies where is the planner's, not
 * icemaint's rule. For each data file, a row is deleted on a side when its position is in
 * the side's position deletes or deletion vector (Iceberg's delete loader) or its
 * equality-field values are in one of the side's equality deletes (matched as Iceberg's
 * readers match them: the delete loader's rows, keyed in a StructLikeMap of the same
 * struct types, the data file's values wrapped as `DeleteFilter` wraps them). A data file
 * is read, with only its equality-field columns and `_pos` and by Iceberg's generic reader,
 * only when an equality delete applies to it on a side; otherwise its deleted rows are the
 * positions below its record count. No other column of a data file is read.
 *
 * Per side, each file's deleted positions are hashed in ascending order into one SHA-256
 * with its location, the hashes added modulo 2^256 and the rows counted; the first file
 * whose rows differ is named. Compiled at run time by Spark's Janino
 * (maintenance/spark/java_helpers.py): raw types, no lambdas.
 */
public class DeletedRows {
  private static final BigInteger MODULUS = BigInteger.ONE.shiftLeft(256);

  private final long[] rows = new long[2];
  private final BigInteger[] digests = new BigInteger[] {BigInteger.ZERO, BigInteger.ZERO};
  private final AtomicLong filesRead = new AtomicLong();
  private final AtomicLong rowsRead = new AtomicLong();
  private final AtomicLong bytesRead = new AtomicLong();
  private String difference = null;
  private long loadNanos = 0;
  private long compareNanos = 0;

  /** Rows deleted in the scope's data files on side 0 (before) or 1 (after). */
  public long rows(int side) {
    return rows[side];
  }

  /** The digest of side 0 or 1, in hex. */
  public String digest(int side) {
    return digests[side].toString(16);
  }

  /** Data files read (those an equality delete applies to on a side). */
  public long filesRead() {
    return filesRead.get();
  }

  public long rowsRead() {
    return rowsRead.get();
  }

  /** The bytes of the columns read, as the data files' metadata sizes them (the whole file where it does not). */
  public long bytesRead() {
    return bytesRead.get();
  }

  /** Nanoseconds reading the equality deletes, and comparing the data files (reading them where needed). */
  public long loadNanos() {
    return loadNanos;
  }

  public long compareNanos() {
    return compareNanos;
  }

  /** The first data file whose deleted rows differ, with how, or null. */
  public String difference() {
    return difference;
  }

  /**
   * `before`, `after`: java.util.Lists of FileScanTask, one per data file, the same data
   * files in the same order, planned on the parent and on the staged snapshot; `threads`:
   * data files read at once (0: one per core).
   */
  public void compare(final Table table, List before, List after, int threads) throws Exception {
    if (threads <= 0) {
      threads = Runtime.getRuntime().availableProcessors();
    }
    if (before.size() != after.size()) {
      throw new IllegalArgumentException("the two sides hold " + before.size() + " and " + after.size() + " data files");
    }
    final DeleteLoading loading = new DeleteLoading(table);
    final Schema readSchema = readSchema(table.schema(), before, after);
    long started = System.nanoTime();
    final Map groups = loading.equalityGroups(readSchema, before, after, threads);
    loadNanos = System.nanoTime() - started;
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads), new ThreadFactory() {
      public Thread newThread(Runnable runnable) {
        Thread thread = new Thread(runnable, "icemaint-deleted-rows");
        thread.setDaemon(true);
        return thread;
      }
    });
    try {
      List futures = new ArrayList();
      for (int i = 0; i < before.size(); i++) {
        final FileScanTask one = (FileScanTask) before.get(i);
        final FileScanTask other = (FileScanTask) after.get(i);
        if (!one.file().location().equals(other.file().location())) {
          throw new IllegalArgumentException("data file " + i + " is " + one.file().location() + " before and " + other.file().location() + " after");
        }
        futures.add(pool.submit(new Callable() {
          public Object call() throws Exception {
            return fileDigests(table, loading, readSchema, groups, one, other);
          }
        }));
      }
      for (int i = 0; i < futures.size(); i++) {
        FileResult result = (FileResult) ((Future) futures.get(i)).get();
        for (int side = 0; side < 2; side++) {
          rows[side] += result.rows[side];
          digests[side] = digests[side].add(result.digests[side]).mod(MODULUS);
        }
        if (difference == null && result.difference != null) {
          difference = result.difference;
        }
      }
    } finally {
      pool.shutdownNow();
      compareNanos = System.nanoTime() - started - loadNanos;
    }
  }

  /** Every equality delete the scan tasks of either side carry, once each, by location. */
  static Map equalityDeletes(List before, List after) {
    Map files = new HashMap();  // location -> DeleteFile
    List[] sides = new List[] {before, after};
    for (int s = 0; s < 2; s++) {
      for (int i = 0; i < sides[s].size(); i++) {
        Iterator deletes = ((FileScanTask) sides[s].get(i)).deletes().iterator();
        while (deletes.hasNext()) {
          DeleteFile delete = (DeleteFile) deletes.next();
          if (delete.content() == FileContent.EQUALITY_DELETES) {
            files.put(delete.location(), delete);
          }
        }
      }
    }
    return files;
  }

  /** The columns a data file is read with: every equality field of either side, then `_pos`. */
  private static Schema readSchema(Schema tableSchema, List before, List after) {
    Set ids = new TreeSet();
    Iterator equality = equalityDeletes(before, after).values().iterator();
    while (equality.hasNext()) {
      ids.addAll(((DeleteFile) equality.next()).equalityFieldIds());
    }
    List columns = new ArrayList();
    Iterator each = ids.iterator();
    while (each.hasNext()) {
      Integer id = (Integer) each.next();
      Types.NestedField field = tableSchema.findField(id.intValue());
      if (field == null) {
        throw new IllegalArgumentException("Cannot find required field for ID " + id);
      }
      columns.add(field);
    }
    columns.add(MetadataColumns.ROW_POSITION);
    return new Schema(columns);
  }

  /** One data file's deleted rows on both sides. */
  private FileResult fileDigests(Table table, DeleteLoading loading, Schema readSchema, Map groups, FileScanTask one, FileScanTask other)
      throws Exception {
    FileScanTask[] tasks = new FileScanTask[] {one, other};
    DataFile file = (DataFile) one.file();
    String location = file.location();
    PositionDeleteIndex[] positions = new PositionDeleteIndex[2];
    List[] equality = new List[] {new ArrayList(), new ArrayList()};  // per side: EqualityGroup.Applying
    boolean read = false;
    for (int side = 0; side < 2; side++) {
      List positional = new ArrayList();
      Map applying = new HashMap();  // group -> locations
      Iterator deletes = tasks[side].deletes().iterator();
      while (deletes.hasNext()) {
        DeleteFile delete = (DeleteFile) deletes.next();
        if (delete.content() == FileContent.POSITION_DELETES) {
          positional.add(delete);
        } else {
          EqualityGroup group = (EqualityGroup) groups.get(EqualityGroup.idsOf(delete));
          Set locations = (Set) applying.get(group);
          if (locations == null) {
            locations = new HashSet();
            applying.put(group, locations);
          }
          locations.add(delete.location());
          read = true;
        }
      }
      positions[side] = positional.isEmpty() ? null : loading.loader.loadPositionDeletes(positional, location);
      Iterator groupsApplying = applying.entrySet().iterator();
      while (groupsApplying.hasNext()) {
        Map.Entry entry = (Map.Entry) groupsApplying.next();
        equality[side].add(new Applying((EqualityGroup) entry.getKey(), (Set) entry.getValue(), readSchema));
      }
    }
    FileResult result = new FileResult(location);
    if (read) {
      readRows(table, readSchema, one, positions, equality, result);
    } else {
      positionsOnly(file.recordCount(), positions, result);
    }
    result.finish();
    return result;
  }

  /** Both sides' deleted rows of a data file some equality delete applies to: its rows read. */
  private void readRows(Table table, Schema readSchema, FileScanTask task, PositionDeleteIndex[] positions, List[] equality, FileResult result)
      throws Exception {
    Map constants = PartitionUtil.constantsMap(task, new java.util.function.BiFunction() {
      public Object apply(Object type, Object value) {
        return IdentityPartitionConverters.convertConstant((Type) type, value);
      }
    });
    CloseableIterable records = FormatModelRegistry.readBuilder(((DataFile) task.file()).format(), Record.class, table.io().newInputFile((DataFile) task.file()))
        .project(readSchema)
        .idToConstant(constants)
        .reuseContainers()
        .build();
    InternalRecordWrapper wrapper = new InternalRecordWrapper(readSchema.asStruct());
    int positionIndex = readSchema.columns().size() - 1;
    long count = 0;
    CloseableIterator iterator = records.iterator();
    try {
      while (iterator.hasNext()) {
        Record record = (Record) iterator.next();
        long position = ((Long) record.get(positionIndex, Long.class)).longValue();
        StructLike row = wrapper.wrap(record);
        boolean[] deleted = new boolean[2];
        for (int side = 0; side < 2; side++) {
          deleted[side] = (positions[side] != null && positions[side].isDeleted(position)) || anyMatches(equality[side], row);
        }
        result.row(position, deleted);
        count++;
      }
    } finally {
      iterator.close();
      records.close();
    }
    filesRead.incrementAndGet();
    rowsRead.addAndGet(count);
    bytesRead.addAndGet(columnBytes((DataFile) task.file(), readSchema));
  }

  private static long columnBytes(DataFile file, Schema readSchema) {
    Map sizes = file.columnSizes();
    long bytes = 0;
    for (int i = 0; i < readSchema.columns().size() - 1; i++) {  // not _pos
      Object size = sizes == null ? null : sizes.get(Integer.valueOf(((Types.NestedField) readSchema.columns().get(i)).fieldId()));
      if (size == null) {
        return file.fileSizeInBytes();
      }
      bytes += ((Long) size).longValue();
    }
    return bytes;
  }

  private static boolean anyMatches(List applying, StructLike row) {
    for (int i = 0; i < applying.size(); i++) {
      if (((Applying) applying.get(i)).matches(row)) {
        return true;
      }
    }
    return false;
  }

  /** Both sides' deleted rows of a data file no equality delete applies to: its deleted positions below its record count. */
  private static void positionsOnly(long records, PositionDeleteIndex[] positions, FileResult result) {
    long[][] sorted = new long[2][];
    for (int side = 0; side < 2; side++) {
      sorted[side] = positionsBelow(positions[side], records);
    }
    int[] at = new int[2];
    while (at[0] < sorted[0].length || at[1] < sorted[1].length) {
      long next = Long.MAX_VALUE;
      for (int side = 0; side < 2; side++) {
        if (at[side] < sorted[side].length && sorted[side][at[side]] < next) {
          next = sorted[side][at[side]];
        }
      }
      boolean[] deleted = new boolean[2];
      for (int side = 0; side < 2; side++) {
        if (at[side] < sorted[side].length && sorted[side][at[side]] == next) {
          deleted[side] = true;
          at[side]++;
        }
      }
      result.row(next, deleted);
    }
  }

  private static long[] positionsBelow(PositionDeleteIndex index, final long records) {
    if (index == null) {
      return new long[0];
    }
    final long[][] positions = new long[][] {new long[64]};
    final int[] size = new int[] {0};
    index.forEach(new java.util.function.LongConsumer() {
      public void accept(long position) {
        if (position < 0 || position >= records) {
          return;  // names no row of the file: deletes nothing
        }
        if (size[0] == positions[0].length) {
          positions[0] = Arrays.copyOf(positions[0], size[0] * 2);
        }
        positions[0][size[0]++] = position;
      }
    });
    long[] sorted = Arrays.copyOf(positions[0], size[0]);
    Arrays.sort(sorted);
    int unique = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (i == 0 || sorted[i] != sorted[i - 1]) {
        sorted[unique++] = sorted[i];
      }
    }
    return Arrays.copyOf(sorted, unique);
  }

  /** Loads delete files once each: position delete files cached whole (they apply to many data files), equality deletes per group. */
  private static class DeleteLoading {
    final Table table;
    final Map cache = new ConcurrentHashMap();
    final AtomicLong cached = new AtomicLong();
    final long budget = Runtime.getRuntime().maxMemory() / 8;
    final BaseDeleteLoader loader;

    DeleteLoading(final Table table) {
      this.table = table;
      final DeleteLoading self = this;
      this.loader = new BaseDeleteLoader(new java.util.function.Function() {
        public Object apply(Object file) {
          return table.io().newInputFile((DeleteFile) file);
        }
      }, null) {  // no pool: each data file's thread loads its own deletes
        protected boolean canCache(long size) {
          return self.cached.get() + size <= self.budget;
        }

        protected Object getOrLoad(String key, final java.util.function.Supplier supplier, long size) {
          Object value = self.cache.get(key);
          if (value == null) {
            value = supplier.get();
            Object raced = self.cache.putIfAbsent(key, value);
            if (raced != null) {
              value = raced;
            } else {
              self.cached.addAndGet(size);
            }
          }
          return value;
        }
      };
    }

    /** Every equality delete of either side, each read once, by its set of equality field ids. */
    Map equalityGroups(Schema readSchema, List before, List after, int threads) throws Exception {
      Map files = equalityDeletes(before, after);
      final Map groups = new HashMap();
      final List ordered = new ArrayList(files.values());
      for (int i = 0; i < ordered.size(); i++) {
        List ids = EqualityGroup.idsOf((DeleteFile) ordered.get(i));
        if (!groups.containsKey(ids)) {
          groups.put(ids, new EqualityGroup(ids, TypeUtil.selectInIdOrder(readSchema, new HashSet(ids))));
        }
      }
      ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
      try {
        List loads = new ArrayList();
        for (int i = 0; i < ordered.size(); i++) {
          final DeleteFile delete = (DeleteFile) ordered.get(i);
          final EqualityGroup group = (EqualityGroup) groups.get(EqualityGroup.idsOf(delete));
          loads.add(pool.submit(new Callable() {
            public Object call() {
              return loader.loadEqualityDeletes(Collections.singletonList(delete), group.schema);
            }
          }));
        }
        for (int i = 0; i < ordered.size(); i++) {
          DeleteFile delete = (DeleteFile) ordered.get(i);
          EqualityGroup group = (EqualityGroup) groups.get(EqualityGroup.idsOf(delete));
          group.add(delete.location(), (StructLikeSet) ((Future) loads.get(i)).get());
        }
      } finally {
        pool.shutdownNow();
      }
      return groups;
    }
  }

  /** The equality deletes of one set of equality field ids: each key, with the delete files that hold it. */
  private static class EqualityGroup {
    final List ids;
    final Schema schema;
    final StructLikeMap keys;

    EqualityGroup(List ids, Schema schema) {
      this.ids = ids;
      this.schema = schema;
      this.keys = StructLikeMap.create(schema.asStruct());
    }

    static List idsOf(DeleteFile delete) {
      List ids = new ArrayList(new TreeSet(delete.equalityFieldIds()));
      return ids;
    }

    void add(String location, StructLikeSet rows) {
      Iterator each = rows.iterator();
      while (each.hasNext()) {
        StructLike key = (StructLike) each.next();
        Set holders = (Set) keys.get(key);
        if (holders == null) {
          holders = new HashSet();
          keys.put(key, holders);
        }
        holders.add(location);
      }
    }
  }

  /** One side's equality deletes of one group applying to one data file (its own projection: not thread-safe). */
  private static class Applying {
    final EqualityGroup group;
    final Set locations;
    final StructProjection projection;

    Applying(EqualityGroup group, Set locations, Schema readSchema) {
      this.group = group;
      this.locations = locations;
      this.projection = StructProjection.create(readSchema, group.schema);
    }

    boolean matches(StructLike row) {
      Set holders = (Set) group.keys.get(projection.wrap(row));
      if (holders == null) {
        return false;
      }
      Iterator each = holders.iterator();
      while (each.hasNext()) {
        if (locations.contains(each.next())) {
          return true;
        }
      }
      return false;
    }
  }

  /** One data file's deleted positions on both sides, hashed as they come (ascending). */
  private static class FileResult {
    final String location;
    final MessageDigest[] hashes = new MessageDigest[2];
    final long[] rows = new long[2];
    final BigInteger[] digests = new BigInteger[2];
    long onlyBefore = 0;
    long onlyAfter = 0;
    long firstDifferent = -1;
    String difference = null;

    FileResult(String location) throws Exception {
      this.location = location;
      for (int side = 0; side < 2; side++) {
        hashes[side] = MessageDigest.getInstance("SHA-256");
        hashes[side].update(location.getBytes(StandardCharsets.UTF_8));
      }
    }

    void row(long position, boolean[] deleted) {
      byte[] bytes = new byte[] {
          (byte) (position >>> 56), (byte) (position >>> 48), (byte) (position >>> 40), (byte) (position >>> 32),
          (byte) (position >>> 24), (byte) (position >>> 16), (byte) (position >>> 8), (byte) position};
      for (int side = 0; side < 2; side++) {
        if (deleted[side]) {
          hashes[side].update(bytes);
          rows[side]++;
        }
      }
      if (deleted[0] != deleted[1]) {
        if (firstDifferent < 0) {
          firstDifferent = position;
        }
        if (deleted[0]) {
          onlyBefore++;
        } else {
          onlyAfter++;
        }
      }
    }

    void finish() {
      for (int side = 0; side < 2; side++) {
        digests[side] = new BigInteger(1, hashes[side].digest());
      }
      if (onlyBefore + onlyAfter > 0) {
        difference = location + ": " + onlyBefore + " row(s) deleted only before, " + onlyAfter + " only after (first at position "
            + firstDifferent + ")";
      }
    }
  }
}
