package org.apache.iceberg.rest;

import java.util.Map;

/**
 * Iceberg's own REST catalog server from its 1.11 test fixtures, started in this JVM. It lives in
 * the fixture's package because the server's constructor is package-private.
 */
public final class EmbeddedRestCatalog implements AutoCloseable {

  private final RESTCatalogServer server;

  private EmbeddedRestCatalog(RESTCatalogServer server) {
    this.server = server;
  }

  /**
   * Starts a server on {@code rest.port} whose backend catalog is configured by the other
   * properties (by default a JDBC catalog).
   */
  public static EmbeddedRestCatalog start(Map<String, String> config) throws Exception {
    RESTCatalogServer server = new RESTCatalogServer(config);
    server.start(false);
    return new EmbeddedRestCatalog(server);
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
