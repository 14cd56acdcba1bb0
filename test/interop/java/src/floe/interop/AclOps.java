package floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DeleteAclsResult;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The AdminClient's ACL calls: createAcls, describeAcls and deleteAcls. A binding is JSON with Kafka's enum
 * names, {"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED","principal":"User:alice",
 * "host":"*","operation":"READ","permission":"ALLOW"}; in a filter a missing or null field means ANY (and
 * patternType may be MATCH), as in Kafka's AclBindingFilter.
 */
final class AclOps {
  private static final long TIMEOUT_S = 20;
  private final Admin admin;

  AclOps(Admin admin) {
    this.admin = admin;
  }

  static boolean handles(String op) {
    return op.equals("create_acls") || op.equals("describe_acls") || op.equals("delete_acls");
  }

  JsonNode run(String op, JsonNode cmd) throws Exception {
    switch (op) {
      case "create_acls": {
        List<AclBinding> bindings = new ArrayList<>();
        for (JsonNode b : cmd.get("acls")) bindings.add(binding(b));
        admin.createAcls(bindings).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return Wire.object();
      }
      case "describe_acls": {
        Collection<AclBinding> found = admin.describeAcls(filter(cmd.get("filter"))).values().get(TIMEOUT_S, TimeUnit.SECONDS);
        ObjectNode o = Wire.object();
        ArrayNode acls = o.putArray("acls");
        for (AclBinding b : found) acls.add(json(b));
        return o;
      }
      case "delete_acls": {
        List<AclBindingFilter> filters = new ArrayList<>();
        for (JsonNode f : cmd.get("filters")) filters.add(filter(f));
        // One list of deleted bindings per filter, in the filters' order.
        Map<AclBindingFilter, org.apache.kafka.common.KafkaFuture<DeleteAclsResult.FilterResults>> results = admin.deleteAcls(filters).values();
        ObjectNode o = Wire.object();
        ArrayNode perFilter = o.putArray("deleted");
        for (AclBindingFilter f : filters) {
          ArrayNode deleted = perFilter.addArray();
          for (DeleteAclsResult.FilterResult r : results.get(f).get(TIMEOUT_S, TimeUnit.SECONDS).values()) {
            if (r.exception() != null) throw r.exception();
            deleted.add(json(r.binding()));
          }
        }
        return o;
      }
      default: throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private static AclBinding binding(JsonNode b) {
    return new AclBinding(
        new ResourcePattern(ResourceType.valueOf(b.get("resourceType").asText()), b.get("name").asText(), PatternType.valueOf(b.get("patternType").asText())),
        new AccessControlEntry(b.get("principal").asText(), b.get("host").asText(), AclOperation.valueOf(b.get("operation").asText()), AclPermissionType.valueOf(b.get("permission").asText())));
  }

  private static String text(JsonNode f, String field) {
    return f.hasNonNull(field) ? f.get(field).asText() : null;
  }

  private static AclBindingFilter filter(JsonNode f) {
    String type = text(f, "resourceType");
    String pattern = text(f, "patternType");
    String operation = text(f, "operation");
    String permission = text(f, "permission");
    return new AclBindingFilter(
        new ResourcePatternFilter(type == null ? ResourceType.ANY : ResourceType.valueOf(type), text(f, "name"), pattern == null ? PatternType.ANY : PatternType.valueOf(pattern)),
        new AccessControlEntryFilter(text(f, "principal"), text(f, "host"), operation == null ? AclOperation.ANY : AclOperation.valueOf(operation), permission == null ? AclPermissionType.ANY : AclPermissionType.valueOf(permission)));
  }

  private static ObjectNode json(AclBinding b) {
    ObjectNode o = Wire.object();
    o.put("resourceType", b.pattern().resourceType().name());
    o.put("name", b.pattern().name());
    o.put("patternType", b.pattern().patternType().name());
    o.put("principal", b.entry().principal());
    o.put("host", b.entry().host());
    o.put("operation", b.entry().operation().name());
    o.put("permission", b.entry().permissionType().name());
    return o;
  }
}
