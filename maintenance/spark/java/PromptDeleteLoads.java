package icemaint;

import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.iceberg.util.ThreadPools;

/**
 * Iceberg's pool for loading delete files, with a `submit` that waits briefly for the task
 * it hands over: what spares a merge-on-read read a sleep of 10 ms or more per data file.
 *
 * Why: for every data file it reads, Iceberg's reader loads the file's position deletes and
 * its equality deletes through `BaseDeleteLoader.execute`, which submits one task per delete
 * file to this pool (`ThreadPools.getDeleteWorkerPool()`) and then waits in
 * `Tasks.waitFor`, which looks at the futures and, unless every one is done, sleeps 10 ms
 * before it looks again. The tasks are usually done in microseconds (the delete files are
 * cached on the executor after their first load), but never by that first look, right
 * after they were submitted. Measured on 2 cores, local files: one partition's 40 data files
 * with 68 delete files read in 0.6-0.8 s, 0.1 s of it reading; Java Flight Recorder counted
 * 766 such sleeps in 12 s on the one task's thread; with the tasks run before the look,
 * 0.13-0.39 s. MERGE of a whole 64-partition streaming table (2,560 data files, 4,385
 * delete files): 23-28 s, and 5-9 s.
 *
 * What changes: `submit` hands the task to Iceberg's own pool, as before, and returns the
 * same future, but only once the task is done or `WAIT_NANOS` have passed. So every task
 * still runs exactly once, on the same pool, and `Tasks` still waits for every future and
 * gathers every failure from them: what a read returns cannot change, only when `submit`
 * returns. A task that takes longer (a delete file read from an object store for the first
 * time) is left running: its loads stay parallel, and for `SLOW_SKIP_NANOS` after it the
 * same thread does not wait again, so a batch of slow loads costs one wait, not one each.
 *
 * Installed once per JVM in place of Iceberg's pool (`install`; the field is final, so
 * through `sun.misc.Unsafe`), before the first read, so no code compiled with the old value
 * is left; if anything is not as expected the pool is left as it is, and reads are only
 * slower (maintenance/spark/session.py).
 */
public class PromptDeleteLoads extends AbstractExecutorService {
  static final long WAIT_NANOS = 2000000L;  // 2 ms: far above a cached load, far below an object store's first byte
  static final long SLOW_SKIP_NANOS = 50000000L;  // 50 ms

  private final ExecutorService pool;
  private final ThreadLocal skipUntil = new ThreadLocal();  // per submitting thread: System.nanoTime() before which it does not wait

  public PromptDeleteLoads() {
    this.pool = null;  // only for `install` (helpers are made with no argument)
  }

  PromptDeleteLoads(ExecutorService pool) {
    this.pool = pool;
  }

  /** Puts a PromptDeleteLoads around Iceberg's delete pool; says what it did. */
  public String install() throws Exception {
    ExecutorService initialized = ThreadPools.getDeleteWorkerPool();  // the class initialized, its field set
    Field unsafeField = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
    unsafeField.setAccessible(true);
    sun.misc.Unsafe unsafe = (sun.misc.Unsafe) unsafeField.get(null);
    Field field = ThreadPools.class.getDeclaredField("DELETE_WORKER_POOL");
    Object base = unsafe.staticFieldBase(field);
    long offset = unsafe.staticFieldOffset(field);
    synchronized (ThreadPools.class) {
      Object current = unsafe.getObjectVolatile(base, offset);
      if (current != null && current.getClass().getName().equals(getClass().getName())) {
        return "already installed";  // by name: a copy compiled by another Janino compiler is a class of its own
      }
      if (!(current instanceof ExecutorService) || initialized != current) {
        return "not installed: Iceberg's delete pool is not where it was expected";
      }
      unsafe.putObjectVolatile(base, offset, new PromptDeleteLoads((ExecutorService) current));
      return ThreadPools.getDeleteWorkerPool() instanceof PromptDeleteLoads ? "installed" : "not installed: the pool did not change";
    }
  }

  public Future submit(Runnable task) {
    Future future = pool.submit(task);
    Long until = (Long) skipUntil.get();
    long now = System.nanoTime();
    if (until != null && now - until.longValue() < 0) {
      return future;
    }
    try {
      future.get(WAIT_NANOS, TimeUnit.NANOSECONDS);
    } catch (TimeoutException slow) {
      skipUntil.set(Long.valueOf(System.nanoTime() + SLOW_SKIP_NANOS));
    } catch (ExecutionException failed) {
      // the future holds the failure: Tasks gathers it from there
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.CancellationException cancelled) {
      // likewise
    }
    return future;
  }

  public void execute(Runnable command) {
    pool.execute(command);
  }

  public void shutdown() {
    pool.shutdown();
  }

  public List shutdownNow() {
    return pool.shutdownNow();
  }

  public boolean isShutdown() {
    return pool.isShutdown();
  }

  public boolean isTerminated() {
    return pool.isTerminated();
  }

  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return pool.awaitTermination(timeout, unit);
  }
}
