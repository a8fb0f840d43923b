package icemaint;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Iterator;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * The CPU time of Spark's tasks, summed per job group (a run's job group is its run id:
 * maintenance/run/context.py), for the Python side to take when the run has ended
 * (maintenance/spark/task_cpu.py): what a run cost in compute, apart from the runs beside it
 * in the same Spark and from the waiting that a busy machine adds to wall seconds.
 *
 * A task's CPU time is Spark's own metric (`executorCpuTime` and `executorDeserializeCpuTime`,
 * nanoseconds of the thread that ran it), sent to the driver with the task's end, from local
 * and remote executors alike. A task's end names its stage, not its job group: the stages of
 * each job are mapped to the group its start carried. Spark posts both events to its listeners
 * asynchronously: `take` first waits, at most as long as it is told, until every event posted
 * before it was handed to the listeners. Registered once per Spark context.
 * Compiled at run time by Spark's Janino (maintenance/spark/java_helpers.py).
 */
public class TaskCpuByGroup extends SparkListener {
  private final ConcurrentHashMap stageGroups = new ConcurrentHashMap();  // stage id (Integer) -> job group
  private final ConcurrentHashMap groupNanos = new ConcurrentHashMap();  // job group -> long[1], its tasks' CPU nanoseconds

  public void onJobStart(SparkListenerJobStart event) {
    Properties properties = event.properties();
    String group = properties == null ? null : properties.getProperty("spark.jobGroup.id");
    if (group == null) {
      return;
    }
    scala.collection.Iterator stages = event.stageIds().iterator();
    while (stages.hasNext()) {
      stageGroups.put(stages.next(), group);
    }
  }

  public void onTaskEnd(SparkListenerTaskEnd event) {
    String group = (String) stageGroups.get(Integer.valueOf(event.stageId()));
    TaskMetrics metrics = event.taskMetrics();
    if (group == null || metrics == null) {
      return;
    }
    long nanos = metrics.executorCpuTime() + metrics.executorDeserializeCpuTime();
    synchronized (groupNanos) {
      long[] sum = (long[]) groupNanos.get(group);
      if (sum == null) {
        sum = new long[1];
        groupNanos.put(group, sum);
      }
      sum[0] += nanos;
    }
  }

  /**
   * The CPU nanoseconds of the tasks of `group`'s jobs, forgotten here once taken; -1 when
   * Spark's events did not reach the listeners within `timeoutMillis` (a sum without the
   * last tasks would look cheaper than the run was).
   */
  public long take(SparkContext context, String group, long timeoutMillis) {
    try {
      context.listenerBus().waitUntilEmpty(timeoutMillis);
    } catch (Exception timedOut) {
      return -1L;
    }
    long[] sum;
    synchronized (groupNanos) {
      sum = (long[]) groupNanos.remove(group);
    }
    Iterator entries = stageGroups.entrySet().iterator();
    while (entries.hasNext()) {
      if (group.equals(((Map.Entry) entries.next()).getValue())) {
        entries.remove();
      }
    }
    return sum == null ? 0L : sum[0];
  }

  /** The CPU nanoseconds of the calling thread (Py4J runs a Python thread's calls on one JVM thread of its own); -1 where the JVM cannot say. */
  public long threadCpuNanos() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    return threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1L;
  }
}
