package icemaint.readers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.iceberg.metrics.ScanReport;
import org.apache.iceberg.metrics.ScanReportParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends each scan a reader plans to icemaint's daemon, which learns from them which tables are
 * read, how often, and what their scans cost (issue 59: maintenance spent where readers gain).
 *
 * A reader names it in its catalog's settings: {@code metrics-reporter-impl} =
 * {@code icemaint.readers.ScanReportSender}, {@code icemaint.url} = the daemon's HTTP address,
 * {@code icemaint.token-file} = a file holding the daemon's {@code scan_reports_token} (or
 * {@code icemaint.token}: a setting is seen by whoever can list the reader's processes),
 * {@code icemaint.catalog} = the name of the catalog in icemaint's configuration (default: the
 * daemon's default catalog). Spark, Flink and Trino load it from the catalog's settings.
 *
 * Why it can never slow down or break a reader's scan:
 * <ul>
 *   <li>{@link #report} only offers the report (immutable) to a bounded queue, which never
 *       waits: when the queue is full (the daemon is down or slow), the report is dropped and
 *       counted. Nothing it calls can throw out of it. The sender's thread turns reports into
 *       JSON, not the scan's.
 *   <li>One daemon thread sends what is queued, every second, in batches, with time bounds on
 *       connecting and on the answer; a batch that fails is dropped, and the next attempt
 *       waits, doubling up to a minute, while new reports keep being dropped when the queue is
 *       full.
 *   <li>At the JVM's exit, what is queued is sent once more within {@link #EXIT_SEND_MS} (a
 *       one-query job would else never report), and then the JVM goes.
 * </ul>
 *
 * <p>Not every planning is a read. Flink's batch planner lists a partitioned table's partitions
 * through its catalog, and Iceberg's {@code FlinkCatalog.listPartitions} does it by planning
 * every file of the table: a scan report of all columns, before the query's own. Reported, every
 * Flink query of a partitioned table would count twice, and read the whole table once more. A
 * report made inside a catalog's listing of partitions ({@link #LISTINGS}, found on the
 * reporting thread's stack, which {@link #report} is called on when the planning ends) is not
 * sent. The stack is looked at only where Flink's catalog is on the class path, and only its
 * innermost {@link #LISTING_DEPTH} frames: walking a Spark planner's whole stack took ~0.5 ms a
 * scan, where the rest of report() takes ~10 µs.
 */
public class ScanReportSender implements MetricsReporter {
  public static final String URL = "icemaint.url";
  public static final String TOKEN = "icemaint.token";
  public static final String TOKEN_FILE = "icemaint.token-file";
  public static final String CATALOG = "icemaint.catalog";
  public static final String PATH = "/v1/scan-reports";
  static final int QUEUE = 10_000;
  static final int BATCH = 500;
  static final int CONNECT_MS = 2_000;
  static final int ANSWER_MS = 5_000;
  static final int EXIT_SEND_MS = 1_000;
  static final long SEND_EVERY_MS = 1_000;
  static final long MAX_PAUSE_MS = 60_000;

  private static final Logger LOG = LoggerFactory.getLogger(ScanReportSender.class);
  // What report() cost the threads that planned scans, in all of this JVM's reporters: the
  // latency the reporter adds to a scan (its only work on the reader's path).
  private static final AtomicLong REPORTED = new AtomicLong();
  private static final AtomicLong REPORT_NANOS = new AtomicLong();
  private static final AtomicLong SENT = new AtomicLong();  // taken by the daemon
  private static final AtomicLong DROPPED = new AtomicLong();  // not: the queue full, the daemon down, a refusal

  // (class, method) whose planning lists a table's partitions, reads nothing (see above)
  static final String[][] LISTINGS = {{"org.apache.iceberg.flink.FlinkCatalog", "listPartitions"}};
  static final int LISTING_DEPTH = 16;  // the listing was the 4th frame from report() with Iceberg 1.11 and Flink 1.20

  private final BlockingQueue<ScanReport> queue = new ArrayBlockingQueue<>(QUEUE);
  private volatile String endpoint;
  private volatile String token;
  private volatile String catalog;
  private volatile Thread sender;
  private volatile boolean listingsPossible;  // a class of LISTINGS is on this reporter's class path

  @Override
  public void initialize(Map<String, String> properties) {
    try {
      String url = properties.get(URL);
      if (url == null || url.isEmpty()) {
        LOG.warn("icemaint scan reports: no {} in the catalog's settings, nothing is sent", URL);
        return;
      }
      String tokenFile = properties.get(TOKEN_FILE);
      String found = tokenFile != null
          ? new String(Files.readAllBytes(Paths.get(tokenFile)), StandardCharsets.UTF_8).trim()
          : properties.get(TOKEN);
      if (found == null || found.isEmpty()) {
        LOG.warn("icemaint scan reports: no {} or {} in the catalog's settings, nothing is sent", TOKEN_FILE, TOKEN);
        return;
      }
      URI base = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
      this.endpoint = base + PATH;
      this.token = found;
      this.catalog = properties.get(CATALOG);
      this.listingsPossible = listingClassesPresent();
    } catch (IOException | RuntimeException e) {
      LOG.warn("icemaint scan reports: not sent ({})", e.toString());
      this.endpoint = null;
    }
  }

  @Override
  public void report(MetricsReport report) {
    long started = System.nanoTime();
    try {
      if (endpoint == null || !(report instanceof ScanReport) || (listingsPossible && listsPartitions())) {
        return;
      }
      if (!queue.offer((ScanReport) report)) {  // turned into JSON by the sender's thread, not the scan's
        DROPPED.incrementAndGet();
      }
      if (sender == null) {
        start();
      }
    } catch (Throwable e) {  // a reader's scan must never fail because of icemaint
      DROPPED.incrementAndGet();
    } finally {
      REPORTED.incrementAndGet();
      REPORT_NANOS.addAndGet(System.nanoTime() - started);
    }
  }

  /** Whether a class of {@link #LISTINGS} can be loaded where this reporter was. */
  private boolean listingClassesPresent() {
    for (String[] listing : LISTINGS) {
      try {
        Class.forName(listing[0], false, getClass().getClassLoader());
        return true;
      } catch (ClassNotFoundException | LinkageError e) {
        // not this engine's
      }
    }
    return false;
  }

  /** Whether this thread is planning to list a table's partitions, not to read it. */
  static boolean listsPartitions() {
    return StackWalker.getInstance().walk(frames -> frames.limit(LISTING_DEPTH).anyMatch(frame -> {
      for (String[] listing : LISTINGS) {
        if (listing[0].equals(frame.getClassName()) && listing[1].equals(frame.getMethodName())) {
          return true;
        }
      }
      return false;
    }));
  }

  /** Reports handed to report() in this JVM, and the nanoseconds it took them (all reporters). */
  public static long reported() {
    return REPORTED.get();
  }

  public static long reportNanos() {
    return REPORT_NANOS.get();
  }

  /** Reports the daemon took, and reports dropped, so far in this JVM (all reporters). */
  public static long sent() {
    return SENT.get();
  }

  public static long dropped() {
    return DROPPED.get();
  }

  private synchronized void start() {
    if (sender != null) {
      return;
    }
    Thread thread = new Thread(this::sendForever, "icemaint-scan-reports");
    thread.setDaemon(true);
    thread.start();
    Runtime.getRuntime().addShutdownHook(new Thread(this::sendAtExit, "icemaint-scan-reports-exit"));
    sender = thread;
  }

  /**
   * Every second, sends what was queued (in batches of at most BATCH). It sleeps rather than
   * waits on the queue, so a report never wakes it: the scan that offers one shares no work
   * and no lock hand-over with it.
   */
  private void sendForever() {
    long pauseMs = SEND_EVERY_MS;
    while (true) {
      try {
        Thread.sleep(pauseMs);
        List<ScanReport> batch = new ArrayList<>();
        queue.drainTo(batch, BATCH);
        if (batch.isEmpty() || send(batch, CONNECT_MS, ANSWER_MS)) {
          pauseMs = queue.size() >= BATCH ? 0 : SEND_EVERY_MS;
        } else {
          pauseMs = Math.min(MAX_PAUSE_MS, Math.max(SEND_EVERY_MS, pauseMs * 2));
        }
      } catch (InterruptedException e) {
        return;
      } catch (Throwable e) {
        LOG.debug("icemaint scan reports: {}", e.toString());
      }
    }
  }

  private void sendAtExit() {
    List<ScanReport> batch = new ArrayList<>();
    queue.drainTo(batch, BATCH);
    if (!batch.isEmpty()) {
      send(batch, EXIT_SEND_MS / 2, EXIT_SEND_MS / 2);
    }
  }

  /** POSTs one batch; false (and the batch dropped, counted) when it was not taken. */
  private boolean send(List<ScanReport> batch, int connectMs, int answerMs) {
    HttpURLConnection connection = null;
    try {
      StringBuilder body = new StringBuilder("{\"catalog\":");
      body.append(catalog == null ? "null" : quoted(catalog)).append(",\"reports\":[");
      for (int i = 0; i < batch.size(); i += 1) {
        body.append(i == 0 ? "" : ",").append(ScanReportParser.toJson(batch.get(i)));
      }
      byte[] bytes = body.append("]}").toString().getBytes(StandardCharsets.UTF_8);
      connection = (HttpURLConnection) URI.create(endpoint).toURL().openConnection();
      connection.setConnectTimeout(connectMs);
      connection.setReadTimeout(answerMs);
      connection.setRequestMethod("POST");
      connection.setDoOutput(true);
      connection.setFixedLengthStreamingMode(bytes.length);
      connection.setRequestProperty("Content-Type", "application/json");
      connection.setRequestProperty("Authorization", "Bearer " + token);
      try (OutputStream out = connection.getOutputStream()) {
        out.write(bytes);
      }
      int status = connection.getResponseCode();
      try (InputStream in = status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
        if (in != null) {
          in.readAllBytes();
        }
      }
      if (status / 100 == 2) {
        SENT.addAndGet(batch.size());
        return true;
      }
      LOG.warn("icemaint scan reports: the daemon answered {} to {} reports, dropped", status, batch.size());
    } catch (IOException | RuntimeException e) {
      LOG.debug("icemaint scan reports: {} reports not sent ({})", batch.size(), e.toString());
    } finally {
      if (connection != null) {
        connection.disconnect();
      }
    }
    DROPPED.addAndGet(batch.size());
    return false;
  }

  private static String quoted(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }
}
