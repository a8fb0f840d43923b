package icemaint;

import java.util.HashMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.QueryExecution;
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

  public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
    scala.collection.Iterator entries = qe.observedMetrics().iterator();
    while (entries.hasNext()) {
      scala.Tuple2 entry = (scala.Tuple2) entries.next();
      String name = (String) entry._1();
      if (name.startsWith(prefix)) {
        Row row = (Row) entry._2();
        StringBuilder values = new StringBuilder();
        for (int i = 0; i < row.length(); i++) {
          if (i > 0) {
            values.append(",");
          }
          values.append(row.isNullAt(i) ? "" : row.get(i).toString());
        }
        synchronized (this) {
          found.put(name, values.toString());
          notifyAll();
        }
      }
    }
  }

  public void onFailure(String funcName, QueryExecution qe, Exception exception) {
  }

  /** The metrics observed under `name` as comma-separated values (an empty value for a
   * NULL), waiting up to `timeoutMillis` for them; null when they did not come. */
  public synchronized String take(String name, long timeoutMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (!found.containsKey(name)) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return null;
      }
      wait(left);
    }
    return (String) found.remove(name);
  }
}
