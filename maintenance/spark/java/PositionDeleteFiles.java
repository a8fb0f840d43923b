package icemaint;

import java.io.Serializable;
import java.net.URLEncoder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.InternalData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.io.DeleteSchemaUtil;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.FileIO;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;

/**
 * Writes position delete files on Spark's executors through the table's own FileIO: a
 * partition's rows `(group, file_path, pos)`, sorted by all three, become one file per
 * group (a new file after `maxRecords` entries), named `FOLDER/GROUP_NAME=GROUP/UUID.parquet`;
 * the partition answers with the locations it wrote.
 *
 * Why this exists: Spark's own Parquet writer goes through Hadoop's file system, which on
 * S3 is s3a, and s3a first asks whether the path exists (HEAD of a key not there yet). An
 * object store that answers a missing key with 403 rather than 404 (S3 without
 * s3:ListBucket permission; SeaweedFS's table buckets) fails every such write. The table's
 * FileIO (S3FileIO, ResolvingFileIO, HadoopFileIO for local disks) writes the object
 * directly. Entries are written with the position-delete schema's reserved field ids
 * (`DeleteSchemaUtil.pathPosSchema`), in the order given (the spec's order: path, then
 * position). Shipped to the executors (maintenance/spark/java_helpers.py, `on_executors`);
 * compiled by Janino: raw types, no lambdas.
 */
public class PositionDeleteFiles implements MapPartitionsFunction, Serializable {
  private FileIO io;
  private String folder;
  private String groupName;
  private long maxRecords;

  /** Where and how to write; returns this. `maxRecords` 0: no limit. */
  public PositionDeleteFiles into(FileIO io, String folder, String groupName, long maxRecords) {
    this.io = io;
    this.folder = folder.endsWith("/") ? folder.substring(0, folder.length() - 1) : folder;
    this.groupName = groupName;
    this.maxRecords = maxRecords;
    return this;
  }

  public Iterator call(Iterator rows) throws Exception {
    Schema schema = DeleteSchemaUtil.pathPosSchema();
    GenericRecord template = GenericRecord.create(schema);
    List written = new ArrayList();
    FileAppender appender = null;
    String group = null;
    String location = null;
    long count = 0;
    try {
      while (rows.hasNext()) {
        Row row = (Row) rows.next();
        String rowGroup = String.valueOf(row.get(0));
        if (appender == null || !rowGroup.equals(group) || (maxRecords > 0 && count >= maxRecords)) {
          if (appender != null) {
            appender.close();
            written.add(location);
          }
          group = rowGroup;
          location = folder + "/" + groupName + "=" + URLEncoder.encode(group, "UTF-8") + "/" + UUID.randomUUID() + ".parquet";
          appender = InternalData.write(FileFormat.PARQUET, io.newOutputFile(location)).schema(schema).build();
          count = 0;
        }
        GenericRecord entry = template.copy();
        entry.set(0, row.getString(1));
        entry.set(1, Long.valueOf(row.getLong(2)));
        appender.add(entry);
        count++;
      }
      if (appender != null) {
        FileAppender last = appender;
        appender = null;
        last.close();
        written.add(location);
      }
    } finally {
      if (appender != null) {
        appender.close();
      }
    }
    return written.iterator();
  }
}
