package icemaint;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.PartitionSpec;

/**
 * For Iceberg's core `RewriteManifests` (MANIFESTS on format 3): which manifests it rewrites
 * (`rewriteIf`: the data manifests of one partition spec) and the cluster each of their live
 * entries goes to (`clusterBy`: one, so they are written back in manifests of the target
 * size; or, for `sort_by`, the one MANIFESTS chose for the entry's partition). The core API, unlike the Spark action of Iceberg 1.10, writes each moved entry with
 * the first row id its old manifest gave it, so every row keeps its `_row_id`.
 * Compiled at run time by Spark's Janino (maintenance/spark/java_helpers.py): raw types, no
 * lambdas.
 */
public class DataManifestsOfSpec implements java.util.function.Predicate, java.util.function.Function {
  private static final Integer UNKNOWN = Integer.valueOf(-1);
  private int specId;
  private PartitionSpec spec;  // with `clusters`: MANIFESTS' sort_by (jobs/manifests/clusters.py)
  private java.util.Map clusters;

  public DataManifestsOfSpec of(int specId) {
    this.specId = specId;
    return this;
  }

  /** Each entry to the cluster its partition's path is given (a partition not given: one cluster of their own). */
  public DataManifestsOfSpec clustered(PartitionSpec partitionSpec, java.util.Map clustersByPath) {
    this.spec = partitionSpec;
    this.clusters = clustersByPath;
    return this;
  }

  public boolean test(Object manifest) {
    ManifestFile file = (ManifestFile) manifest;
    return file.content() == ManifestContent.DATA && file.partitionSpecId() == specId;
  }

  public Object apply(Object dataFile) {
    if (clusters == null) {
      return Integer.valueOf(specId);
    }
    Object cluster = clusters.get(spec.partitionToPath(((DataFile) dataFile).partition()));
    return cluster == null ? UNKNOWN : cluster;
  }
}
