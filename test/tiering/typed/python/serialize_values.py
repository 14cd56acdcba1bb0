"""Values serialized by confluent-kafka-python 2.x's serializers (PyPI), for the typed-codec tests
(test/tiering/typed/python-serializers.test.ts): Avro through fastavro, JSON Schema through the stdlib/orjson
codec, Protobuf through google.protobuf (upb, protoc's own encoding). Each serializer registers its schema
in Floe's registry (argv[1]); the script prints one JSON line: {case: {"id": n, "hex": "..."}}.
"""
import datetime
import decimal
import json
import sys
import uuid

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

client = SchemaRegistryClient({"url": sys.argv[1]})
avro_schema = sys.argv[2]
json_schema = sys.argv[3]
out = {}


def put(name, topic, serializer, value):
    raw = serializer(value, SerializationContext(topic, MessageField.VALUE))
    out[name] = {"id": int.from_bytes(raw[1:5], "big"), "hex": raw.hex()}


UTC = datetime.timezone.utc
aser = AvroSerializer(client, avro_schema, conf={"auto.register.schemas": True})
base = {
    "id": 2**62 + 1,
    "score": 1.5,
    "ratio": -0.1,
    "ok": True,
    "label": "py é",
    "blob": b"\x00\x01",
    "hash": b"abcd",
    "kind": "B",
    "price": decimal.Decimal("-12.34"),
    "fprice": decimal.Decimal("99999999999999.9999"),
    "day": datetime.date(1969, 12, 31),
    "tmillis": datetime.time(23, 59, 59, 999000),
    "tmicros": datetime.time(0, 0, 0, 1),
    "tsmillis": datetime.datetime(2024, 2, 29, 12, 0, 0, 5000, tzinfo=UTC),
    "tsmicros": datetime.datetime(1960, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    "local": datetime.datetime(2024, 1, 1, 0, 0, 0, 123456),
    "uid": uuid.UUID("123e4567-e89b-12d3-a456-426614174000"),
    "note": None,
    "note2": "n2",
    "choice": ("floe.typed.Point", {"x": 1, "y": 2}),
    "either": -5,
    "tags": ["a"],
    "points": [{"x": -1, "y": 0}],
    "attrs": {"k": None, "l": -(2**63)},
    "nested": {"deep": {"v": 0.5}},
}
put("avro", "py-typed-avro", aser, base)
put("avro_other", "py-typed-avro", aser, {**base, "note": "", "choice": "text", "either": "s", "tags": [], "attrs": {}})

jser = JSONSerializer(json_schema, client, conf={"auto.register.schemas": True})
put("json", "py-typed-json", jser, {
    "id": 7, "name": None, "score": 2.5, "ok": True, "when": "2024-02-29T12:00:00.005Z", "day": "2024-02-29",
    "uid": "123e4567-e89b-12d3-a456-426614174000", "tags": ["é", "\n"], "attrs": {"a": 1}, "home": {"city": "Oslo"},
    "pick": 3, "maybe": None,
})
put("json_float", "py-typed-json", jser, {"id": 1, "name": "x", "score": 2.0, "maybe": None})

fdp = descriptor_pb2.FileDescriptorProto(name="floe/py_typed.proto", package="floe.py", syntax="proto3",
                                         dependency=["google/protobuf/timestamp.proto"])
m = fdp.message_type.add(name="Event")
inner = m.nested_type.add(name="Inner")
inner.field.add(name="label", number=1, type=9, label=1)
entry = m.nested_type.add(name="AttrsEntry")
entry.field.add(name="key", number=1, type=9, label=1)
entry.field.add(name="value", number=2, type=3, label=1)
entry.options.map_entry = True
color = m.enum_type.add(name="Color")
color.value.add(name="NONE", number=0)
color.value.add(name="RED", number=1)
m.oneof_decl.add(name="pick")
m.field.add(name="id", number=1, type=3, label=1)
m.field.add(name="neg", number=2, type=5, label=1)
m.field.add(name="big", number=3, type=4, label=1)
m.field.add(name="color", number=4, type=14, label=1, type_name=".floe.py.Event.Color")
m.field.add(name="nums", number=5, type=17, label=3)
m.field.add(name="inners", number=6, type=11, label=3, type_name=".floe.py.Event.Inner")
m.field.add(name="attrs", number=7, type=11, label=3, type_name=".floe.py.Event.AttrsEntry")
m.field.add(name="text", number=8, type=9, label=1, oneof_index=0)
m.field.add(name="inner", number=9, type=11, label=1, oneof_index=0, type_name=".floe.py.Event.Inner")
m.field.add(name="at", number=10, type=11, label=1, type_name=".google.protobuf.Timestamp")
m.field.add(name="ratio", number=11, type=2, label=1)
pool = descriptor_pool.DescriptorPool()
pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
pool.Add(fdp)
Event = message_factory.GetMessageClass(pool.FindMessageTypeByName("floe.py.Event"))
Inner = message_factory.GetMessageClass(pool.FindMessageTypeByName("floe.py.Event.Inner"))
pser = ProtobufSerializer(Event, client, {"use.deprecated.format": False})
ev = Event(id=-3, neg=-1, big=2**64 - 1, color=1, nums=[1, -2, 3], ratio=0.25)
ev.inners.add(label="i1")
ev.inners.add(label="")
ev.attrs["a"] = -(2**63)
ev.attrs["b"] = 0
ev.inner.label = "chosen"
ev.at.seconds = 1_700_000_000
ev.at.nanos = 1000
put("protobuf", "py-typed-proto", pser, ev)
put("protobuf_empty", "py-typed-proto", pser, Event())
iser = ProtobufSerializer(Inner, client, {"use.deprecated.format": False})
put("protobuf_nested", "py-typed-proto-inner", iser, Inner(label="nested"))

print(json.dumps(out))
