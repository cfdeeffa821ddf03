package io.floe.app;

import io.floe.topology.iceberg.ManifestWork;

/**
 * The {@code floe} executable. The only place in Floe that ends the process: commands return an
 * exit code, and an unrecoverable error in the service ends it with a non-zero one so that
 * Kubernetes restarts the pod.
 */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    ManifestWork.planOnCallingThreadByDefault();
    System.exit(FloeCommand.commandLine().execute(args));
  }
}
