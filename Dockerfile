# syntax=docker/dockerfile:1
# Floe's container image: the service (app/) as plain jars on a slim JRE, run as a non-root user.
#   docker build -t floe .
#   docker run -v $PWD/floe.properties:/etc/floe/floe.properties floe

# --- build: the same Maven build CI and ./floe use, without the tests, for the service only ------
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
# Dependencies first, so that a source change does not download them again.
COPY pom.xml ./
COPY schemas/pom.xml schemas/
COPY testing/pom.xml testing/
COPY topology/pom.xml topology/
COPY reporter/pom.xml reporter/
COPY app/pom.xml app/
COPY dev/pom.xml dev/
COPY engines/spark/pom.xml engines/spark/
COPY engines/trino/pom.xml engines/trino/
COPY schemas/src schemas/src
COPY testing/src testing/src
COPY topology/src topology/src
COPY reporter/src reporter/src
COPY app/src app/src
COPY dev/src dev/src
COPY engines/spark/src engines/spark/src
COPY engines/trino/src engines/trino/src
# app and what it depends on, and the developer tool (dev/), whose training run makes the runtime's
# ahead-of-time cache below; the tool never reaches the runtime image.
RUN --mount=type=cache,target=/root/.m2 mvn -B -ntp -DskipTests -pl app,dev -am package

# --- runtime -----------------------------------------------------------------------------------
# Java 25, for its ahead-of-time cache (below); the code targets Java 17 and its tests pass on both.
# Hadoop 3.4.3 or later is what makes 25 possible: 3.4.2's UserGroupInformation, which Parquet and
# HadoopFileIO reach, called Subject.getSubject, which Java 24+ no longer supports
# (UnsupportedOperationException: getSubject is not supported), and no setting revives it (25
# refuses -Djava.security.manager=allow).
FROM eclipse-temurin:25-jre
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 floe \
    && useradd --system --uid 10001 --gid floe --home-dir /var/lib/floe floe \
    && mkdir -p /var/lib/floe /etc/floe \
    && chown floe:floe /var/lib/floe
# The service as the build lays it out: Floe's own classes in floe.jar, every dependency a plain
# jar in lib/ (natives for linux x86_64 and aarch64 only; the SQLite and PostgreSQL drivers). Jars
# added to lib/ (a MySQL driver, the AWS SDK's Glue client) join the class path.
COPY --from=build /src/app/target/lib/ /opt/floe/lib/
COPY --from=build /src/app/target/floe.jar /opt/floe/floe.jar
# The writer-side commit reporter, for writers to take from the image (see the README).
COPY --from=build /src/reporter/target/floe-iceberg-reporter.jar /opt/floe/floe-iceberg-reporter.jar
# An ahead-of-time cache (JEP 483, 514, 515) from a training run of the image's own JVM and class
# path: floe run against an embedded broker (the developer tool's, mounted from the build stage for
# this step only) starts as in production, refreshes a view over a small source and warms its
# engine up, then stops on SIGTERM and writes /opt/floe/floe.aot. Every start then maps the classes
# of the command line, Kafka's clients and Streams, Jetty, Calcite, Iceberg and Parquet loaded and
# linked instead of loading and verifying them, and the JIT starts from the training's method
# profiles. A cache that does not match the JVM or the class path at run time (jars added to lib/)
# is ignored with a warning, never an error.
RUN --mount=type=bind,from=build,source=/src/dev/target,target=/tmp/dev \
    java -cp /tmp/dev/floe-dev.jar io.floe.dev.bench.AotTraining \
        java "/opt/floe/floe.jar:/opt/floe/lib/*" /opt/floe/floe.aot /tmp/aot-training \
    && rm -rf /tmp/aot-training
USER 10001:10001
WORKDIR /var/lib/floe
# Kafka Streams state lives here: mount a volume (the Kubernetes manifests use a PVC).
VOLUME /var/lib/floe
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -XX:AOTCache=/opt/floe/floe.aot --enable-native-access=ALL-UNNAMED"
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
    CMD curl -fsS http://localhost:8080/health/live || exit 1
ENTRYPOINT ["java", "-cp", "/opt/floe/floe.jar:/opt/floe/lib/*", "io.floe.app.Main"]
CMD ["run", "--config", "/etc/floe/floe.properties"]
