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
# app and what it depends on; the developer tool (dev/) is not built.
RUN --mount=type=cache,target=/root/.m2 mvn -B -ntp -DskipTests -pl app -am package

# --- runtime -----------------------------------------------------------------------------------
FROM eclipse-temurin:17-jre
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 floe \
    && useradd --system --uid 10001 --gid floe --home-dir /var/lib/floe floe \
    && mkdir -p /var/lib/floe /etc/floe \
    && chown floe:floe /var/lib/floe
# The service as the build lays it out: Floe's own classes in floe.jar, every dependency a plain
# jar in lib/ (natives for linux x86_64 and aarch64 only). Jars added to lib/ (a JDBC driver, the
# AWS SDK's Glue client) join the class path.
COPY --from=build /src/app/target/lib/ /opt/floe/lib/
COPY --from=build /src/app/target/floe.jar /opt/floe/floe.jar
# The writer-side commit reporter, for writers to take from the image (see the README).
COPY --from=build /src/reporter/target/floe-iceberg-reporter.jar /opt/floe/floe-iceberg-reporter.jar
USER 10001:10001
WORKDIR /var/lib/floe
# Kafka Streams state lives here: mount a volume (the Kubernetes manifests use a PVC).
VOLUME /var/lib/floe
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
    CMD curl -fsS http://localhost:8080/health/live || exit 1
ENTRYPOINT ["java", "-cp", "/opt/floe/floe.jar:/opt/floe/lib/*", "io.floe.app.Main"]
CMD ["run", "--config", "/etc/floe/floe.properties"]
