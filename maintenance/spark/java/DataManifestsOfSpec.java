package icemaint;

import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;

/**
 * For Iceberg's core `RewriteManifests` (MANIFESTS on format 3): which manifests it rewrites
 * (`rewriteIf`: the data manifests of one partition spec) and the cluster each of their live
 * entries goes to (`clusterBy`: one, so they are written back in manifests of the target
 * size). The core API, unlike the Spark action of Iceberg 1.10, writes each moved entry with
 * the first row id its old manifest gave it, so every row keeps its `_row_id`.
 * Compiled at run time by Spark's Janino (maintenance/spark/java_helpers.py): raw types, no
 * lambdas.
 */
public class DataManifestsOfSpec implements java.util.function.Predicate, java.util.function.Function {
  private int specId;

  public DataManifestsOfSpec of(int spec) {
    this.specId = spec;
    return this;
  }

  public boolean test(Object manifest) {
    ManifestFile file = (ManifestFile) manifest;
    return file.content() == ManifestContent.DATA && file.partitionSpecId() == specId;
  }

  public Object apply(Object dataFile) {
    return Integer.valueOf(specId);
  }
}
