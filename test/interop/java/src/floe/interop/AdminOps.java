package floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** The AdminClient operations the tests drive (ACLs in AclOps), and a group member (GroupMember) to give groups a live member. */
final class AdminOps implements AutoCloseable {
  private static final long TIMEOUT_S = 20;
  private final Admin admin;
  private final Properties base;
  private final Map<String, GroupMember> members = new HashMap<>();
  private final AclOps acls;

  AdminOps(Properties base) {
    this.base = base;
    Properties p = new Properties();
    p.putAll(base);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    admin = Admin.create(p);
    acls = new AclOps(admin);
  }

  JsonNode run(String op, JsonNode cmd) throws Exception {
    if (AclOps.handles(op)) return acls.run(op, cmd);
    switch (op) {
      case "create_topic": return createTopic(cmd);
      case "delete_topic": admin.deleteTopics(List.of(topic(cmd))).all().get(TIMEOUT_S, TimeUnit.SECONDS); return Wire.object();
      case "partition_count": return partitionCount(cmd);
      case "list_topics": return listTopics();
      case "describe_topic": return describeTopic(cmd);
      case "describe_configs": return describeConfigs(cmd);
      case "alter_configs": return alterConfigs(cmd);
      case "create_partitions": admin.createPartitions(Map.of(topic(cmd), NewPartitions.increaseTo(cmd.get("total").asInt()))).all().get(TIMEOUT_S, TimeUnit.SECONDS); return Wire.object();
      case "list_groups": return listGroups();
      case "describe_group": return describeGroup(cmd);
      case "list_group_offsets": return listGroupOffsets(cmd);
      case "alter_group_offsets": return alterGroupOffsets(cmd);
      case "delete_group_offsets": return deleteGroupOffsets(cmd);
      case "delete_groups": return deleteGroups(cmd);
      case "delete_records": return deleteRecords(cmd);
      case "describe_log_dirs": return describeLogDirs();
      case "group_join": return join(cmd);
      case "group_leave": return leave(cmd);
      default: throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private static String topic(JsonNode cmd) {
    return cmd.get("topic").asText();
  }

  private static <T> T await(org.apache.kafka.common.KafkaFuture<T> f) throws Exception {
    return f.get(TIMEOUT_S, TimeUnit.SECONDS);
  }

  private JsonNode createTopic(JsonNode cmd) throws Exception {
    NewTopic t = new NewTopic(topic(cmd), cmd.get("partitions").asInt(), (short) 1);
    if (cmd.has("configs")) {
      Map<String, String> configs = new HashMap<>();
      cmd.get("configs").properties().forEach(e -> configs.put(e.getKey(), e.getValue().asText()));
      t.configs(configs);
    }
    await(admin.createTopics(List.of(t)).all());
    return Wire.object();
  }

  private JsonNode partitionCount(JsonNode cmd) throws Exception {
    ObjectNode o = Wire.object();
    try {
      o.put("count", await(admin.describeTopics(List.of(topic(cmd))).allTopicNames()).get(topic(cmd)).partitions().size());
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
      o.putNull("count");
    }
    return o;
  }

  private JsonNode listTopics() throws Exception {
    ObjectNode o = Wire.object();
    ArrayNode names = o.putArray("topics");
    for (String n : new java.util.TreeSet<>(await(admin.listTopics().names()))) names.add(n);
    return o;
  }

  private JsonNode describeTopic(JsonNode cmd) throws Exception {
    TopicDescription d = await(admin.describeTopics(List.of(topic(cmd))).allTopicNames()).get(topic(cmd));
    ObjectNode o = Wire.object();
    o.put("name", d.name());
    o.put("topicId", d.topicId().toString());
    o.put("internal", d.isInternal());
    ArrayNode ps = o.putArray("partitions");
    for (TopicPartitionInfo p : d.partitions()) {
      ObjectNode po = ps.addObject();
      po.put("partition", p.partition());
      po.put("leader", p.leader() == null ? -1 : p.leader().id());
      ArrayNode replicas = po.putArray("replicas");
      for (Node n : p.replicas()) replicas.add(n.id());
      ArrayNode isr = po.putArray("isr");
      for (Node n : p.isr()) isr.add(n.id());
    }
    return o;
  }

  private JsonNode describeConfigs(JsonNode cmd) throws Exception {
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic(cmd));
    Config c = await(admin.describeConfigs(List.of(r)).all()).get(r);
    ObjectNode o = Wire.object();
    ObjectNode configs = o.putObject("configs");
    for (ConfigEntry e : new TreeMap<>(toMap(c.entries())).values()) {
      ObjectNode eo = configs.putObject(e.name());
      eo.put("value", e.value());
      eo.put("source", e.source().name());
      eo.put("isDefault", e.isDefault());
      eo.put("readOnly", e.isReadOnly());
      eo.put("sensitive", e.isSensitive());
    }
    return o;
  }

  private static Map<String, ConfigEntry> toMap(Collection<ConfigEntry> entries) {
    Map<String, ConfigEntry> m = new HashMap<>();
    for (ConfigEntry e : entries) m.put(e.name(), e);
    return m;
  }

  private JsonNode alterConfigs(JsonNode cmd) throws Exception {
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic(cmd));
    List<AlterConfigOp> ops = new ArrayList<>();
    for (JsonNode op : cmd.get("ops")) {
      AlterConfigOp.OpType type = AlterConfigOp.OpType.valueOf(op.get("op").asText().toUpperCase());
      ops.add(new AlterConfigOp(new ConfigEntry(op.get("name").asText(), op.hasNonNull("value") ? op.get("value").asText() : null), type));
    }
    await(admin.incrementalAlterConfigs(Map.of(r, ops)).all());
    return Wire.object();
  }

