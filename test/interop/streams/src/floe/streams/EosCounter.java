package floe.streams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * A Kafka Streams application with exactly-once-v2 processing, for Floe's transaction tests (compiled by
 * scripts/peers/25-kafka-streams.sh against kafka-streams from Maven Central).
 *
 * <pre>
 * run BOOTSTRAP INPUT OUTPUT APPLICATION_ID STATE_DIR
 *   reads INPUT (key: a group, value: a unique record id), counts the records of each group in a RocksDB
 *   state store ("counts", backed by its changelog topic) and writes id -> "group:count" to OUTPUT. Prints
 *   "STATE name" on every state change; exits 3 when Streams reaches ERROR. SIGTERM closes it cleanly.
 * read BOOTSTRAP TOPIC ISOLATION
 *   reads TOPIC with ISOLATION (read_committed or read_uncommitted) from the beginning up to its end offsets
 *   (the last stable offsets for read_committed) and prints "key\tvalue" lines.
 * </pre>
 *
 * Under exactly-once every input id appears once in OUTPUT, and each group's counts are exactly 1..n: a
 * record processed twice, or a state store restored from an uncommitted or incomplete changelog, shows up as
 * a repeated id or a repeated or missing count.
 */
public final class EosCounter {
  private EosCounter() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 6 && args[0].equals("run")) {
      run(args[1], args[2], args[3], args[4], args[5]);
    } else if (args.length == 4 && args[0].equals("read")) {
      read(args[1], args[2], args[3]);
    } else {
      System.err.println("usage: run BOOTSTRAP INPUT OUTPUT APPLICATION_ID STATE_DIR | read BOOTSTRAP TOPIC ISOLATION");
      System.exit(2);
    }
  }

  private static void run(String bootstrap, String input, String output, String applicationId, String stateDir) throws InterruptedException {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    // A killed member leaves the group within seconds rather than Streams' default 45 s.
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);
    p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), 10000);

    StreamsBuilder builder = new StreamsBuilder();
    builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("counts"), Serdes.String(), Serdes.Long()));
    builder.<String, String>stream(input).process(GroupCounter::new, "counts").to(output);

    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    streams.setStateListener((now, before) -> {
      System.out.println("STATE " + now);
      System.out.flush();
      if (now == KafkaStreams.State.ERROR) Runtime.getRuntime().halt(3);
    });
    streams.setUncaughtExceptionHandler(e -> {
      e.printStackTrace();
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(30))));
    streams.start();
    Thread.currentThread().join();
  }

  /** Counts each group's records in the state store and forwards id -> "group:count". */
  private static final class GroupCounter implements Processor<String, String, String, String> {
    private ProcessorContext<String, String> context;
    private KeyValueStore<String, Long> counts;

    @Override
    public void init(ProcessorContext<String, String> context) {
      this.context = context;
      this.counts = context.getStateStore("counts");
    }

    @Override
    public void process(Record<String, String> record) {
      Long previous = counts.get(record.key());
      long count = (previous == null ? 0 : previous) + 1;
      counts.put(record.key(), count);
      context.forward(record.withKey(record.value()).withValue(record.key() + ":" + count));
    }
  }

  private static void read(String bootstrap, String topic, String isolation) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(topic)) partitions.add(new TopicPartition(topic, info.partition()));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      StringBuilder out = new StringBuilder();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) out.append(r.key()).append('\t').append(r.value()).append('\n');
      }
      System.out.print(out);
    }
  }
}
