package io.floe.dev.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What one scenario measured: its figures, the parameters it ran with, and notes. */
public final class ScenarioResult {

  private final String name;
  private final String description;
  private final Map<String, Object> parameters = new LinkedHashMap<>();
  private final List<Figure> figures = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private double seconds;

  public ScenarioResult(String name, String description) {
    this.name = name;
    this.description = description;
  }

  public ScenarioResult parameter(String key, Object value) {
    parameters.put(key, value);
    return this;
  }

  public ScenarioResult figure(Figure figure) {
    figures.add(figure);
    return this;
  }

  public ScenarioResult note(String note) {
    notes.add(note);
    return this;
  }

  void seconds(double seconds) {
    this.seconds = seconds;
  }

  public String name() {
    return name;
  }

  public String description() {
    return description;
  }

  public Map<String, Object> parameters() {
    return parameters;
  }

  public List<Figure> figures() {
    return figures;
  }

  public List<String> notes() {
    return notes;
  }

  public double seconds() {
    return seconds;
  }
}
