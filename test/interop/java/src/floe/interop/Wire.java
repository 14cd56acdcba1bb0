package floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Base64;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** JSON helpers: bytes as base64 (null stays null), records in the shape of test/interop/clients/types.ts WireRecord. */
final class Wire {
  static String b64(byte[] b) {
    return b == null ? null : Base64.getEncoder().encodeToString(b);
  }

  static byte[] unb64(JsonNode n) {
    return n == null || n.isNull() ? null : Base64.getDecoder().decode(n.asText());
  }

  static ObjectNode record(ConsumerRecord<byte[], byte[]> r) {
    ObjectNode o = Driver.JSON.createObjectNode();
    o.put("partition", r.partition());
    o.put("offset", r.offset());
    o.put("key", b64(r.key()));
    o.put("value", b64(r.value()));
    ArrayNode hs = o.putArray("headers");
    for (Header h : r.headers()) hs.addArray().add(h.key()).add(b64(h.value()));
    o.put("timestamp", r.timestamp());
    return o;
  }

  static ObjectNode object() {
    return Driver.JSON.createObjectNode();
  }

  private Wire() {}
}
