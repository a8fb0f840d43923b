package icemaint;

import java.io.IOException;
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
 * Writes, deletes and properties go to the table's FileIO unchanged. `close()` leaves it
 * open: it belongs to the table. Travels to Spark's executors inside the table Iceberg
 * broadcasts, so its classes are shipped as a jar too (maintenance/spark/java_helpers.py).
 */
public class StreamInputFileIO implements FileIO {
  private static final long serialVersionUID = 1L;

  private FileIO io;

  /** Sets the table's own FileIO; returns this. */
  public StreamInputFileIO around(FileIO io) {
    this.io = io;
    return this;
  }

  public InputFile newInputFile(String path) {
    return new StreamInputFile(io.newInputFile(path));
  }

  public InputFile newInputFile(String path, long length) {
    return new StreamInputFile(io.newInputFile(path, length));
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

    StreamInputFile(InputFile file) {
      this.file = file;
    }

    public long getLength() {
      return file.getLength();
    }

    public SeekableInputStream newStream() {
      return new Stream(file.newStream());
    }

    public String location() {
      return file.location();
    }

    public boolean exists() {
      return file.exists();
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
