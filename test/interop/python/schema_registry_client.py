"""confluent-kafka-python's SchemaRegistryClient and its Avro, JSON Schema and Protobuf serializers (PyPI 2.x),
unchanged, against a schema registry URL (argv[1]) and a Kafka bootstrap (argv[2]). Each serializer
auto-registers its schema, the bytes go through Kafka and back, and the deserializer decodes them. Prints one
JSON object with what it saw, for the calling test to check."""
import json
import sys
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

url, bootstrap = sys.argv[1], sys.argv[2]
client = SchemaRegistryClient({"url": url})
out = {}


def through_kafka(topic, value):
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, value=value)
    p.flush(30)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "py-" + uuid.uuid4().hex, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    try:
        while True:
            m = c.poll(1.0)
            if m is not None and m.error() is None:
                return m.value()
    finally:
        c.close()


# Avro
avro_schema = json.dumps({"type": "record", "name": "Payment", "namespace": "floe.py",
                          "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]})
ser = AvroSerializer(client, avro_schema)
ctx = SerializationContext("py-avro", MessageField.VALUE)
raw = ser({"id": "p1", "amount": 9.5}, ctx)
back = through_kafka("py-avro", raw)
out["avro"] = {"id": int.from_bytes(raw[1:5], "big"), "value": AvroDeserializer(SchemaRegistryClient({"url": url}))(back, ctx)}

# JSON Schema
json_schema = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Event", "type": "object",
                          "properties": {"kind": {"type": "string"}, "n": {"type": "integer"}}, "required": ["kind"]})
jser = JSONSerializer(json_schema, client)
jctx = SerializationContext("py-json", MessageField.VALUE)
jraw = jser({"kind": "click", "n": 3}, jctx)
jback = through_kafka("py-json", jraw)
out["json"] = {"id": int.from_bytes(jraw[1:5], "big"), "value": JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": url}))(jback, jctx)}

# Protobuf: a message class built at run time from a FileDescriptorProto (no protoc needed)
fdp = descriptor_pb2.FileDescriptorProto(name="floe/py_reading.proto", package="floe.py", syntax="proto3")
m = fdp.message_type.add(name="PyReading")
m.field.add(name="sensor", number=1, type=9, label=1)
m.field.add(name="value", number=2, type=1, label=1)
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
PyReading = message_factory.GetMessageClass(pool.FindMessageTypeByName("floe.py.PyReading"))
pser = ProtobufSerializer(PyReading, client, {"use.deprecated.format": False})
pctx = SerializationContext("py-proto", MessageField.VALUE)
praw = pser(PyReading(sensor="t1", value=1.25), pctx)
pback = through_kafka("py-proto", praw)
decoded = ProtobufDeserializer(PyReading, {"use.deprecated.format": False})(pback, pctx)
out["protobuf"] = {"id": int.from_bytes(praw[1:5], "big"), "value": {"sensor": decoded.sensor, "value": decoded.value}}

# Client calls
registered = client.get_latest_version("py-proto-value")
out["protobuf_latest"] = {"id": registered.schema_id, "version": registered.version, "type": registered.schema.schema_type}
out["subjects"] = sorted(client.get_subjects())
v2 = json.dumps({"type": "record", "name": "Payment", "namespace": "floe.py",
                 "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"},
                            {"name": "note", "type": ["null", "string"], "default": None}]})
out["compatible_v2"] = client.test_compatibility("py-avro-value", Schema(v2, "AVRO"))
bad = json.dumps({"type": "record", "name": "Payment", "namespace": "floe.py", "fields": [{"name": "id", "type": "int"}]})
out["compatible_bad"] = client.test_compatibility("py-avro-value", Schema(bad, "AVRO"))
try:
    client.register_schema("py-avro-value", Schema(bad, "AVRO"))
    out["register_bad"] = "accepted"
except SchemaRegistryError as e:
    out["register_bad"] = {"http": e.http_status_code, "code": e.error_code}
out["v2_id"] = client.register_schema("py-avro-value", Schema(v2, "AVRO"))
out["lookup_v2"] = client.lookup_schema("py-avro-value", Schema(v2, "AVRO")).version
out["versions"] = client.get_versions("py-avro-value")
client.set_compatibility("py-avro-value", "FULL")
out["compat_level"] = client.get_compatibility("py-avro-value")
try:
    client.get_version("py-avro-value", 99)
except SchemaRegistryError as e:
    out["missing_version"] = {"http": e.http_status_code, "code": e.error_code}
try:
    client.get_latest_version("no-such-subject")
except SchemaRegistryError as e:
    out["missing_subject"] = {"http": e.http_status_code, "code": e.error_code}
print(json.dumps(out))
