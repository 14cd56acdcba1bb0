package floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The InteropClient operations on records: produce (every codec, acks 1/all, idempotent or not), consume by partition and offset, list offsets; and subscribe_poll, a group member reading as an application does. */
final class ClientOps implements AutoCloseable {
  private static final Duration TIMEOUT = Duration.ofSeconds(15);
  private static final Set<String> OPS = Set.of("capabilities", "produce", "consume", "subscribe_poll", "list_offset");
  /** bootstrap.servers and the client settings the driver was started with (security), copied into each client. */
  private final Properties base;
  /** One consumer serves every consume and list_offset call (assign and seek each time): a new one per call costs a metadata round and class warm-up. */
  private final KafkaConsumer<byte[], byte[]> reader;

  ClientOps(Properties base) {
    this.base = base;
    this.reader = consumer();
  }

  boolean handles(String op) {
    return OPS.contains(op);
  }

  JsonNode run(String op, JsonNode cmd) throws Exception {
    switch (op) {
      case "capabilities": {
        ObjectNode o = Wire.object();
        o.putArray("codecs").add("none").add("gzip").add("snappy").add("lz4").add("zstd");
        o.put("version", org.apache.kafka.common.utils.internals.AppInfoParser.getVersion());
        return o;
      }
      case "produce": return produce(cmd);
      case "consume": return consume(cmd);
      case "subscribe_poll": return subscribePoll(cmd);
      case "list_offset": return listOffset(cmd);
      default: throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private JsonNode produce(JsonNode cmd) throws Exception {
    Properties p = new Properties();
    p.putAll(base);
    p.put(ProducerConfig.ACKS_CONFIG, cmd.get("acks").asInt() == -1 ? "all" : "1");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, cmd.get("codec").asText());
    // The Java producer is idempotent by default; the non-idempotent cases must say so.
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(cmd.get("idempotent").asBoolean()));
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    String topic = cmd.get("topic").asText();
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (JsonNode r : cmd.get("records")) {
        List<org.apache.kafka.common.header.Header> headers = new ArrayList<>();
        for (JsonNode h : r.get("headers")) headers.add(new RecordHeader(h.get(0).asText(), Wire.unb64(h.get(1))));
        Long ts = r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null;
        sent.add(producer.send(new ProducerRecord<>(topic, r.get("partition").asInt(), ts, Wire.unb64(r.get("key")), Wire.unb64(r.get("value")), headers)));
      }
      producer.flush();
      ObjectNode o = Wire.object();
      ArrayNode offsets = o.putArray("offsets");
      for (Future<RecordMetadata> f : sent) offsets.add(f.get().offset());
      return o;
    }
  }

  KafkaConsumer<byte[], byte[]> consumer() {
    Properties p = new Properties();
    p.putAll(base);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  private JsonNode consume(JsonNode cmd) {
    TopicPartition tp = new TopicPartition(cmd.get("topic").asText(), cmd.get("partition").asInt());
    long from = cmd.get("offset").asLong();
    int count = cmd.get("count").asInt();
    ObjectNode o = Wire.object();
    ArrayNode out = o.putArray("records");
    KafkaConsumer<byte[], byte[]> c = reader;
    try {
      c.assign(List.of(tp));
      c.seek(tp, from);
      long end = c.endOffsets(List.of(tp)).get(tp);
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (out.size() < count && c.position(tp) < end) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("no record within 20 s after " + out.size() + " records (position " + c.position(tp) + ", end " + end + ")");
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
          if (out.size() < count) out.add(Wire.record(r));
        }
      }
    } finally {
      c.unsubscribe();
    }
    return o;
  }

  /**
   * A group member as an application runs one: subscribe to the topic in the group, poll from the earliest
   * offset until `count` records arrive or the client throws (TopicAuthorizationException, say), then close.
   */
  private JsonNode subscribePoll(JsonNode cmd) {
    Properties p = new Properties();
    p.putAll(base);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, cmd.get("group").asText());
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    int count = cmd.get("count").asInt();
    ObjectNode o = Wire.object();
    ArrayNode out = o.putArray("records");
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      c.subscribe(List.of(cmd.get("topic").asText()));
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (out.size() < count) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("no error and " + out.size() + " of " + count + " records within 20 s");
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) out.add(Wire.record(r));
      }
    }
    return o;
  }

  private JsonNode listOffset(JsonNode cmd) {
    TopicPartition tp = new TopicPartition(cmd.get("topic").asText(), cmd.get("partition").asInt());
    JsonNode q = cmd.get("query");
    ObjectNode o = Wire.object();
    if (q.isTextual()) {
      Map<TopicPartition, Long> m = q.asText().equals("earliest") ? reader.beginningOffsets(List.of(tp), TIMEOUT) : reader.endOffsets(List.of(tp), TIMEOUT);
      o.put("offset", m.get(tp));
    } else {
      OffsetAndTimestamp found = reader.offsetsForTimes(Map.of(tp, q.get("timestamp").asLong()), TIMEOUT).get(tp);
      o.put("offset", found == null ? -1 : found.offset());
    }
    return o;
  }

  @Override
  public void close() {
    reader.close();
  }
}
