package io.floe.app.config;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.streams.StreamsConfig;

/**
 * What of a configuration may be logged: the one masking function for everything Floe logs or
 * prints of its settings (DESIGN §7, secrets are never logged). A value is replaced by {@link
 * #MASK} when
 *
 * <ul>
 *   <li>its key is declared {@code PASSWORD} (by Floe or by Kafka's clients and Streams, also
 *       behind Streams' {@code producer.}, {@code consumer.}, ... prefixes);
 *   <li>its key is a known secret of Kafka, the Schema Registry, Iceberg's catalogs or FileIOs
 *       ({@code sasl.jaas.config}, {@code basic.auth.user.info}, REST {@code header.*}, {@code
 *       credential}, {@code token}, {@code s3.secret-access-key}, {@code *.account.key}, ...; a
 *       catalog key counts without its {@code floe.catalog.<name>.} prefix), or looks like one;
 *   <li>it came through a config provider ({@code ${provider:...}}), whatever its key.
 * </ul>
 *
 * Any other value is shown with the user-info of every URI in it masked ({@code
 * http://********@host}), and with secret-looking query parameters masked ({@code
 * ?password=********}).
 */
public final class Secrets {

  /** What a masked value reads as. */
  public static final String MASK = "********";

  /** Keys whose values are secrets, as their libraries name them. */
  private static final Set<String> KNOWN_KEYS =
      Set.of(
          // Kafka clients
          "sasl.jaas.config",
          "sasl.oauthbearer.client.credentials.client.secret",
          "ssl.key.password",
          "ssl.keystore.password",
          "ssl.keystore.key",
          "ssl.truststore.password",
          // Schema Registry (Confluent's client names, which Floe's client follows)
          "basic.auth.user.info",
          "schema.registry.basic.auth.user.info",
          "bearer.auth.token",
          "bearer.auth.client.secret",
          "schema.registry.ssl.key.password",
          "schema.registry.ssl.keystore.password",
          "schema.registry.ssl.truststore.password",
          // Iceberg catalogs: REST (OAuth2, basic, SigV4), JDBC
          "credential",
          "token",
          "rest.auth.basic.password",
          "rest.access-key-id",
          "rest.secret-access-key",
          "rest.session-token",
          "jdbc.password",
          // Iceberg FileIOs: S3, GCS, ADLS
          "s3.access-key-id",
          "s3.secret-access-key",
          "s3.session-token",
          "s3.sse.key",
          "gcs.oauth2.token",
          "gcs.oauth2.refresh-token",
          "gcs.encryption-key",
          "gcs.decryption-key",
          "adls.auth.shared-key.account.key",
          "adls.token");

  /** Key prefixes whose every value is a secret. */
  private static final List<String> KNOWN_PREFIXES =
      List.of(
          // Iceberg REST: any HTTP header sent to the catalog (Authorization, API keys)
          "header.", "adls.sas-token.", "adls.connection-string.", "client.credentials-provider.");

  /** Keys that look like secrets, whatever library reads them. */
  private static final Pattern SECRET_LOOKING =
      Pattern.compile(
          "password|passwd|secret|token|credential|jaas|user[._-]?info|authorization"
              + "|(^|[._-])(private|account|access|api)[._-]?key|(^|[._-])sas[._-]"
              + "|connection[._-]?string|(^|[._-])key$");

  /** Prefixes Kafka Streams puts before client settings. */
  private static final List<String> STREAMS_PREFIXES =
      List.of(
          StreamsConfig.MAIN_CONSUMER_PREFIX,
          StreamsConfig.RESTORE_CONSUMER_PREFIX,
          StreamsConfig.GLOBAL_CONSUMER_PREFIX,
          StreamsConfig.CONSUMER_PREFIX,
          StreamsConfig.PRODUCER_PREFIX,
          StreamsConfig.ADMIN_CLIENT_PREFIX);

  private static final Set<String> PASSWORD_KEYS = passwordKeys();

