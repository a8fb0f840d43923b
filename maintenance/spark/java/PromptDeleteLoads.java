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
 * Iceberg's pool for loading delete files, whose futures are done when asked: what spares a
 * merge-on-read read a sleep of 10 ms or more per data file.
 *
 * Why: for every data file it reads, Iceberg's reader loads the file's position deletes and
 * its equality deletes through `BaseDeleteLoader.execute`, which submits one task per delete
 * file to this pool (`ThreadPools.getDeleteWorkerPool()`) and then waits in
 * `Tasks.waitFor`, which asks each future `isDone()` and, unless every one is, sleeps 10 ms
 * before it asks again. The tasks are usually done in microseconds (the delete files are
 * cached on the executor after their first load), but never by that first look, right
 * after they were submitted. Measured on 2 cores, local files: one partition's 40 data files
 * with 68 delete files read in 0.6-0.8 s, 0.1 s of it reading; Java Flight Recorder counted
 * 766 such sleeps in 12 s on the one task's thread.
 *
 * What changes: `submit` hands the task to Iceberg's own pool, as before, at once, and
 * returns its future wrapped: the wrapper's `isDone()` first waits for the task to end (done,
 * failed or cancelled), then answers. `Tasks` submits every task of a batch before
 * `waitFor` asks, so the loads still run in parallel on the pool, and its first look finds
 * them all done: the batch costs its slowest load, never a sleep. Every task still runs
 * exactly once, on the same pool, and `Tasks` still gathers every failure from the futures
 * (`get` is the pool's own): what a read returns cannot change, only when `isDone()` answers. An interrupt
 * while it waits is kept on the thread and the answer is the task's state then, so
 * `Tasks.waitFor` sleeps, is interrupted and cancels the batch, as it did before.
 *
 * The first version (commit 4ef3edd) waited in `submit`, up to 2 ms, for the task it had
 * just handed over. With more Spark tasks than cores a pool thread often got no core within
 * 2 ms, and every later load of that thread then slept in `Tasks.waitFor`: in a MERGE of a
 * 3-million-event table (4 partitions, 800 data files, 1,393 delete files, 2 cores) a
 * thread dump found task threads asleep there in 3 of 10 samples.
 *
 * Installed once per JVM in place of Iceberg's pool (`install`; the field is final, so
 * through `sun.misc.Unsafe`), before the first read, so no code compiled with the old value
 * is left; if anything is not as expected the pool is left as it is, and reads are only
 * slower (maintenance/spark/session.py).
 */
public class PromptDeleteLoads extends AbstractExecutorService {
  private final ExecutorService pool;

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
    return new DoneWhenAsked(pool.submit(task));
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

  /** The pool's future, whose `isDone()` waits for the task to end before it answers. */
  static final class DoneWhenAsked implements Future {
    private final Future future;

    DoneWhenAsked(Future future) {
      this.future = future;
    }

    public boolean isDone() {
      if (!future.isDone()) {
        try {
          future.get();
        } catch (ExecutionException failed) {
          // the future holds the failure: Tasks gathers it from there
        } catch (java.util.concurrent.CancellationException cancelled) {
          // likewise
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();  // Tasks.waitFor's sleep sees it and cancels the batch
        }
      }
      return future.isDone();
    }

    public Object get() throws InterruptedException, ExecutionException {
      return future.get();
    }

    public Object get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
      return future.get(timeout, unit);
    }

    public boolean cancel(boolean mayInterruptIfRunning) {
      return future.cancel(mayInterruptIfRunning);
    }

    public boolean isCancelled() {
      return future.isCancelled();
    }
  }
}
