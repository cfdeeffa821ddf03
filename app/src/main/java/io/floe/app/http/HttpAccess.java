package io.floe.app.http;

import io.floe.app.config.FloeConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigException;

/**
 * Who may call the HTTP API's guarded endpoints (DESIGN §7, safe by default): the holders of the
 * token when one is set; without one, only clients of a server bound to a loopback address, and
 * then only for requests addressed to a loopback name, which keeps web pages that rebind their own
 * host name to 127.0.0.1 out; anyone when the user opened the API explicitly ({@code
 * floe.http.auth=none}). "Bound to loopback" is a property of the address the server listens on,
 * never of the client's address: a server on 0.0.0.0 is reachable from everywhere, whoever asks.
 */
public final class HttpAccess {

  private static final Pattern IPV4 =
      Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");

  private enum Mode {
    TOKEN,
    LOOPBACK,
    OPEN
  }

  private final Mode mode;
  private final byte[] token;

  private HttpAccess(Mode mode, String token) {
    this.mode = mode;
    this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
  }

  /** Guarded endpoints need {@code token}, on any address. */
  public static HttpAccess token(String token) {
    if (token == null || token.isBlank()) {
      throw new IllegalArgumentException("An HTTP API token must not be empty");
    }
    return new HttpAccess(Mode.TOKEN, token);
  }

  /** No token: guarded endpoints are served to requests addressed to a loopback name. */
  public static HttpAccess loopback() {
    return new HttpAccess(Mode.LOOPBACK, null);
  }

  /** No token, on any address: only behind something that authenticates. */
  public static HttpAccess open() {
    return new HttpAccess(Mode.OPEN, null);
  }

  /**
   * The access the configuration asks for, for a server bound to {@code floe.http.host}.
   *
   * @throws ConfigException saying how to set a token, when there is none, the API is not opened
   *     explicitly and the server would listen on an address other than a loopback one; or when the
   *     token is empty or its config provider did not resolve it
   */
  public static HttpAccess of(FloeConfig config) {
    String host = config.getString(FloeConfig.HTTP_HOST);
    String token = config.httpToken();
    if (config.isHttpAuthDisabled()) {
      return open();
    }
    if (token != null && token.contains("${")) {
      throw new ConfigException(
          FloeConfig.HTTP_TOKEN
              + " still reads "
              + config.rawValue(FloeConfig.HTTP_TOKEN)
              + " after config providers ran: the reference was not resolved (is the environment"
              + " variable or file entry there?)");
    }
    if (token != null && token.isBlank()) {
      throw new ConfigException(
          FloeConfig.HTTP_TOKEN
              + " is empty: an empty token would let anyone in; give it a value, or remove it and"
              + " bind "
              + FloeConfig.HTTP_HOST
              + " to 127.0.0.1");
    }
    if (token != null) {
      return token(token);
    }
    if (isLoopback(host)) {
      return loopback();
    }
    throw new ConfigException(
        FloeConfig.HTTP_TOKEN
            + " is not set and the HTTP server would listen on "
            + host
            + ", where anyone who reaches it could change views and drop their target tables."
            + " Set a token, e.g. "
            + FloeConfig.HTTP_TOKEN
            + "=${env:FLOE_HTTP_TOKEN} with config.providers=env and"
            + " config.providers.env.class="
            + "org.apache.kafka.common.config.provider.EnvVarConfigProvider; or bind "
            + FloeConfig.HTTP_HOST
            + "=127.0.0.1; or set "
            + FloeConfig.HTTP_AUTH
            + "="
            + FloeConfig.HTTP_AUTH_NONE
            + " to serve the API without a token behind something that authenticates");
  }

  /** Whether guarded endpoints are open to anyone ({@code floe.http.auth=none}). */
  public boolean isOpen() {
    return mode == Mode.OPEN;
  }

  /** Whether a token is required. */
  public boolean requiresToken() {
    return mode == Mode.TOKEN;
  }

