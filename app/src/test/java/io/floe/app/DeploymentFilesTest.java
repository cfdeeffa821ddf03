package io.floe.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.app.config.CatalogConfig;
import io.floe.app.config.FloeConfig;
import io.floe.app.http.HttpAccess;
import io.floe.app.http.HttpApi;
import io.floe.app.views.ViewsFile;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployment files (Dockerfile, docker-compose.yml, k8s/) agree with the code: what they copy
 * is what the build produces, their ports, probe paths and commands exist, and every Floe key they
 * set is one Floe declares. No Docker engine or cluster runs here; these checks are what can be
 * proven without one.
 */
class DeploymentFilesTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern ENV_REFERENCE = Pattern.compile("\\$\\{env:([A-Za-z0-9_]+)}");

  // ---------------------------------------------------------------- Dockerfile

  @Test
  void shouldCopyWhatTheBuildProducesAndRunFloe() throws Exception {
    List<String> lines = instructions(Files.readString(ROOT.resolve("Dockerfile")));
    String appPom = Files.readString(ROOT.resolve("app/pom.xml"));
    String jar = "app/target/" + element(appPom, "finalName") + ".jar";
    String classpathPrefix = element(appPom, "classpathPrefix");
    String lib = "app/target/" + classpathPrefix;

    // The build stage copies every module and packages them.
    List<String> buildStage = stage(lines, 0);
    for (String module : modules()) {
      assertThat(buildStage).as(module).contains("COPY " + module + "/pom.xml " + module + "/");
      assertThat(buildStage).as(module).contains("COPY " + module + "/src " + module + "/src");
    }
    assertThat(buildStage)
        .anyMatch(l -> l.startsWith("RUN ") && l.contains("mvn") && l.endsWith(" package"));

    // The runtime stage copies the service as the build lays it out, floe.jar and the plain jars
    // its manifest's Class-Path points into, and runs Main with both on the class path.
    List<String> runtime = stage(lines, 1);
    Map<String, String> copies = new LinkedHashMap<>();
    for (String line : runtime) {
      String[] parts = line.split("\\s+");
      if (line.startsWith("COPY --from=build")) {
        copies.put(parts[2], parts[3]);
      }
    }
    assertThat(copies).containsKeys("/src/" + jar, "/src/" + lib);
    String jarInImage = copies.get("/src/" + jar);
    String libInImage = copies.get("/src/" + lib);
    assertThat(Path.of(jarInImage).resolveSibling(classpathPrefix)).isEqualTo(Path.of(libInImage));
    assertThat(element(appPom, "mainClass")).isEqualTo(Main.class.getName());
    assertThat(runtime)
        .contains(
            "ENTRYPOINT [\"java\", \"-cp\", \""
                + jarInImage
                + ":"
                + Path.of(libInImage).resolve("*")
                + "\", \""
                + Main.class.getName()
                + "\"]")
        .contains("EXPOSE " + FloeConfig.DEFINITION.defaultValues().get(FloeConfig.HTTP_PORT));
    String user = runtime.stream().filter(l -> l.startsWith("USER ")).findFirst().orElseThrow();
    assertThat(Integer.parseInt(user.substring(5).split(":")[0])).isPositive();
    String health =
        runtime.stream().filter(l -> l.startsWith("HEALTHCHECK")).findFirst().orElseThrow();
    assertThat(health).contains("http://localhost:8080" + HttpApi.LIVE_PATH);
    String cmd = runtime.stream().filter(l -> l.startsWith("CMD ")).findFirst().orElseThrow();
    assertThat(cmd).startsWith("CMD [\"run\", \"--config\", \"/etc/floe/");
    assertThat(FloeCommand.commandLine().getSubcommands()).containsKey("run");
  }

  @Test
  void shouldStartTheImageAndTheStatefulSetFromTheCacheTheTrainingRunWrites() throws Exception {
    // Given the runtime stage's training run, its JVM options and the StatefulSet's, which replace
    // them
    List<String> runtime = stage(instructions(Files.readString(ROOT.resolve("Dockerfile"))), 1);
    String training =
        runtime.stream()
            .filter(l -> l.startsWith("RUN ") && l.contains("io.floe.dev.bench.AotTraining"))
            .findFirst()
            .orElseThrow();
    String options =
        runtime.stream()
            .filter(l -> l.startsWith("ENV JAVA_TOOL_OPTIONS="))
            .findFirst()
            .orElseThrow()
            .replaceAll("^ENV JAVA_TOOL_OPTIONS=\"|\"$", "");
    String statefulSet = Files.readString(ROOT.resolve("k8s/statefulset.yaml"));

    // Then the image is on the JDK whose cache it trains, each start names the cache the training
    // wrote (arguments: java, the image's class path, the cache, a working directory), and so does
    // the StatefulSet
    assertThat(lines(Files.readString(ROOT.resolve("Dockerfile"))))
        .filteredOn(l -> l.startsWith("FROM ") && !l.contains(" AS "))
        .singleElement()
        .asString()
        .matches("FROM eclipse-temurin:(2[5-9]|[3-9][0-9])-jre");
    String[] args = training.substring(training.indexOf("AotTraining") + 12).split("\\s+");
    assertThat(args[1]).isEqualTo("\"/opt/floe/floe.jar:/opt/floe/lib/*\"");
    assertThat(options).contains("-XX:AOTCache=" + args[2]);
    assertThat(statefulSet).contains("value: \"" + options + " ");
  }

  private static List<String> lines(String text) {
    return List.of(text.split("\n"));
  }

  private static List<String> instructions(String dockerfile) {
    List<String> lines = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String raw : dockerfile.split("\n")) {
      String line = raw.strip();
      if (line.startsWith("#") && current.isEmpty()) {
        continue;
      }
      if (line.endsWith("\\")) {
        current.append(line, 0, line.length() - 1).append(' ');
        continue;
      }
      current.append(line);
      if (!current.isEmpty()) {
        lines.add(current.toString().replaceAll("\\s+", " ").strip());
      }
      current.setLength(0);
    }
    lines.removeIf(String::isEmpty);
    return lines;
  }

  /** The instructions of the {@code index}-th FROM stage. */
  private static List<String> stage(List<String> lines, int index) {
    List<String> stage = new ArrayList<>();
    int seen = -1;
    for (String line : lines) {
      if (line.startsWith("FROM ")) {
        seen++;
      } else if (seen == index) {
        stage.add(line);
      }
    }
    return stage;
  }

  private static List<String> modules() throws Exception {
    Matcher m =
        Pattern.compile("<module>([^<]+)</module>")
            .matcher(Files.readString(ROOT.resolve("pom.xml")));
    List<String> modules = new ArrayList<>();
    while (m.find()) {
      modules.add(m.group(1));
    }
    assertThat(modules).isNotEmpty();
    return modules;
  }

  /** The text of the first {@code <name>} element of a POM. */
  private static String element(String pom, String name) {
    Matcher m = Pattern.compile("<" + name + ">([^<]+)</" + name + ">").matcher(pom);
    assertThat(m.find()).as(name).isTrue();
    return m.group(1);
  }

  // ---------------------------------------------------------------- docker-compose.yml

  @Test
  void shouldPinImagesBindLoopbackAndConfigureFloeWithDeclaredKeys() throws Exception {
    Map<String, Object> compose = yaml(ROOT.resolve("docker-compose.yml"));
    Map<String, Object> services = map(compose.get("services"));
    assertThat(services)
        .containsKeys(
            "kafka", "minio", "minio-init", "rest-catalog", "schema-registry", "trino", "floe");
    for (Map.Entry<String, Object> service : services.entrySet()) {
      Map<String, Object> s = map(service.getValue());
      if (s.containsKey("image")) {
        String image = (String) s.get("image");
        assertThat(image).as(service.getKey()).contains(":").doesNotEndWith(":latest");
      } else {
        assertThat(s.get("build")).as(service.getKey() + " builds this repository").isEqualTo(".");
      }
      for (Object port : list(s.get("ports"))) {
        assertThat(port.toString()).as(service.getKey()).startsWith("127.0.0.1:");
      }
      if (s.get("command") instanceof List<?> command && ".".equals(s.get("build"))) {
        assertThat(FloeCommand.commandLine().getSubcommands())
            .as(service.getKey())
            .containsKey(command.get(0).toString());
      }
    }

    Map<String, Object> configs = map(compose.get("configs"));
    // Compose turns $$ into $: Floe reads ${env:...} references.
    String properties = content(configs, "floe-properties").replace("$$", "$");
    Properties floe = new Properties();
    floe.load(new StringReader(properties));
    assertDeclared(floe);
    assertThat(floe.getProperty(FloeConfig.HTTP_PORT, "8080"))
        .isEqualTo(
            String.valueOf(
                map(services.get("floe")).get("ports") instanceof List<?> ports
                    ? ports.get(0).toString().split(":")[2]
                    : ""));
    // Every environment reference is set on the services that read the file.
    for (String service : List.of("floe", "floe-watch")) {
      Map<String, Object> environment = map(map(services.get(service)).get("environment"));
      for (String variable : envReferences(properties)) {
        assertThat(environment).as(service).containsKey(variable);
      }
    }
    assertStartsUnderTheHttpAccessRules(floe);
    assertThat(ViewsFile.parse("compose views", content(configs, "floe-views"))).isNotEmpty();
    assertThat(content(configs, "trino-lake-catalog")).contains("connector.name=iceberg");
  }

  private static String content(Map<String, Object> configs, String name) {
    return (String) map(configs.get(name)).get("content");
  }

  // ---------------------------------------------------------------- k8s/

  @Test
  void shouldWireTheKubernetesManifestsToTheCode() throws Exception {
    Path k8s = ROOT.resolve("k8s");
    Map<String, Object> kustomization = yaml(k8s.resolve("kustomization.yaml"));
    for (Object resource : list(kustomization.get("resources"))) {
      assertThat(k8s.resolve(resource.toString())).exists();
    }
    List<Object> generators = list(kustomization.get("configMapGenerator"));
    Map<String, Object> generator = map(generators.get(0));
    String configMapName = (String) generator.get("name");
    for (Object file : list(generator.get("files"))) {
      assertThat(k8s.resolve(file.toString())).exists();
    }

    Map<String, Map<String, Object>> byKind = new LinkedHashMap<>();
    try (Stream<Path> files = Files.walk(k8s)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        for (Object doc : new Yaml().loadAll(Files.readString(file))) {
          Map<String, Object> m = map(doc);
          if (m.containsKey("kind")
              && !m.get("kind").toString().startsWith("Kustomization")
              && !"Component".equals(m.get("kind"))) {
            byKind.put(m.get("kind").toString(), m);
          }
        }
      }
    }
    assertThat(byKind)
        .containsKeys(
            "StatefulSet",
            "Service",
            "PodDisruptionBudget",
            "PodMonitor",
            "ScaledObject",
            "Secret");

    Properties floe = new Properties();
    floe.load(new StringReader(Files.readString(k8s.resolve("floe.properties"))));
    assertDeclared(floe);
    assertThat(ViewsFile.load(k8s.resolve("views.yaml"))).isNotEmpty();
    String httpPort = floe.getProperty(FloeConfig.HTTP_PORT, "8080");

    Map<String, Object> statefulSet = byKind.get("StatefulSet");
    Map<String, Object> spec = map(statefulSet.get("spec"));
    Map<String, Object> template = map(spec.get("template"));
    Map<String, Object> labels = map(map(template.get("metadata")).get("labels"));
    assertThat(labels).containsAllEntriesOf(map(map(spec.get("selector")).get("matchLabels")));
    Map<String, Object> service = byKind.get("Service");
    assertThat(map(service.get("spec")).get("clusterIP")).isEqualTo("None");
    assertThat(spec.get("serviceName")).isEqualTo(map(service.get("metadata")).get("name"));
    assertThat(labels).containsAllEntriesOf(map(map(service.get("spec")).get("selector")));
    assertThat(labels)
        .containsAllEntriesOf(
            map(
                map(map(byKind.get("PodDisruptionBudget").get("spec")).get("selector"))
                    .get("matchLabels")));
    assertThat(labels)
        .containsAllEntriesOf(
            map(map(map(byKind.get("PodMonitor").get("spec")).get("selector")).get("matchLabels")));

    Map<String, Object> podSpec = map(template.get("spec"));
    assertThat(map(podSpec.get("securityContext")).get("runAsNonRoot")).isEqualTo(true);
    Map<String, Object> container = map(list(podSpec.get("containers")).get(0));
    assertThat(map(container.get("securityContext")).get("readOnlyRootFilesystem")).isEqualTo(true);
    Map<String, Object> port = map(list(container.get("ports")).get(0));
    assertThat(port.get("name")).isEqualTo("http");
    assertThat(port.get("containerPort").toString()).isEqualTo(httpPort);
    assertThat(map(map(template.get("metadata")).get("annotations")).get("prometheus.io/port"))
        .isEqualTo(httpPort);
    assertThat(path(container, "livenessProbe")).isEqualTo(HttpApi.LIVE_PATH);
    assertThat(path(container, "startupProbe")).isEqualTo(HttpApi.LIVE_PATH);
    assertThat(path(container, "readinessProbe")).isEqualTo(HttpApi.READY_PATH);

    // The command reads the generated ConfigMap where it is mounted, and state.dir is persistent.
    List<Object> args = list(container.get("args"));
    assertThat(FloeCommand.commandLine().getSubcommands()).containsKey(args.get(0).toString());
    Path configPath = Path.of(args.get(args.indexOf("--config") + 1).toString());
    Map<String, String> mounts = new LinkedHashMap<>();
    for (Object mount : list(container.get("volumeMounts"))) {
      mounts.put(map(mount).get("name").toString(), map(mount).get("mountPath").toString());
    }
    assertThat(configPath.getParent().toString()).isEqualTo(mounts.get("config"));
    assertThat(configPath.getFileName().toString()).isEqualTo("floe.properties");
    Map<String, Object> configVolume =
        list(podSpec.get("volumes")).stream()
            .map(DeploymentFilesTest::map)
            .filter(v -> "config".equals(v.get("name")))
            .findFirst()
            .orElseThrow();
    assertThat(map(configVolume.get("configMap")).get("name")).isEqualTo(configMapName);
    String stateVolume =
        map(map(list(spec.get("volumeClaimTemplates")).get(0)).get("metadata"))
            .get("name")
            .toString();
    assertThat(floe.getProperty("state.dir")).startsWith(mounts.get(stateVolume));

    // Every environment reference of the configuration is set on the container.
    Set<String> env =
        new java.util.HashSet<>(
            list(container.get("env")).stream().map(e -> map(e).get("name").toString()).toList());
    assertThat(env).containsAll(envReferences(Files.readString(k8s.resolve("floe.properties"))));
    assertStartsUnderTheHttpAccessRules(floe);
    // The API token comes from the Secret, not from the manifests.
    String tokenVariable = envReferences(floe.getProperty(FloeConfig.HTTP_TOKEN)).iterator().next();
    Map<String, Object> tokenEnv =
        list(container.get("env")).stream()
            .map(DeploymentFilesTest::map)
            .filter(e -> tokenVariable.equals(e.get("name")))
            .findFirst()
            .orElseThrow();
    assertThat(map(map(tokenEnv.get("valueFrom")).get("secretKeyRef")).get("name"))
        .isEqualTo(map(byKind.get("Secret").get("metadata")).get("name"));

    // Each pod is a static member under its own pod name, so a restart keeps its tasks.
    String instanceVariable =
        envReferences(floe.getProperty("group.instance.id")).iterator().next();
    Map<String, Object> instanceEnv =
        list(container.get("env")).stream()
            .map(DeploymentFilesTest::map)
            .filter(e -> instanceVariable.equals(e.get("name")))
            .findFirst()
            .orElseThrow();
    assertThat(map(map(instanceEnv.get("valueFrom")).get("fieldRef")).get("fieldPath"))
        .isEqualTo("metadata.name");

    // KEDA scales this StatefulSet on Floe's consumer group and commits topic.
    Map<String, Object> scaled = map(byKind.get("ScaledObject").get("spec"));
    assertThat(map(scaled.get("scaleTargetRef")).get("name"))
        .isEqualTo(map(statefulSet.get("metadata")).get("name"));
    Map<String, Object> trigger = map(map(list(scaled.get("triggers")).get(0)).get("metadata"));
    assertThat(trigger.get("consumerGroup")).isEqualTo(floe.getProperty("application.id"));
    assertThat(trigger.get("topic"))
        .isEqualTo(floe.getProperty(FloeConfig.TOPIC_COMMITS, "floe.commits"));
  }

  private static String path(Map<String, Object> container, String probe) {
    Map<String, Object> get = map(map(container.get(probe)).get("httpGet"));
    assertThat(get.get("port")).isEqualTo("http");
    return get.get("path").toString();
  }

  // ---------------------------------------------------------------- helpers

  private static void assertDeclared(Properties properties) {
    for (String key : properties.stringPropertyNames()) {
      if (key.startsWith(CatalogConfig.PREFIX)) {
        continue;
      }
      if (key.startsWith("floe.")) {
        assertThat(FloeConfig.DEFINITION.names()).as("declared key").contains(key);
      }
    }
    assertThat(CatalogConfig.from(properties).names()).isNotEmpty();
  }

  /**
   * {@code floe run} starts with these settings: on a non-loopback address it needs a token, which
   * must come from the environment (a config provider), never from the file itself.
   */
  private static void assertStartsUnderTheHttpAccessRules(Properties file) {
    assertThat(file.getProperty(FloeConfig.HTTP_TOKEN))
        .as("floe.http.token, from the environment")
        .matches("\\$\\{env:[A-Za-z0-9_]+}");
    Properties resolved = new Properties();
    for (String key : file.stringPropertyNames()) {
      // What EnvVarConfigProvider would give, with every variable set.
      resolved.setProperty(
          key, ENV_REFERENCE.matcher(file.getProperty(key)).replaceAll("value-of-$1"));
    }
    resolved.remove("config.providers");
    resolved.stringPropertyNames().stream()
        .filter(k -> k.startsWith("config.providers."))
        .forEach(resolved::remove);
    HttpAccess access = HttpAccess.of(FloeConfig.of(resolved, null));
    assertThat(access.requiresToken()).isTrue();
  }

  private static Set<String> envReferences(String text) {
    Set<String> names = new java.util.TreeSet<>();
    Matcher m = ENV_REFERENCE.matcher(text);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  private static Map<String, Object> yaml(Path file) throws Exception {
    return map(new Yaml().load(Files.readString(file)));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return value == null ? Map.of() : (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object value) {
    return value == null ? List.of() : (List<Object>) value;
  }
}
