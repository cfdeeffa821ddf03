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
# Java 17, not 25's ahead-of-time cache: Hadoop 3.4's UserGroupInformation, which Parquet and
# HadoopFileIO reach, calls Subject.getSubject, which Java 24+ no longer supports
# (UnsupportedOperationException: getSubject is not supported, in ServiceImageIT on Temurin 25).
# No setting avoids it: Temurin 25.0.3 refuses -Djava.security.manager=allow, which earlier JDKs
# took to keep getSubject working ("Enabling a Security Manager is not supported").
FROM eclipse-temurin:17-jre
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
# A class-data sharing archive (AppCDS) from a training run of the image's own class path: floe
# validate on a sample view loads the command line, configuration, the views file and the SQL front
# end (Calcite), whose classes every start then maps from the archive instead of loading and
# verifying them (validate: 2.5 s of CPU without, 1.3 s with). An archive that does not match the
# class path at run time is ignored with a warning, never an error.
RUN printf '%s\n' 'views:' '  - name: training' \
        "    query: SELECT symbol, date_trunc('minute', ts) AS minute_ts, min_by(price, ts) AS open, max(price) AS high, sum(quantity) AS volume, count(*) AS trades FROM lake.market.trades GROUP BY 1, 2" \
        '    target: lake.analytics.training' > /tmp/training.yaml \
    && java -Xlog:cds=off -Xlog:cds+dynamic=off -XX:ArchiveClassesAtExit=/opt/floe/floe.jsa \
        -cp "/opt/floe/floe.jar:/opt/floe/lib/*" io.floe.app.Main validate /tmp/training.yaml \
    && rm /tmp/training.yaml
USER 10001:10001
WORKDIR /var/lib/floe
# Kafka Streams state lives here: mount a volume (the Kubernetes manifests use a PVC).
VOLUME /var/lib/floe
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -XX:SharedArchiveFile=/opt/floe/floe.jsa"
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
    CMD curl -fsS http://localhost:8080/health/live || exit 1
ENTRYPOINT ["java", "-cp", "/opt/floe/floe.jar:/opt/floe/lib/*", "io.floe.app.Main"]
CMD ["run", "--config", "/etc/floe/floe.properties"]
