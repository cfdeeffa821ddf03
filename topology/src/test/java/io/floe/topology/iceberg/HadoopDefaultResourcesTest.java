package io.floe.topology.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** Hadoop's default resources read from memory give configurations what Hadoop's own reads give. */
class HadoopDefaultResourcesTest {

  @Test
  void shouldGiveANewConfigurationEveryPropertyOfHadoopsDefaultsWithTheSameValue() {
    // Given
    Map<String, String> hadoops = properties(new Configuration());

    // When
    Map<String, String> inMemory =
        HadoopConfigurations.withDefaultsInMemory(() -> properties(new Configuration()));

    // Then
    assertThat(hadoops).hasSizeGreaterThan(100);
    assertThat(inMemory).isEqualTo(hadoops);
  }

  @Test
  void shouldLeaveTheThreadsContextClassLoaderAsItFoundIt() {
    // Given
    ClassLoader before = Thread.currentThread().getContextClassLoader();

    // When
    ClassLoader during =
        HadoopConfigurations.withDefaultsInMemory(
            () -> Thread.currentThread().getContextClassLoader());

    // Then
    assertThat(during).isNotSameAs(before);
    assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
  }

  @Test
  void shouldLoadClassesThroughTheParentAsBefore() throws Exception {
    // Given
    ClassLoader loader = new HadoopDefaultResources(Configuration.class.getClassLoader());

    // When
    Class<?> loaded = loader.loadClass(Configuration.class.getName());

    // Then
    assertThat(loaded).isSameAs(Configuration.class);
    assertThat(loader.getResource("org/apache/hadoop/conf/Configuration.class"))
        .isEqualTo(
            Configuration.class
                .getClassLoader()
                .getResource("org/apache/hadoop/conf/Configuration.class"));
    assertThat(loader.getResource("no-such-resource-" + System.nanoTime() + ".xml")).isNull();
  }

  private static Map<String, String> properties(Configuration configuration) {
    Map<String, String> properties = new TreeMap<>();
    configuration.forEach(entry -> properties.put(entry.getKey(), entry.getValue()));
    return properties;
  }
}
