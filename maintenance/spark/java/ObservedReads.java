package icemaint;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.ScanTaskSetManager;
import org.apache.iceberg.spark.source.SparkTable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.util.QueryExecutionListener;

/**
 * Collects the metrics that Spark's `observe` gathered while a query ran, by name, for the
 * Python side to take once the query has finished (maintenance/spark/fingerprint.py,
 * `ReadFingerprints`): the rows a verification read, and their fingerprint, seen as it read them.
 *
 * Why not PySpark's `Observation`: its `get` waits without a time limit, and a query whose
 * metrics never arrive would hang the job. Here `take` waits at most as long as it is told
 * and answers null, and the verification then fails with a clear error. Spark posts query events
 * to its listeners asynchronously, after the query returned: hence the wait at all.
 * Registered with the session's listener manager for one read, and unregistered after it.
 * Compiled at run time by Spark's Janino (maintenance/spark/java_helpers.py).
 */
public class ObservedReads implements QueryExecutionListener {
  private final HashMap found = new HashMap();
  private String prefix = "";

  /** Only metrics whose names start with `prefix` are kept; returns this. */
  public ObservedReads keeping(String prefix) {
    this.prefix = prefix;
    return this;
  }

  /**
   * Reads each list of scan tasks (Iceberg's, each carrying its deletes) through `table`, in
   * one Spark job of one stage, the lists side by side, and observes the `totals` of each
   * list's rows under its name (`names`, newline-separated) as they pass; the rows are then
   * dropped (Spark's `noop` sink). `splitSizes` (newline-separated): the bytes one Spark task
   * of each list reads. The tasks are staged with `ScanTaskSetManager` and read with
   * `scan-task-set-id`, as maintenance/spark/raw_rows.py reads them, and unstaged at the end.
   *
   * Why here and not from Python: built over Py4J, one read was about sixty calls, and on two
   * cores busy with the rewrite it is read beside, they took 0.1-0.2 s of the 0.4 s a
   * verification's read of one written file took.
   */
  public void read(SparkSession session, Table table, List taskLists, String splitSizes, Column[] totals, String names) {
    ScanTaskSetManager manager = ScanTaskSetManager.get();
    String[] sizes = splitSizes.split("\n");
    String[] observed = names.split("\n");
    Column[] rest = (Column[]) Arrays.copyOfRange(totals, 1, totals.length);
    List staged = new ArrayList();
    try {
      Dataset union = null;
      for (int i = 0; i < taskLists.size(); i++) {
        String groupId = "icemaint-raw-" + UUID.randomUUID();
        manager.stageTasks(table, groupId, (List) taskLists.get(i));
        staged.add(groupId);
        HashMap options = new HashMap();
        options.put("scan-task-set-id", groupId);
        options.put("split-size", sizes[i]);
        options.put("file-open-cost", "0");
        DataSourceV2Relation relation = DataSourceV2Relation.create(
            new SparkTable(table, false), scala.Option.empty(), scala.Option.empty(), new CaseInsensitiveStringMap(options));
        Dataset one = Dataset.ofRows(session, relation).observe(observed[i], totals[0], rest)
            .select(new Column[] {functions.lit(Integer.valueOf(1))});
        union = union == null ? one : union.unionAll(one);
      }
      union.write().format("noop").mode("overwrite").save();
    } finally {
      for (int i = 0; i < staged.size(); i++) {
        manager.removeTasks(table, (String) staged.get(i));
      }
    }
  }

  public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
    scala.collection.Iterator entries = qe.observedMetrics().iterator();
    while (entries.hasNext()) {
      scala.Tuple2 entry = (scala.Tuple2) entries.next();
      String name = (String) entry._1();
      if (name.startsWith(prefix)) {
        Row row = (Row) entry._2();
        synchronized (this) {
          found.put(name, row);
          notifyAll();
        }
      }
    }
  }

  public void onFailure(String funcName, QueryExecution qe, Exception exception) {
  }

  /** The metrics observed under `name`, as Spark's row of them (their values typed; a NULL
   * is null), waiting up to `timeoutMillis` for them; null when they did not come. */
  public synchronized Row take(String name, long timeoutMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (!found.containsKey(name)) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return null;
      }
      wait(left);
    }
    return (Row) found.remove(name);
  }
}
