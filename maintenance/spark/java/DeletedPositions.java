package icemaint;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;

/**
 * The positions some delete files delete in some data files, read by Iceberg's own delete
 * loader (`BaseDeleteLoader`: a DV's blob, checked against its length, magic bytes and
 * checksum; a v2 file's entries for the data file), as "COUNT:DIGEST".
 *
 * Why this exists: a change that only rewrites position deletes and DVs (REWRITE on format
 * 3) is proved by the positions each data file has deleted before and after, not by reading
 * rows. Iceberg's planning refuses a data file with two DVs ("Can't index multiple DVs"), so
 * where a table has such a file its rows cannot be read by Iceberg at all; each delete file is
 * read here on its own, and a data file's positions are the union of what each deletes.
 *
 * For each data file (in any order), its positions are hashed in ascending order into one
 * SHA-256 with its location; the hashes are added modulo 2^256 and the positions counted.
 * Compiled at run time by Spark's Janino (maintenance/spark/java_helpers.py): raw types, no
 * lambdas.
 */
public class DeletedPositions {
  private static final BigInteger MODULUS = BigInteger.ONE.shiftLeft(256);

  private long count;
  private String digest;

  /** How many positions the last `read` found deleted. */
  public long count() {
    return count;
  }

  /** Their digest (hexadecimal). */
  public String digest() {
    return digest;
  }

  /**
   * Reads the positions deleted in each data file; `deletesByDataFile`: data file location ->
   * the Java DeleteFiles applying to it. `count` and `digest` then say what it read.
   */
  public void read(final Table table, Map deletesByDataFile) throws NoSuchAlgorithmException {
    BaseDeleteLoader loader = new BaseDeleteLoader(new java.util.function.Function() {
      public Object apply(Object file) {
        return table.io().newInputFile((DeleteFile) file);
      }
    });
    BigInteger sum = BigInteger.ZERO;
    long deleted = 0;
    Iterator entries = deletesByDataFile.entrySet().iterator();
    while (entries.hasNext()) {
      Map.Entry entry = (Map.Entry) entries.next();
      String location = (String) entry.getKey();
      final long[][] positions = new long[][] {new long[64]};
      final int[] size = new int[] {0};
      Iterator deletes = ((List) entry.getValue()).iterator();
      while (deletes.hasNext()) {
        PositionDeleteIndex one = loader.loadPositionDeletes(java.util.Collections.singletonList(deletes.next()), location);
        one.forEach(new java.util.function.LongConsumer() {
          public void accept(long position) {
            if (size[0] == positions[0].length) {
              positions[0] = java.util.Arrays.copyOf(positions[0], size[0] * 2);
            }
            positions[0][size[0]++] = position;
          }
        });
      }
      long[] sorted = java.util.Arrays.copyOf(positions[0], size[0]);
      java.util.Arrays.sort(sorted);
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(location.getBytes(StandardCharsets.UTF_8));
      long[] seen = new long[] {0L};
      for (int i = 0; i < sorted.length; i++) {
        if (i > 0 && sorted[i] == sorted[i - 1]) {
          continue;  // deleted by two of the files: once
        }
        long position = sorted[i];
        sha.update(new byte[] {
            (byte) (position >>> 56), (byte) (position >>> 48), (byte) (position >>> 40), (byte) (position >>> 32),
            (byte) (position >>> 24), (byte) (position >>> 16), (byte) (position >>> 8), (byte) position});
        seen[0]++;
      }
      deleted += seen[0];
      sum = sum.add(new BigInteger(1, sha.digest()));
    }
    count = deleted;
    digest = sum.mod(MODULUS).toString(16);
  }
}
