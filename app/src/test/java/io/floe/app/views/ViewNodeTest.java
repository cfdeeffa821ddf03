package io.floe.app.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.topology.view.ViewDefinition;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A view definition sent as JSON, read by Jackson and checked by the rules of the views file. */
class ViewNodeTest {

  @Test
  void shouldRejectMalformedJsonWithThePositionOfTheProblem() {
    // Given a body whose third line has a field without a value
    String body = "{\n  \"name\": \"x\",\n  \"query\": ,\n  \"target\": \"lake.a.x\"\n}";

    // When it is read, then the message says where, as for a views file
    assertThatThrownBy(() -> ViewNode.jsonObject("request", body))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageStartingWith("request:3:12: malformed JSON: Unexpected character (','");
  }

  @Test
  void shouldRejectAFieldWrittenTwiceAtItsSecondPosition() {
    // Given a body that names the view twice
    String body = "{\"name\": \"x\",\n \"name\": \"y\"}";

    // When it is read, then it is refused, not read as either name
    assertThatThrownBy(() -> ViewNode.jsonObject("request", body))
        .isInstanceOf(ViewsFileException.class)
        .hasMessageStartingWith("request:2:")
        .hasMessageContaining("malformed JSON: Duplicate field 'name'");
  }

  @Test
  void shouldRejectABodyThatIsNotOneObject() {
    assertThatThrownBy(() -> ViewNode.jsonObject("request", "[{\"name\": \"x\"}]"))
        .hasMessage("request:1:1: the body must be a JSON object");
    assertThatThrownBy(() -> ViewNode.jsonObject("request", ""))
        .hasMessage("request:1:1: the body must be a JSON object");
    assertThatThrownBy(() -> ViewNode.jsonObject("request", "{\"name\": \"x\"} {}"))
        .hasMessage("request:1:15: malformed JSON: content after the object");
  }

  @Test
  void shouldReportAFieldProblemAtItsLineAndColumnInTheBody() throws ViewsFileException {
    // Given a well-formed body whose fourth line holds a wrong duration and fifth an unknown field
    ViewNode.Mapping body =
        ViewNode.jsonObject(
            "request",
            """
            {"name": "x",
             "query": "SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.t GROUP BY 1",
             "target": "lake.a.x",
             "refresh": {"linger": "soon"},
             "querry": "SELECT 1"}
            """);

    // When its fields are checked, then every problem is reported at its place in the body
    assertThatThrownBy(() -> ViewsFile.view("request", body))
        .isInstanceOf(ViewsFileException.class)
        .hasMessage(
            "request:5:2: view 'x': unknown field 'querry' (expected one of: name, query, target,"
                + " target_partitioning, timezone, refresh)\n"
                + "request:4:24: view 'x': field 'refresh.linger' must be a duration such as 500ms,"
                + " 1s, 2m or 1h, got 'soon'");
  }

  @Test
  void shouldReadABodyAsTheSameDefinitionAsTheViewsFileEntry() throws ViewsFileException {
    // Given the same view as a views file entry and as a JSON body, numbers written as numbers
    List<ViewDefinition> fromFile =
        ViewsFile.parse(
            "views.yaml",
            """
            views:
              - name: daily
                query: SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.t GROUP BY 1
                target: lake.analytics.daily
                target_partitioning: [month(d)]
                timezone: Europe/Paris
                refresh:
                  linger: 500ms
                  chunk_rows: 500000
                  max_staleness: 5m
            """);
    ViewNode.Mapping body =
        ViewNode.jsonObject(
            "request",
            """
            {"name": "daily",
             "query": "SELECT date_trunc('day', ts) AS d, count(*) AS n FROM lake.m.t GROUP BY 1",
             "target": "lake.analytics.daily",
             "target_partitioning": ["month(d)"],
             "timezone": "Europe/Paris",
             "refresh": {"linger": "500ms", "chunk_rows": 500000, "max_staleness": "5m"}}
            """);

    // When the body is read
    ViewDefinition fromBody = ViewsFile.view("request", body);

    // Then it is the same definition, down to its version
    assertThat(fromBody).isEqualTo(fromFile.get(0));
    assertThat(fromBody.version()).isEqualTo(fromFile.get(0).version());
  }

  @Test
  void shouldTakeANullFieldAsAbsent() throws ViewsFileException {
    ViewNode.Mapping body =
        ViewNode.jsonObject(
            "request",
            "{\"name\": \"x\", \"query\": \"SELECT date_trunc('day', ts) AS d, count(*) AS n"
                + " FROM lake.m.t GROUP BY 1\", \"target\": \"lake.a.x\", \"timezone\": null,"
                + " \"refresh\": null}");

    ViewDefinition view = ViewsFile.view("request", body);

    assertThat(view.zone().getId()).isEqualTo("UTC");
    assertThat(view.refresh()).isEqualTo(io.floe.topology.view.RefreshSettings.DEFAULTS);
  }
}
