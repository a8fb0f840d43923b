package icemaint;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * A table's operations with its commits gated: `commit` and `newSnapshotId` go to the gate
 * (icemaint's fence, a Python object behind Py4J), everything else to the catalog's own
 * operations directly. Without a gate, commits are refused: a table that only reads and
 * writes files (a rewrite's, whose files are read through another FileIO: `through`), or
 * a view of metadata that was never committed (`show`: a staged change, verified before
 * anything reaches the catalog).
 *
 * Why this exists: Iceberg asks its operations for `io()`, `current()`, `encryption()` and
 * metadata locations once per manifest it reads or writes, often from its worker threads at
 * once. Answered through Py4J callbacks, a commit that rewrote 50 manifests made 630 calls
 * back into Python, queued on its interpreter: most of the commit's time. Only the commit
 * itself and the snapshot ids need the fence. Compiled at run time by Spark's Janino
 * (maintenance/spark/java_helpers.py).
 */
public class GatedOperations implements TableOperations {
  private TableOperations real;
  private TableOperations gate;
  private FileIO io;
  private volatile TableMetadata shown;

  /** Sets the catalog's operations and the gate (null: commits are refused); returns this. */
  public GatedOperations around(TableOperations real, TableOperations gate) {
    this.real = real;
    this.gate = gate;
    return this;
  }

  /** Files are read and written through `io` instead of the catalog's FileIO; returns this. */
  public GatedOperations through(FileIO io) {
    this.io = io;
    return this;
  }

  /**
   * While `metadata` is not null, `current` and `refresh` answer with it instead of the
   * catalog's (a staged change's metadata, which no catalog holds); null: the catalog's
   * again. Returns this.
   */
  public GatedOperations show(TableMetadata metadata) {
    this.shown = metadata;
    return this;
  }

  public TableMetadata current() {
    TableMetadata fixed = shown;
    return fixed != null ? fixed : real.current();
  }

  public TableMetadata refresh() {
    TableMetadata fixed = shown;
    return fixed != null ? fixed : real.refresh();
  }

  public void commit(TableMetadata base, TableMetadata metadata) {
    if (gate == null) {
      throw new UnsupportedOperationException("a table for reading and writing files: commits go through the fenced table");
    }
    gate.commit(base, metadata);
  }

  public FileIO io() {
    return io != null ? io : real.io();
  }

  public EncryptionManager encryption() {
    return real.encryption();
  }

  public String metadataFileLocation(String fileName) {
    return real.metadataFileLocation(fileName);
  }

  public LocationProvider locationProvider() {
    return real.locationProvider();
  }

  public TableOperations temp(TableMetadata uncommitted) {
    return real.temp(uncommitted);
  }

  public long newSnapshotId() {
    return gate != null ? gate.newSnapshotId() : real.newSnapshotId();
  }

  public boolean requireStrictCleanup() {
    return real.requireStrictCleanup();
  }

  public String toString() {
    return "GatedOperations(" + real + ")";
  }
}
