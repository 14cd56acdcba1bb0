package floe.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

/**
 * Interop driver for Apache Kafka's Java client (kafka-clients), run as one long-lived JVM per test client:
 * it reads one JSON command per line on stdin and answers each with one JSON line on stdout,
 * {"id":N,"ok":true,"result":{...}} or {"id":N,"ok":false,"error":"ExceptionClass","message":"..."}.
 * Keys, values and header values are base64, so the caller compares bytes exactly. Commands are run one at a
 * time, in order; the caller (test/interop/clients/java.ts) waits for each answer before sending the next.
 *
 * The client's own logging goes nowhere (slf4j without a binding), so stdout carries only answers.
 *
 * Arguments: the bootstrap servers, and optionally a properties file of client settings (security.protocol,
 * sasl.mechanism, sasl.jaas.config, ssl.*) that every producer, consumer and admin client of the driver uses.
 */
public final class Driver {
  static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    Properties base = new Properties();
    if (args.length > 1) {
      try (Reader r = Files.newBufferedReader(Path.of(args[1]), StandardCharsets.UTF_8)) {
        base.load(r);
      }
    }
    base.put("bootstrap.servers", args[0]);
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err); // nothing but answers on the real stdout
    ClientOps client = new ClientOps(base);
    AdminOps admin = new AdminOps(base);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try {
      for (String line; (line = in.readLine()) != null; ) {
        if (line.isBlank()) continue;
        JsonNode cmd = JSON.readTree(line);
        ObjectNode answer = JSON.createObjectNode();
        answer.set("id", cmd.get("id"));
        try {
          String op = cmd.get("op").asText();
          JsonNode result = client.handles(op) ? client.run(op, cmd) : admin.run(op, cmd);
          answer.put("ok", true);
          answer.set("result", result);
        } catch (Throwable e) {
          Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
          answer.put("ok", false);
          answer.put("error", cause.getClass().getSimpleName());
          answer.put("message", String.valueOf(cause.getMessage()));
        }
        out.println(JSON.writeValueAsString(answer));
      }
    } finally {
      client.close();
      admin.close();
    }
  }

  private Driver() {}
}
