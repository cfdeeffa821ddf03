package io.floe.dev.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy in front of the in-process S3 server that holds each HTTP request for a fixed time
 * before passing it on, as a remote object store answers after 10-50 ms: the bench's stand-in for
 * S3's latency, never part of the service. A request is a chunk from the client that starts with an
 * HTTP method after the server last answered on the connection (a PUT's body after {@code 100
 * Continue} is not one). It counts the requests it holds.
 */
final class DelayingProxy implements AutoCloseable {

  private static final String[] METHODS = {"GET ", "HEAD ", "PUT ", "POST ", "DELETE "};

  private final ServerSocket server;
  private final int upstreamPort;
  private final long delayMillis;
  private final AtomicLong requests = new AtomicLong();
  private volatile boolean closed;

  DelayingProxy(int upstreamPort, Duration delay) throws IOException {
    this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    this.upstreamPort = upstreamPort;
    this.delayMillis = delay.toMillis();
    Thread acceptor = new Thread(this::accept, "delaying-proxy-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The port clients connect to. */
  int port() {
    return server.getLocalPort();
  }

  /** Requests held and passed on since the proxy started. */
  long requests() {
    return requests.get();
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        AtomicBoolean answered = new AtomicBoolean(true);
        pump(client, upstream, answered, true);
        pump(upstream, client, answered, false);
      } catch (IOException e) {
        if (!closed) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    }
  }

  /**
   * Copies {@code from} to {@code to} on a thread of its own; the client's side holds each new
   * request, the server's side marks the connection answered.
   */
  private void pump(Socket from, Socket to, AtomicBoolean answered, boolean clientSide) {
    Thread thread =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  if (clientSide) {
                    if (answered.get() && startsRequest(buffer, n)) {
                      answered.set(false);
                      requests.incrementAndGet();
                      if (delayMillis > 0) {
                        Thread.sleep(delayMillis);
                      }
                    }
                  } else {
                    answered.set(true);
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // The other side closed the connection.
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "delaying-proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private static boolean startsRequest(byte[] buffer, int n) {
    String head = new String(buffer, 0, Math.min(n, 8), StandardCharsets.US_ASCII);
    for (String method : METHODS) {
      if (head.startsWith(method)) {
        return true;
      }
    }
    return false;
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Closing anyway.
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    server.close();
  }
}
