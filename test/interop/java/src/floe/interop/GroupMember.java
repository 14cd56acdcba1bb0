package floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A classic-protocol group member on its own thread (a KafkaConsumer is single-threaded): subscribes, polls,
 * commits what it read after every poll, until stopped; then it leaves the group (close), so the group is
 * Empty with its committed offsets.
 */
final class GroupMember {
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Thread thread;
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicLong consumed = new AtomicLong();
  private final CompletableFuture<Set<TopicPartition>> assigned = new CompletableFuture<>();
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  GroupMember(Properties base, String group, List<String> topics) {
    Properties p = new Properties();
    p.putAll(base);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "floe-java-member");
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    thread = new Thread(() -> loop(topics), "member-" + group);
    thread.setDaemon(true);
    thread.start();
  }

  private void loop(List<String> topics) {
    try {
      consumer.subscribe(topics);
      while (!stopping.get()) {
        int n = consumer.poll(Duration.ofMillis(200)).count();
        if (n > 0) {
          consumer.commitSync();
          consumed.addAndGet(n);
        }
        if (!consumer.assignment().isEmpty() && !assigned.isDone()) assigned.complete(Set.copyOf(consumer.assignment()));
      }
      done.complete(null);
    } catch (WakeupException e) {
      done.complete(null);
    } catch (Throwable e) {
      assigned.completeExceptionally(e);
      done.completeExceptionally(e);
    } finally {
      consumer.close();
    }
  }

  JsonNode awaitAssignment() throws Exception {
    Set<TopicPartition> tps = assigned.get(30, TimeUnit.SECONDS);
    ObjectNode o = Wire.object();
    ArrayNode a = o.putArray("assignment");
    List<TopicPartition> sorted = new ArrayList<>(tps);
    sorted.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
    for (TopicPartition tp : sorted) a.addArray().add(tp.topic()).add(tp.partition());
    return o;
  }

  /** Stops polling once everything polled so far is committed, and leaves the group. */
  JsonNode stop() throws Exception {
    stopping.set(true);
    done.get(30, TimeUnit.SECONDS);
    thread.join(30_000);
    ObjectNode o = Wire.object();
    o.put("consumed", consumed.get());
    return o;
  }
}