  private JsonNode listGroups() throws Exception {
    ObjectNode o = Wire.object();
    ArrayNode gs = o.putArray("groups");
    for (GroupListing g : await(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all())) {
      ObjectNode go = gs.addObject();
      go.put("groupId", g.groupId());
      go.put("state", g.groupState().map(Object::toString).orElse(null));
      go.put("type", g.type().map(GroupType::toString).orElse(null));
      go.put("protocol", g.protocol());
    }
    return o;
  }

  private JsonNode describeGroup(JsonNode cmd) throws Exception {
    String group = cmd.get("group").asText();
    ConsumerGroupDescription d = await(admin.describeConsumerGroups(List.of(group)).all()).get(group);
    ObjectNode o = Wire.object();
    o.put("groupId", d.groupId());
    o.put("state", d.groupState().toString());
    o.put("type", d.type().toString());
    o.put("assignor", d.partitionAssignor());
    o.put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id());
    ArrayNode ms = o.putArray("members");
    for (MemberDescription m : d.members()) {
      ObjectNode mo = ms.addObject();
      mo.put("memberId", m.consumerId());
      mo.put("clientId", m.clientId());
      mo.put("host", m.host());
      ArrayNode a = mo.putArray("assignment");
      for (TopicPartition tp : m.assignment().topicPartitions()) a.addArray().add(tp.topic()).add(tp.partition());
    }
    return o;
  }

  private JsonNode listGroupOffsets(JsonNode cmd) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> m = await(admin.listConsumerGroupOffsets(cmd.get("group").asText()).partitionsToOffsetAndMetadata());
    ObjectNode o = Wire.object();
    ArrayNode offsets = o.putArray("offsets");
    List<TopicPartition> keys = new ArrayList<>(m.keySet());
    keys.sort((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
    for (TopicPartition tp : keys) {
      OffsetAndMetadata om = m.get(tp);
      offsets.addArray().add(tp.topic()).add(tp.partition()).add(om == null ? -1 : om.offset());
    }
    return o;
  }

  private static Map<TopicPartition, OffsetAndMetadata> offsetsOf(JsonNode list) {
    Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
    for (JsonNode e : list) m.put(new TopicPartition(e.get(0).asText(), e.get(1).asInt()), new OffsetAndMetadata(e.get(2).asLong()));
    return m;
  }

  private JsonNode alterGroupOffsets(JsonNode cmd) throws Exception {
    await(admin.alterConsumerGroupOffsets(cmd.get("group").asText(), offsetsOf(cmd.get("offsets"))).all());
    return Wire.object();
  }

  private JsonNode deleteGroupOffsets(JsonNode cmd) throws Exception {
    java.util.Set<TopicPartition> tps = new java.util.HashSet<>();
    for (JsonNode p : cmd.get("partitions")) tps.add(new TopicPartition(topic(cmd), p.asInt()));
    await(admin.deleteConsumerGroupOffsets(cmd.get("group").asText(), tps).all());
    return Wire.object();
  }

  private JsonNode deleteGroups(JsonNode cmd) throws Exception {
    List<String> groups = new ArrayList<>();
    for (JsonNode g : cmd.get("groups")) groups.add(g.asText());
    await(admin.deleteConsumerGroups(groups).all());
    return Wire.object();
  }

  private JsonNode deleteRecords(JsonNode cmd) throws Exception {
    TopicPartition tp = new TopicPartition(topic(cmd), cmd.get("partition").asInt());
    long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(cmd.get("offset").asLong()))).lowWatermarks().get(tp).get(TIMEOUT_S, TimeUnit.SECONDS).lowWatermark();
    ObjectNode o = Wire.object();
    o.put("lowWatermark", low);
    return o;
  }

  private JsonNode describeLogDirs() throws Exception {
    Collection<Node> nodes = await(admin.describeCluster().nodes());
    List<Integer> ids = new ArrayList<>();
    for (Node n : nodes) ids.add(n.id());
    Map<Integer, Map<String, LogDirDescription>> all = await(admin.describeLogDirs(ids).allDescriptions());
    ObjectNode o = Wire.object();
    ArrayNode brokers = o.putArray("brokers");
    for (Map.Entry<Integer, Map<String, LogDirDescription>> b : new TreeMap<>(all).entrySet()) {
      ObjectNode bo = brokers.addObject();
      bo.put("broker", b.getKey());
      ArrayNode dirs = bo.putArray("dirs");
      for (Map.Entry<String, LogDirDescription> d : new TreeMap<>(b.getValue()).entrySet()) {
        ObjectNode dobj = dirs.addObject();
        dobj.put("path", d.getKey());
        dobj.put("error", d.getValue().error() == null ? null : d.getValue().error().getClass().getSimpleName());
        dobj.put("totalBytes", d.getValue().totalBytes().isPresent() ? d.getValue().totalBytes().getAsLong() : -1);
        dobj.put("usableBytes", d.getValue().usableBytes().isPresent() ? d.getValue().usableBytes().getAsLong() : -1);
        ArrayNode replicas = dobj.putArray("replicas");
        Map<TopicPartition, ReplicaInfo> infos = d.getValue().replicaInfos();
        List<TopicPartition> keys = new ArrayList<>(infos.keySet());
        keys.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
        for (TopicPartition tp : keys) {
          ReplicaInfo ri = infos.get(tp);
          replicas.addObject().put("topic", tp.topic()).put("partition", tp.partition()).put("size", ri.size()).put("offsetLag", ri.offsetLag()).put("isFuture", ri.isFuture());
        }
      }
    }
    return o;
  }

  private JsonNode join(JsonNode cmd) throws Exception {
    String group = cmd.get("group").asText();
    List<String> topics = new ArrayList<>();
    for (JsonNode t : cmd.get("topics")) topics.add(t.asText());
    GroupMember m = new GroupMember(base, group, topics);
    members.put(group, m);
    return m.awaitAssignment();
  }

  private JsonNode leave(JsonNode cmd) throws Exception {
    GroupMember m = members.remove(cmd.get("group").asText());
    if (m == null) throw new IllegalStateException("no member of group " + cmd.get("group").asText() + " was started");
    return m.stop();
  }

  @Override
  public void close() {
    for (GroupMember m : members.values()) {
      try { m.stop(); } catch (Exception ignored) { /* closing anyway */ }
    }
    admin.close();
  }
}
