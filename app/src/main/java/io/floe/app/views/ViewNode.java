package io.floe.app.views;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * A node of a view definition as written, in a views file (YAML) or an API request (JSON), with
 * where it starts, so that {@link ViewsFile#view} checks both with the same rules and reports every
 * problem at its line and column.
 */
public sealed interface ViewNode {

  /** Where a node starts: line and column, both from 1. */
  record Position(int line, int column) {

    /** The position of a SnakeYAML mark (which counts from 0), or null for none. */
    static Position of(Mark mark) {
      return mark == null ? null : new Position(mark.getLine() + 1, mark.getColumn() + 1);
    }
  }

  /** Where the node starts. */
  Position at();

  /**
   * A scalar: its text as written ({@code 5}, {@code 200ms}, {@code ~}).
   *
   * @param isNull whether it stands for no value (YAML's {@code ~} or empty, JSON's {@code null})
   */
  record Scalar(String text, boolean isNull, Position at) implements ViewNode {}

  /** A list. */
  record Sequence(List<ViewNode> items, Position at) implements ViewNode {}

  /** A mapping, its fields in the order written. */
  record Mapping(List<Field> fields, Position at) implements ViewNode {

    /** One field of a mapping; {@code key} is null when the key is not a scalar. */
    public record Field(String key, Position keyAt, ViewNode value) {}

    /** The value of {@code key}, when the mapping has that field. */
    public Optional<ViewNode> get(String key) {
      return fields.stream().filter(f -> key.equals(f.key())).map(Field::value).findFirst();
    }

    /** This mapping with {@code key} set to the text {@code value}, replacing the field's value. */
    public Mapping with(String key, String value) {
      List<Field> changed = new ArrayList<>();
      boolean replaced = false;
      for (Field field : fields) {
        if (key.equals(field.key())) {
          changed.add(new Field(key, field.keyAt(), new Scalar(value, false, field.value().at())));
          replaced = true;
        } else {
          changed.add(field);
        }
      }
      if (!replaced) {
        changed.add(new Field(key, at, new Scalar(value, false, at)));
      }
      return new Mapping(List.copyOf(changed), at);
    }
  }

  /** True when this is a scalar that stands for no value. */
  default boolean isNull() {
    return this instanceof Scalar scalar && scalar.isNull();
  }

  /** The text of a scalar, or null for any other node. */
  default String scalarText() {
    return this instanceof Scalar scalar ? scalar.text() : null;
  }

  /** A node of SnakeYAML's composed tree. */
  static ViewNode of(Node node) {
    Position at = Position.of(node.getStartMark());
    if (node instanceof MappingNode mapping) {
      List<Mapping.Field> fields = new ArrayList<>();
      for (NodeTuple tuple : mapping.getValue()) {
        Node key = tuple.getKeyNode();
        fields.add(
            new Mapping.Field(
                key instanceof ScalarNode scalar ? scalar.getValue() : null,
                Position.of(key.getStartMark()),
                of(tuple.getValueNode())));
      }
      return new Mapping(List.copyOf(fields), at);
    }
    if (node instanceof SequenceNode sequence) {
      return new Sequence(sequence.getValue().stream().map(ViewNode::of).toList(), at);
    }
    ScalarNode scalar = (ScalarNode) node;
    return new Scalar(scalar.getValue(), scalar.getTag().getValue().endsWith(":null"), at);
  }

  /**
   * Reads a JSON object with Jackson, each node with its position in {@code json}.
   *
   * @param source what the text is, for messages
   * @throws ViewsFileException when the text is not JSON or not one object, with the position
   */
  static Mapping jsonObject(String source, String json) throws ViewsFileException {
    JsonFactory factory =
        JsonFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    try (JsonParser parser = factory.createParser(json)) {
      JsonToken first = parser.nextToken();
      if (first != JsonToken.START_OBJECT) {
        Position at = first == null ? new Position(1, 1) : position(parser.currentTokenLocation());
        throw new ViewsFileException(at(source, at) + "the body must be a JSON object");
      }
      Mapping object = (Mapping) json(parser);
      if (parser.nextToken() != null) {
        throw new ViewsFileException(
            at(source, position(parser.currentTokenLocation()))
                + "malformed JSON: content after the object");
      }
      return object;
    } catch (JsonProcessingException e) {
      JsonLocation location = e.getLocation();
      throw new ViewsFileException(
          (location == null ? source + ": " : at(source, position(location)))
              + "malformed JSON: "
              + e.getOriginalMessage());
    } catch (IOException e) {
      throw new ViewsFileException(source + ": cannot read JSON: " + e.getMessage());
    }
  }

  /** The node at the parser's current token, which starts a value. */
  private static ViewNode json(JsonParser parser) throws IOException {
    Position at = position(parser.currentTokenLocation());
    switch (parser.currentToken()) {
      case START_OBJECT -> {
        List<Mapping.Field> fields = new ArrayList<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String key = parser.currentName();
          Position keyAt = position(parser.currentTokenLocation());
          parser.nextToken();
          fields.add(new Mapping.Field(key, keyAt, json(parser)));
        }
        return new Mapping(List.copyOf(fields), at);
      }
      case START_ARRAY -> {
        List<ViewNode> items = new ArrayList<>();
        while (parser.nextToken() != JsonToken.END_ARRAY) {
          items.add(json(parser));
        }
        return new Sequence(List.copyOf(items), at);
      }
      case VALUE_NULL -> {
        return new Scalar("null", true, at);
      }
      default -> {
        return new Scalar(parser.getText(), false, at);
      }
    }
  }

  /** The prefix of a message about the node at {@code at}: {@code source:line:column: }. */
  static String at(String source, Position at) {
    return at == null ? source + ": " : source + ":" + at.line() + ":" + at.column() + ": ";
  }

  private static Position position(JsonLocation location) {
    return new Position(location.getLineNr(), location.getColumnNr());
  }
}
