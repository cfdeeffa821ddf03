package io.floe.app.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.app.http.HttpAccess.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HttpAccessTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "127.0.0.1",
        "127.0.0.2",
        "127.255.255.254",
        "::1",
        "[::1]",
        "0:0:0:0:0:0:0:1",
        "::ffff:127.0.0.1",
        "localhost",
        "LocalHost"
      })
  void shouldCountLoopbackAddressesAsLoopback(String host) {
    assertThat(HttpAccess.isLoopback(host)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0.0.0.0",
        "::",
        "",
        "10.0.0.1",
        "128.0.0.1",
        "127.0.0.256",
        "127.1",
        "example.com",
        "localhost.example.com",
        "127.0.0.1.nip.io",
        "::ffff:10.0.0.1"
      })
  void shouldCountEveryOtherAddressAsNotLoopback(String host) {
    assertThat(HttpAccess.isLoopback(host)).isFalse();
  }

  @Test
  void shouldSendTheTokenItAdmitsToOtherInstances() {
    HttpAccess access = HttpAccess.token("s3cr3t");

    assertThat(access.authorization()).hasValue("Bearer s3cr3t");
    assertThat(access.admit(access.authorization().orElseThrow(), null))
        .isEqualTo(Verdict.ADMITTED);
    assertThat(HttpAccess.loopback().authorization()).isEmpty();
    assertThat(HttpAccess.open().authorization()).isEmpty();
  }

  @Test
  void shouldAdmitTheRightBearerTokenOnly() {
    HttpAccess access = HttpAccess.token("s3cr3t");

    assertThat(access.admit("Bearer s3cr3t", "example.com")).isEqualTo(Verdict.ADMITTED);
    assertThat(access.admit("bearer s3cr3t", null)).isEqualTo(Verdict.ADMITTED);
    assertThat(access.admit("Bearer s3cr3", null)).isEqualTo(Verdict.NO_TOKEN);
    assertThat(access.admit("Bearer s3cr3t-and-more", null)).isEqualTo(Verdict.NO_TOKEN);
    assertThat(access.admit("Basic czNjcjN0", null)).isEqualTo(Verdict.NO_TOKEN);
    assertThat(access.admit("Bearer ", null)).isEqualTo(Verdict.NO_TOKEN);
    assertThat(access.admit(null, "localhost")).isEqualTo(Verdict.NO_TOKEN);
  }

  @Test
  void shouldAdmitOnlyLoopbackHostNamesWithoutAToken() {
    HttpAccess access = HttpAccess.loopback();

    assertThat(access.admit(null, "localhost:8080")).isEqualTo(Verdict.ADMITTED);
    assertThat(access.admit(null, "127.0.0.1:8080")).isEqualTo(Verdict.ADMITTED);
    assertThat(access.admit(null, "[::1]:8080")).isEqualTo(Verdict.ADMITTED);
    assertThat(access.admit(null, "evil.example:8080")).isEqualTo(Verdict.WRONG_HOST);
    assertThat(access.admit(null, "localhost.evil.example")).isEqualTo(Verdict.WRONG_HOST);
    assertThat(access.admit(null, "10.1.2.3")).isEqualTo(Verdict.WRONG_HOST);
  }

  @Test
  void shouldSplitThePortOffAHostHeader() {
    assertThat(HttpAccess.hostWithoutPort("Example.com:8080")).isEqualTo("example.com");
    assertThat(HttpAccess.hostWithoutPort("[::1]:8080")).isEqualTo("[::1]");
    assertThat(HttpAccess.hostWithoutPort("::1")).isEqualTo("::1");
    assertThat(HttpAccess.hostWithoutPort("localhost")).isEqualTo("localhost");
  }
}
