"""confluent-kafka-python's SchemaRegistryClient (PyPI 2.x) against Floe's registry over HTTPS with
basic.auth.user.info (test/interop/http-security.test.ts). Reads {"url", "ca", "attempts": [{"name", "user_info"
or null}]} on stdin; for each attempt registers a string schema under orders-key and lists the subjects, and
prints {"<name>": {"registered": id, "subjects": [...]}} or {"<name>": {"status": <http status>, "code": <error_code>}}.
"""
import json
import sys

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError


def attempt(cmd, user_info):
    conf = {'url': cmd['url'], 'ssl.ca.location': cmd['ca']}
    if user_info is not None:
        conf['basic.auth.user.info'] = user_info
    client = SchemaRegistryClient(conf)
    out = {}
    try:
        out['registered'] = client.register_schema('orders-key', Schema('"string"', 'AVRO'))
    except SchemaRegistryError as e:
        out['register_status'], out['register_code'] = e.http_status_code, e.error_code
    try:
        out['subjects'] = sorted(client.get_subjects())
    except SchemaRegistryError as e:
        out['list_status'], out['list_code'] = e.http_status_code, e.error_code
    return out


cmd = json.load(sys.stdin)
print(json.dumps({a['name']: attempt(cmd, a['user_info']) for a in cmd['attempts']}))