  /**
   * The {@code Authorization} header this instance sends when it calls another instance of the same
   * application (view states): its own token, since every instance of one application is configured
   * with the same {@code floe.http.token}; empty when no token is required.
   */
  Optional<String> authorization() {
    return mode == Mode.TOKEN
        ? Optional.of("Bearer " + new String(token, StandardCharsets.UTF_8))
        : Optional.empty();
  }

  /** How the API is protected, for the start-up log. */
  public String describe() {
    return switch (mode) {
      case TOKEN -> "guarded endpoints need the bearer token";
      case LOOPBACK -> "no token; bound to loopback, guarded endpoints served to loopback names";
      case OPEN -> "no token, opened explicitly (" + FloeConfig.HTTP_AUTH + "=none)";
    };
  }

  /**
   * Whether a request to a guarded endpoint may proceed.
   *
   * @param authorization the request's {@code Authorization} header, or null
   * @param host the request's {@code Host} header, or null
   */
  Verdict admit(String authorization, String host) {
    return switch (mode) {
      case OPEN -> Verdict.ADMITTED;
      case LOOPBACK ->
          host == null || isLoopbackName(hostWithoutPort(host))
              ? Verdict.ADMITTED
              : Verdict.WRONG_HOST;
      case TOKEN ->
          MessageDigest.isEqual(token, bearer(authorization)) ? Verdict.ADMITTED : Verdict.NO_TOKEN;
    };
  }

  /** The outcome of {@link #admit}. */
  enum Verdict {
    ADMITTED,
    NO_TOKEN,
    WRONG_HOST
  }

  private static byte[] bearer(String authorization) {
    if (authorization == null) {
      return new byte[0];
    }
    String value = authorization.strip();
    int space = value.indexOf(' ');
    if (space < 0 || !value.substring(0, space).equalsIgnoreCase("Bearer")) {
      return new byte[0];
    }
    return value.substring(space + 1).strip().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Whether a server bound to {@code host} listens only on loopback: 127.0.0.0/8, ::1 (also
   * IPv4-mapped) and {@code localhost} when every address it resolves to is loopback. Other names
   * are not resolved and count as not loopback; so do 0.0.0.0, :: and an empty host (every
   * interface).
   */
  public static boolean isLoopback(String host) {
    if (host == null) {
      return false;
    }
    String name = unbracketed(host.strip());
    if (name.equalsIgnoreCase("localhost")) {
      try {
        for (InetAddress address : InetAddress.getAllByName(name)) {
          if (!address.isLoopbackAddress()) {
            return false;
          }
        }
        return true;
      } catch (UnknownHostException e) {
        return false;
      }
    }
    return isLoopbackLiteral(name);
  }

  /** Whether a request's host name is a loopback name, without resolving anything. */
  static boolean isLoopbackName(String host) {
    String name = unbracketed(host.strip());
    return name.equalsIgnoreCase("localhost") || isLoopbackLiteral(name);
  }

  private static boolean isLoopbackLiteral(String name) {
    Matcher ipv4 = IPV4.matcher(name);
    if (ipv4.matches()) {
      for (int i = 1; i <= 4; i++) {
        if (Integer.parseInt(ipv4.group(i)) > 255) {
          return false;
        }
      }
      return Integer.parseInt(ipv4.group(1)) == 127;
    }
    if (name.contains(":") && name.matches("[0-9A-Fa-f:.]+")) {
      try {
        // An IPv6 literal: InetAddress parses it without a lookup.
        return InetAddress.getByName(name).isLoopbackAddress();
      } catch (UnknownHostException e) {
        return false;
      }
    }
    return false;
  }

  private static String unbracketed(String name) {
    return name.startsWith("[") && name.endsWith("]") ? name.substring(1, name.length() - 1) : name;
  }

  /** {@code host[:port]}, {@code [v6][:port]} or a bare IPv6 literal, without the port. */
  static String hostWithoutPort(String host) {
    String value = host.strip().toLowerCase(Locale.ROOT);
    if (value.startsWith("[")) {
      int end = value.indexOf(']');
      return end < 0 ? value : value.substring(0, end + 1);
    }
    int colon = value.indexOf(':');
    return colon >= 0 && colon == value.lastIndexOf(':') ? value.substring(0, colon) : value;
  }
}
