package icemaint;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A table's FileIO whose input files are plain streams of the table's own FileIO, not
 * `HadoopInputFile`s: what a file-group rewrite reads its data and delete files through.
 *
 * Why this exists: for every Parquet file it opens from a `HadoopInputFile`, Iceberg's
 * reader copies the whole Hadoop configuration (`new Configuration(conf)`: about a thousand
 * entries in a Spark session, under a JVM-wide lock), and stats the file once more. Reading
 * 2,000 small files, 20% of the reading tasks' time went to those copies (jstack samples of
 * COMPACT). From any other input file Iceberg reads with Parquet's plain configuration, as
 * it does for every table on `S3FileIO`; the bytes still come from the same Hadoop stream.
 *
 * The streams are wrapped (`Stream`), not handed over: Iceberg's Parquet adapter unwraps a
 * Hadoop stream from Iceberg's own wrapper and drops the wrapper, whose finalizer then
 * closes the stream under the reader ("Stream is closed!" after a garbage collection).
 *
 * A small file (up to `wholeFilesUpTo` bytes, its length known from the table's metadata) is
 * fetched whole by its first stream, in one request read to its end, and served from memory:
 * Parquet's reader seeks to the footer, back to it, then to the row groups, and through
 * S3FileIO each backward seek is a new GET and each stream left before its end an aborted
 * connection. A merge of a streaming table reads thousands of files of kilobytes, where
 * those requests were a third of the reading tasks' CPU (JFR samples of MERGE on S3).
 *
 * Writes, deletes and properties go to the table's FileIO unchanged. `close()` leaves it
 * open: it belongs to the table. Travels to Spark's executors inside the table Iceberg
 * broadcasts, so its classes are shipped as a jar too (maintenance/spark/java_helpers.py).
 */
public class StreamInputFileIO implements FileIO {
  private static final long serialVersionUID = 1L;

  private FileIO io;
  private long wholeFilesUpTo;

  /** Sets the table's own FileIO and the size up to which a file is fetched whole; returns this. */
  public StreamInputFileIO around(FileIO io, long wholeFilesUpTo) {
    this.io = io;
    this.wholeFilesUpTo = wholeFilesUpTo;
    return this;
  }

  public InputFile newInputFile(String path) {
    return new StreamInputFile(io.newInputFile(path), wholeFilesUpTo);
  }

  public InputFile newInputFile(String path, long length) {
    return new StreamInputFile(io.newInputFile(path, length), wholeFilesUpTo);
  }

  public OutputFile newOutputFile(String path) {
    return io.newOutputFile(path);
  }

  public void deleteFile(String path) {
    io.deleteFile(path);
  }

  public Map properties() {
    return io.properties();
  }

  public void initialize(Map properties) {
  }

  public void close() {
  }

  public String toString() {
    return "StreamInputFileIO(" + io + ")";
  }

  /** An input file of the table's FileIO, seen only as a length and a stream. */
  public static class StreamInputFile implements InputFile {
    private final InputFile file;
    private final long wholeUpTo;

    StreamInputFile(InputFile file, long wholeUpTo) {
      this.file = file;
      this.wholeUpTo = wholeUpTo;
    }

    public long getLength() {
      return file.getLength();
    }

    public SeekableInputStream newStream() {
      long length = file.getLength();
      if (length > wholeUpTo) {
        return new Stream(file.newStream());
      }
      byte[] bytes = new byte[(int) length];
      SeekableInputStream in = file.newStream();
      try {
        int read = 0;
        while (read < bytes.length) {
          int n = in.read(bytes, read, bytes.length - read);
          if (n < 0) {
            throw new EOFException(file.location() + " ended after " + read + " of its " + length + " bytes");
          }
          read += n;
        }
        in.close();
      } catch (IOException e) {
        try {
          in.close();
        } catch (IOException ignored) {
          // the read's own failure is the one to report
        }
        throw new UncheckedIOException(e);
      }
      return new WholeFile(bytes);
    }

    public String location() {
      return file.location();
    }

    public boolean exists() {
      return file.exists();
    }
  }

  /** A file fetched whole, read from memory: seeks anywhere, reads past its end find its end. */
  public static class WholeFile extends SeekableInputStream {
    private final byte[] bytes;
    private long pos;

    WholeFile(byte[] bytes) {
      this.bytes = bytes;
    }

    public long getPos() {
      return pos;
    }

    public void seek(long position) throws IOException {
      if (position < 0) {
        throw new EOFException("cannot seek to " + position);
      }
      pos = position;
    }

    public int read() {
      return pos < bytes.length ? bytes[(int) pos++] & 0xff : -1;
    }

    public int read(byte[] buffer, int offset, int length) {
      if (length == 0) {
        return 0;
      }
      if (pos >= bytes.length) {
        return -1;
      }
      int n = (int) Math.min(length, bytes.length - pos);
      System.arraycopy(bytes, (int) pos, buffer, offset, n);
      pos += n;
      return n;
    }

    public long skip(long count) {
      long n = Math.max(0, Math.min(count, bytes.length - pos));
      pos += n;
      return n;
    }

    public int available() {
      return (int) Math.max(0, bytes.length - pos);
    }

    public void close() {
    }
  }

  /** The FileIO's stream, kept reachable for as long as the reader holds this one. */
  public static class Stream extends SeekableInputStream {
    private final SeekableInputStream in;

    Stream(SeekableInputStream in) {
      this.in = in;
    }

    public long getPos() throws IOException {
      return in.getPos();
    }

    public void seek(long position) throws IOException {
      in.seek(position);
    }

    public int read() throws IOException {
      return in.read();
    }

    public int read(byte[] buffer, int offset, int length) throws IOException {
      return in.read(buffer, offset, length);
    }

    public long skip(long count) throws IOException {
      return in.skip(count);
    }

    public int available() throws IOException {
      return in.available();
    }

    public void close() throws IOException {
      in.close();
    }
  }
}
