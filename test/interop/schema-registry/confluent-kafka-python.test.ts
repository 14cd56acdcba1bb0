// confluent-kafka-python 2.x from PyPI: its SchemaRegistryClient and its Avro, JSON Schema and Protobuf
// serializers, unchanged (test/interop/python/schema_registry_client.py), against Floe's registry and broker.
// The serializers auto-register (the Protobuf one as a base64 FileDescriptorProto), the records travel
// through Floe, and the deserializers decode them; the client's calls see Confluent's codes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { venvPython } from '../../helpers/peers.js';
import { startRegistryBroker } from './registry-broker.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../python/schema_registry_client.py', import.meta.url));

test('confluent-kafka-python SchemaRegistryClient and serializers against Floe', { timeout: 180_000 }, async (t) => {
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  const { stdout } = await run(venvPython(), [SCRIPT, broker.registryUrl, broker.bootstrap], { timeout: 150_000 });
  const out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  assert.deepEqual(out['avro'], { id: 1, value: { id: 'p1', amount: 9.5 } }, 'Avro: auto-registered as id 1, decoded after a trip through Kafka');
  assert.deepEqual(out['json'], { id: 2, value: { kind: 'click', n: 3 } }, 'JSON Schema');
  assert.deepEqual(out['protobuf'], { id: 3, value: { sensor: 't1', value: 1.25 } }, 'Protobuf');
  assert.deepEqual(out['protobuf_latest'], { id: 3, version: 1, type: 'PROTOBUF' });
  assert.deepEqual(out['subjects'], ['py-avro-value', 'py-json-value', 'py-proto-value']);
  assert.equal(out['compatible_v2'], true, 'adding an optional field is BACKWARD compatible');
  assert.equal(out['compatible_bad'], false, 'changing string to int is not');
  assert.deepEqual(out['register_bad'], { http: 409, code: 409 }, 'registering an incompatible schema: 409');
  assert.equal(out['v2_id'], 4);
  assert.equal(out['lookup_v2'], 2);
  assert.deepEqual(out['versions'], [1, 2]);
  assert.equal(out['compat_level'], 'FULL');
  assert.deepEqual(out['missing_version'], { http: 404, code: 40402 });
  assert.deepEqual(out['missing_subject'], { http: 404, code: 40401 });
  // The registry saw what the client registered: the Protobuf schema as the serializer sent it.
  const proto = broker.broker.services.schemaRegistry?.view.schemaById(3);
  assert.equal(proto?.schemaType, 'PROTOBUF');
});
