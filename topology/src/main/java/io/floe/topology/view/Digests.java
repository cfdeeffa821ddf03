package io.floe.topology.view;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The one short digest Floe writes into ids and table properties (view versions, chunk plan
 * fingerprints, the source columns a refresh read): the first bytes of the SHA-256 of a text, in
 * lower-case hex, the same in every JVM and release.
 */
public final class Digests {

  private Digests() {}

  /** The first {@code bytes} bytes of the SHA-256 of {@code text} (UTF-8), in hex. */
  public static String sha256Prefix(String text, int bytes) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JRE", e);
    }
  }
}
