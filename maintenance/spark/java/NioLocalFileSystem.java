package icemaint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system, but permissions are set through java.nio, not by a forked
 * `chmod`.
 *
 * Why this exists: without Hadoop's native library (no distribution ships it for pip
 * installs), `RawLocalFileSystem` sets the permission of every file and folder it creates by
 * forking `chmod` from the JVM: every data file, manifest, manifest list and metadata file
 * written to a local warehouse. A MERGE commit that rewrote 100 manifests spent most of its
 * time in those forks (measured with jstack samples: 39 of 63 samples of Iceberg's worker
 * threads were in `forkAndExec`). Installed by `maintenance/spark/session.py` in place of the
 * raw file system inside the JVM's one cached local file system. Compiled at run time by
 * Spark's Janino (maintenance/spark/java_helpers.py).
 */
public class NioLocalFileSystem extends RawLocalFileSystem {
  /** From the mode's highest bit (owner read, 0400) down to its lowest (others execute). */
  private static final PosixFilePermission[] BITS = new PosixFilePermission[] {
    PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE,
    PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
    PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE
  };

  public void setPermission(Path path, FsPermission permission) throws IOException {
    int mode = permission.toShort();
    Set permissions = new HashSet();
    for (int i = 0; i < BITS.length; i++) {
      if ((mode & (1 << (BITS.length - 1 - i))) != 0) {
        permissions.add(BITS[i]);
      }
    }
    try {
      Files.setPosixFilePermissions(pathToFile(path).toPath(), permissions);
    } catch (UnsupportedOperationException notPosix) {
      super.setPermission(path, permission);
    }
  }
}