  private static final Pattern URI_USER_INFO =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.\\-]*://)[^/?#\\s]*@");

  /**
   * A user and password before a host without the URI around them, as a driver that cannot parse a
   * URI's user-info puts them in an error ({@code UnknownHostException: floe:pw@db}).
   */
  private static final Pattern BARE_USER_INFO =
      Pattern.compile(
          "(^|[\\s(\\[{,;'\"=])([^\\s/@:'\"()\\[\\]{},;=]+):[^\\s/'\"]*@(?=[A-Za-z0-9\\[])");

  private static final Pattern SECRET_PARAMETER =
      Pattern.compile(
          "(?i)([?&;]\\s*(?:password|passwd|pwd|secret|token|sig|signature|credential"
              + "|client[_-]?secret|access[_-]?key|private[_-]?key|api[_-]?key)=)[^&;#\\s]*");

  private Secrets() {}

  /**
   * The configuration as it may be logged.
   *
   * @param raw every key with its value as written, config-provider references unresolved
   * @param resolved every key with its value as used
   */
  public static Map<String, String> masked(Map<String, String> raw, Map<String, String> resolved) {
    Map<String, String> masked = new TreeMap<>();
    resolved.forEach((key, value) -> masked.put(key, value(key, raw.get(key), value)));
    return masked;
  }

  /**
   * One value as it may be logged.
   *
   * @param raw the value as written, or null when unknown
   * @param resolved the value as used
   */
  public static String value(String key, String raw, String resolved) {
    if (resolved == null) {
      return null;
    }
    if (isSecret(key) || cameThroughProvider(raw, resolved)) {
      return MASK;
    }
    return text(resolved);
  }

  /** Whether {@code key} holds a secret, by its declaration or its name. */
  public static boolean isSecret(String key) {
    String name = unprefixed(key.toLowerCase(Locale.ROOT));
    if (PASSWORD_KEYS.contains(name) || KNOWN_KEYS.contains(name)) {
      return true;
    }
    for (String prefix : KNOWN_PREFIXES) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    return SECRET_LOOKING.matcher(name).find();
  }

  /**
   * Free text (a value, an error message) with the user-info of every URI in it, the password of a
   * bare {@code user:password@host}, and secret-looking query parameters masked.
   */
  public static String text(String text) {
    if (text == null) {
      return null;
    }
    String masked = URI_USER_INFO.matcher(text).replaceAll("$1" + MASK + "@");
    masked = BARE_USER_INFO.matcher(masked).replaceAll("$1$2:" + MASK + "@");
    return SECRET_PARAMETER.matcher(masked).replaceAll("$1" + MASK);
  }

  private static boolean cameThroughProvider(String raw, String resolved) {
    return raw != null && (raw.contains("${") || !raw.equals(resolved));
  }

  /** The key as its library names it: without Floe's catalog prefix or Streams' client prefixes. */
  private static String unprefixed(String key) {
    String name = key;
    if (name.startsWith(CatalogConfig.PREFIX)) {
      int dot = name.indexOf('.', CatalogConfig.PREFIX.length());
      name = dot < 0 ? name : name.substring(dot + 1);
    }
    for (String prefix : STREAMS_PREFIXES) {
      if (name.startsWith(prefix)) {
        return name.substring(prefix.length());
      }
    }
    return name;
  }

  private static Set<String> passwordKeys() {
    Set<String> keys = new TreeSet<>();
    for (ConfigDef definition :
        List.of(
            FloeConfig.DEFINITION,
            StreamsConfig.configDef(),
            ProducerConfig.configDef(),
            ConsumerConfig.configDef(),
            AdminClientConfig.configDef())) {
      definition
          .configKeys()
          .forEach(
              (name, key) -> {
                if (key.type == ConfigDef.Type.PASSWORD) {
                  keys.add(name.toLowerCase(Locale.ROOT));
                }
              });
    }
    return Set.copyOf(keys);
  }
}
