package io.floe.topology.detect;

import io.floe.topology.bucket.Granularity;
import io.floe.topology.view.CompiledView;
import java.time.ZoneId;

/**
 * What detection needs to know of a view: which source column its buckets cut, how, and in which
 * zone. The column's type comes from the schema of each snapshot.
 *
 * @param view the view name
 * @param bucketColumn the source column inside {@code date_trunc}
 * @param granularity the bucket size
 * @param zone the zone of bucket boundaries
 */
public record BucketedView(String view, String bucketColumn, Granularity granularity, ZoneId zone) {

  /** The buckets of a compiled view. */
  public static BucketedView of(CompiledView view) {
    return new BucketedView(
        view.name(), view.bucketColumn(), view.granularity(), view.definition().zone());
  }
}
