package floe.txn;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Apache Kafka's Java client in a consume-transform-produce loop with exactly-once semantics, for Floe's
 * transaction tests (compiled by the test with javac against the peers' kafka-clients classpath).
 *
 * <pre>
 * loop BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID ABORT_RATE SEED
 *   reads INPUT (read_committed, group GROUP), writes key -> "value|upper" to OUTPUT in a transaction with
 *   the consumed offsets (sendOffsetsToTransaction), aborts a random share of the transactions (and rewinds
 *   to the last committed position), and stops once the group's committed offsets reach the end of INPUT.
 *   Prints {"committed":n,"aborted":m}.
 * read BOOTSTRAP TOPIC ISOLATION
 *   reads TOPIC from the beginning up to its end offsets (the LSO for read_committed) and prints the keys,
 *   one per line.
 * zombie BOOTSTRAP TOPIC TRANSACTIONAL_ID
 *   producer A opens a transaction and writes "zombie"; producer B with the same transactional id starts
 *   and commits "successor"; then A tries to commit. Prints the class of the exception A got (or "none").
 * </pre>
 */
public final class TxnLoop {
  private TxnLoop() {}

  public static void main(String[] args) throws Exception {
    if (args.length >= 7 && args[0].equals("loop")) {
      loop(args[1], args[2], args[3], args[4], args[5], Double.parseDouble(args[6]), Long.parseLong(args[7]));
    } else if (args.length == 4 && args[0].equals("read")) {
      read(args[1], args[2], args[3]);
    } else if (args.length == 4 && args[0].equals("zombie")) {
      zombie(args[1], args[2], args[3]);
    } else {
      System.err.println("usage: loop BOOTSTRAP INPUT OUTPUT GROUP TXN_ID ABORT_RATE SEED | read BOOTSTRAP TOPIC ISOLATION");
      System.exit(2);
    }
  }

  private static void loop(String bootstrap, String input, String output, String group, String txnId, double abortRate, long seed) {
    Properties cp = new Properties();
    cp.put("bootstrap.servers", bootstrap);
    cp.put("group.id", group);
    cp.put("isolation.level", "read_committed");
    cp.put("enable.auto.commit", "false");
    cp.put("auto.offset.reset", "earliest");
    cp.put("max.poll.records", "7");
    // A member killed with kill -9 leaves the group within seconds (the default is 45 s).
    cp.put("session.timeout.ms", "6000");
    cp.put("heartbeat.interval.ms", "1000");
    Properties pp = new Properties();
    pp.put("bootstrap.servers", bootstrap);
    pp.put("transactional.id", txnId);
    pp.put("enable.idempotence", "true");
    pp.put("linger.ms", "0");
    // After a broker restart aborted its transaction with a bumped epoch, the broker answers this producer's
    // AddPartitionsToTxn with PRODUCER_FENCED at once, yet kafka-clients sometimes leaves a concurrent
    // sendOffsetsToTransaction waiting for max.block.ms (60 s by default) before it throws; the run exits
    // either way and is restarted, so a shorter bound only keeps the kill test short.
    pp.put("max.block.ms", "15000");
    Random random = new Random(seed);
    int committed = 0;
    int aborted = 0;
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer());
        KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(input)) partitions.add(new TopicPartition(input, p.partition()));
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      consumer.subscribe(List.of(input));
      producer.initTransactions();
      while (!reached(consumer, partitions, end)) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) continue;
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (ConsumerRecord<String, String> r : records) {
          producer.send(new ProducerRecord<>(output, r.key(), r.value() + "|" + r.value().toUpperCase()));
          next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
        if (random.nextDouble() < abortRate) {
          producer.abortTransaction();
          aborted++;
          rewind(consumer, records.partitions());
        } else {
          producer.commitTransaction();
          committed++;
        }
      }
    }
    System.out.println("{\"committed\":" + committed + ",\"aborted\":" + aborted + "}");
  }

  /** After an abort: back to the group's committed offsets (or the beginning) for the partitions just read. */
  private static void rewind(KafkaConsumer<String, String> consumer, Collection<TopicPartition> partitions) {
    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(partitions));
    for (TopicPartition tp : partitions) {
      OffsetAndMetadata c = committed.get(tp);
      if (c == null) consumer.seekToBeginning(List.of(tp));
      else consumer.seek(tp, c.offset());
    }
  }

  private static boolean reached(KafkaConsumer<String, String> consumer, List<TopicPartition> partitions, Map<TopicPartition, Long> end) {
    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(partitions));
    for (TopicPartition tp : partitions) {
      OffsetAndMetadata c = committed.get(tp);
      long target = end.getOrDefault(tp, 0L);
      if (target > 0 && (c == null || c.offset() < target)) return false;
    }
    return true;
  }

  private static void zombie(String bootstrap, String topic, String txnId) throws Exception {
    Properties pp = new Properties();
    pp.put("bootstrap.servers", bootstrap);
    pp.put("transactional.id", txnId);
    pp.put("linger.ms", "0");
    try (KafkaProducer<String, String> a = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer());
        KafkaProducer<String, String> b = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
      a.initTransactions();
      a.beginTransaction();
      a.send(new ProducerRecord<>(topic, "zombie", "a")).get();
      b.initTransactions();
      b.beginTransaction();
      b.send(new ProducerRecord<>(topic, "successor", "b")).get();
      b.commitTransaction();
      String outcome = "none";
      try {
        a.send(new ProducerRecord<>(topic, "zombie-2", "a")).get();
        a.commitTransaction();
      } catch (Exception e) {
        Throwable c = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
        outcome = c.getClass().getName();
      }
      System.out.println(outcome);
    }
  }

  private static void read(String bootstrap, String topic, String isolation) {
    Properties cp = new Properties();
    cp.put("bootstrap.servers", bootstrap);
    cp.put("isolation.level", isolation);
    cp.put("enable.auto.commit", "false");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(topic)) partitions.add(new TopicPartition(topic, p.partition()));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      StringBuilder out = new StringBuilder();
      for (;;) {
        boolean done = true;
        for (TopicPartition tp : partitions) if (consumer.position(tp) < end.get(tp)) done = false;
        if (done) break;
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) out.append(r.key()).append('\n');
      }
      System.out.print(out);
    }
  }
}
