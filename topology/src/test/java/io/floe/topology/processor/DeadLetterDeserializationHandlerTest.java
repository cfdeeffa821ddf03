package io.floe.topology.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

class DeadLetterDeserializationHandlerTest {

  private static final ConsumerRecord<byte[], byte[]> RECORD =
      new ConsumerRecord<>(
          "floe.views", 0, 7, "k".getBytes(StandardCharsets.UTF_8), new byte[] {1, 2});

  private static ErrorHandlerContext context(TaskId task, String node) {
    return new ErrorHandlerContext() {
      @Override
      public String topic() {
        return RECORD.topic();
      }

      @Override
      public int partition() {
        return RECORD.partition();
      }

      @Override
      public long offset() {
        return RECORD.offset();
      }

      @Override
      public Headers headers() {
        return new RecordHeaders();
      }

      @Override
      public String processorNodeId() {
        return node;
      }

      @Override
      public TaskId taskId() {
        return task;
      }

      @Override
      public long timestamp() {
        return 0;
      }

      @Override
      public byte[] sourceRawKey() {
        return RECORD.key();
      }

      @Override
      public byte[] sourceRawValue() {
        return RECORD.value();
      }
    };
  }

  @Test
  void shouldRefuseToStartWithoutADeadLetterTopic() {
    DeadLetterDeserializationHandler handler = new DeadLetterDeserializationHandler();

    assertThatThrownBy(() -> handler.configure(Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG)
        .hasMessageContaining("must name the dead-letter topic");
  }

  @Test
  void shouldSkipWithoutADeadLetterOnTheGlobalThreadWhichCannotSendOne() {
    DeadLetterDeserializationHandler handler = new DeadLetterDeserializationHandler();
    handler.configure(Map.of(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, "floe.dlq"));

    DeserializationExceptionHandler.Response response =
        handler.handleError(
            context(new TaskId(-1, -1), "views-source"),
            RECORD,
            new SerializationException("Cannot decode ViewRecord"));

    assertThat(response.result()).isEqualTo(DeserializationExceptionHandler.Result.RESUME);
    assertThat(response.deadLetterQueueRecords()).isEmpty();
  }

  @Test
  void shouldNameTheExceptionWhenItHasNoMessage() {
    assertThat(DeadLetterDeserializationHandler.reason(new NullPointerException()))
        .isEqualTo("cannot deserialize: java.lang.NullPointerException");
  }
}
