// The registry's REST API over raw HTTP, endpoint by endpoint, against Confluent Schema Registry's answers:
// bodies, status codes and `error_code`s, content types, oversized and malformed bodies, compatibility
// results per level, modes, soft and permanent deletes, and references in all three formats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBroker } from '../../helpers/broker.js';
import { registryClient, SR_CONTENT_TYPE, type Reply } from './registry-http.js';

const rec = (name: string, fields: unknown[]) => JSON.stringify({ type: 'record', name, fields });
const code = (r: Reply) => (r.body as { error_code?: number }).error_code;

function assertError(r: Reply, status: number, errorCode: number, what: string): void {
  assert.equal(r.status, status, `${what}: HTTP ${status} (got ${r.status} ${r.text})`);
  assert.equal(code(r), errorCode, `${what}: error_code ${errorCode}`);
  assert.equal(typeof (r.body as { message?: unknown }).message, 'string', `${what}: a message`);
  assert.deepEqual(Object.keys(r.body as object).sort(), ['error_code', 'message'], `${what}: exactly Confluent's error body`);
}

test('schema registry REST API', { timeout: 120_000 }, async (t) => {
  const broker = await startBroker(['--schema.registry.port=0', '--schema.registry.host=127.0.0.1']);
  t.after(() => broker.stop());
  const c = registryClient(`http://127.0.0.1:${broker.broker.schemaRegistryPort}`);

  await t.test('root, types, content type of replies', async () => {
    const root = await c.get('/');
    assert.equal(root.status, 200);
    assert.deepEqual(root.body, {});
    assert.equal(root.contentType, SR_CONTENT_TYPE);
    assert.deepEqual((await c.get('/schemas/types')).body, ['AVRO', 'JSON', 'PROTOBUF']);
    assert.deepEqual((await c.get('/contexts')).body, ['.']);
    assertError(await c.get('/nope'), 404, 404, 'unknown path');
    assertError(await c.del('/schemas/types'), 405, 405, 'wrong method');
  });

  const v1 = rec('User', [{ name: 'name', type: 'string' }]);
  const v2 = rec('User', [{ name: 'name', type: 'string' }, { name: 'age', type: 'int', default: 0 }]);

  await t.test('register, re-register, lookup, shared ids', async () => {
    const r1 = await c.post('/subjects/users-value/versions', { schema: v1 });
    assert.equal(r1.status, 200);
    assert.equal((r1.body as { id: number }).id, 1);
    assert.equal((await c.post('/subjects/users-value/versions', { schema: v1 })).text.includes('"id":1'), true, 'same schema again: same id');
    assert.equal(await c.register('users-value', JSON.stringify(JSON.parse(v1), null, 2)), 1, 'whitespace does not make a new schema');
    assert.equal(await c.register('users-value', { fields: [{ type: { type: 'string' }, name: 'name' }], name: 'User', type: 'record' }), 1, 'nor another key order or spelling');
    assert.deepEqual((await c.get('/subjects/users-value/versions')).body, [1], 'no new version either');
    assert.equal(await c.register('users-value', v2), 2);
    assert.equal(await c.register('copy-value', v2), 2, 'identical schema under another subject: the same global id');
    const look = await c.post('/subjects/users-value', { schema: v1 });
    assert.equal(look.status, 200);
    assert.deepEqual(look.body, { subject: 'users-value', version: 1, id: 1, schema: v1 });
    assertError(await c.post('/subjects/users-value', { schema: rec('User', [{ name: 'x', type: 'int' }]) }), 404, 40403, 'lookup of an unregistered schema');
    assertError(await c.post('/subjects/nobody', { schema: v1 }), 404, 40401, 'lookup under an unknown subject');
  });

  await t.test('subjects and versions', async () => {
    assert.deepEqual((await c.get('/subjects')).body, ['copy-value', 'users-value']);
    assert.deepEqual((await c.get('/subjects?subjectPrefix=us')).body, ['users-value']);
    assert.deepEqual((await c.get('/subjects/users-value/versions/1')).body, { subject: 'users-value', version: 1, id: 1, schema: v1 });
    for (const latest of ['latest', '-1']) assert.equal((await c.get(`/subjects/users-value/versions/${latest}`)).body && ((await c.get(`/subjects/users-value/versions/${latest}`)).body as { version: number }).version, 2);
    const raw = await c.get('/subjects/users-value/versions/1/schema');
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.body, JSON.parse(v1), '/schema answers the schema itself');
    assertError(await c.get('/subjects/users-value/versions/99'), 404, 40402, 'missing version');
    assertError(await c.get('/subjects/nobody/versions'), 404, 40401, 'unknown subject');
    assertError(await c.get('/subjects/nobody/versions/1'), 404, 40401, 'version of an unknown subject');
    for (const bad of ['abc', '0', '-2', '2147483648']) assertError(await c.get(`/subjects/users-value/versions/${bad}`), 422, 42202, `invalid version '${bad}'`);
  });

  await t.test('schemas by id', async () => {
    assert.deepEqual((await c.get('/schemas/ids/2')).body, { schema: v2 });
    assert.deepEqual((await c.get('/schemas/ids/2?fetchMaxId=true')).body, { schema: v2, maxId: 2 });
    assert.deepEqual((await c.get('/schemas/ids/2/schema')).body, JSON.parse(v2));
    assert.deepEqual((await c.get('/schemas/ids/2/subjects')).body, ['copy-value', 'users-value']);
    assert.deepEqual((await c.get('/schemas/ids/2/versions')).body, [{ subject: 'copy-value', version: 1 }, { subject: 'users-value', version: 2 }]);
    for (const path of ['/schemas/ids/999', '/schemas/ids/999/schema', '/schemas/ids/999/subjects', '/schemas/ids/999/versions', '/schemas/ids/x']) assertError(await c.get(path), 404, 40403, path);
    const all = (await c.get('/schemas')).body as { subject: string; version: number; id: number }[];
    assert.deepEqual(all.map((s) => [s.subject, s.version, s.id]), [['copy-value', 1, 2], ['users-value', 1, 1], ['users-value', 2, 2]]);
    assert.deepEqual(((await c.get('/schemas?latestOnly=true')).body as { id: number }[]).map((s) => s.id), [2, 2]);
  });

  await t.test('invalid schemas and bodies', async () => {
    const cases: [string, unknown][] = [
      ['not JSON Avro', { schema: '{"type":' }],
      ['unknown Avro type', { schema: '{"type":"record","name":"R","fields":[{"name":"a","type":"nosuch"}]}' }],
      ['bad Avro default', { schema: '{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}' }],
      ['empty schema', { schema: '' }],
      ['missing schema', { schemaType: 'AVRO' }],
      ['unknown schemaType', { schema: '"string"', schemaType: 'XML' }],
      ['JSON Schema that is not a schema', { schema: '{"type":"nosuchtype"}', schemaType: 'JSON' }],
      ['JSON Schema that is a number', { schema: '42', schemaType: 'JSON' }],
      ['bad .proto', { schema: 'syntax = "proto3"; message M { int32 a = ; }', schemaType: 'PROTOBUF' }],
      ['.proto with an unresolved type', { schema: 'syntax = "proto3"; message M { Missing a = 1; }', schemaType: 'PROTOBUF' }],
      ['missing reference', { schema: '{"type":"record","name":"R","fields":[{"name":"a","type":"Other"}]}', references: [{ name: 'Other', subject: 'nobody', version: 1 }] }],
    ];
    for (const [what, body] of cases) assertError(await c.post('/subjects/bad-value/versions', body), 422, 42201, what);
    assertError(await c.post('/subjects/bad-value/versions', '{"schema": '), 400, 400, 'malformed JSON body');
    assert.equal((await c.get('/subjects/bad-value/versions')).status, 404, 'nothing was registered');
  });

  await t.test('content types and body size', async () => {
    for (const type of ['application/vnd.schemaregistry.v1+json', 'application/vnd.schemaregistry+json', 'application/json', 'application/json; charset=utf-8']) {
      const r = await c.post('/subjects/users-value', { schema: v1 }, { 'Content-Type': type });
      assert.equal(r.status, 200, `${type} is accepted`);
    }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      assertError(await c.post('/subjects/users-value', { schema: v1 }, { 'Content-Type': type }), 415, 415, `${type} is refused`);
    }
    const huge = JSON.stringify({ schema: JSON.stringify({ type: 'record', name: 'Big', doc: 'x'.repeat(17 * 1024 * 1024), fields: [] }) });
    assertError(await c.post('/subjects/big-value/versions', huge), 413, 413, 'a body over 16 MiB');
    assert.equal((await c.get('/subjects/big-value/versions')).status, 404);
    assert.equal((await c.get('/schemas/types')).status, 200, 'the registry still answers after refusing a large body');
  });

  await t.test('compatibility per level', async () => {
    // Registered under NONE: v1 {a:int}, v2 {} (a removed).
    assert.equal((await c.put('/config/levels-value', { compatibility: 'NONE' })).status, 200);
    await c.register('levels-value', rec('L', [{ name: 'a', type: 'int' }]));
    await c.register('levels-value', rec('L', []));
    // P: a comes back as a string with a default. Fine against v2 both ways; against v1 neither way.
    const p = rec('L', [{ name: 'a', type: 'string', default: 's' }]);
    // Q: adds b with no default. New readers cannot read v2 data; old readers can read Q data, but v1 readers need a.
    const q = rec('L', [{ name: 'b', type: 'int' }]);
    const expected: Record<string, [boolean, boolean]> = {
      NONE: [true, true],
      BACKWARD: [true, false],
      BACKWARD_TRANSITIVE: [false, false],
      FORWARD: [true, true],
      FORWARD_TRANSITIVE: [false, false],
      FULL: [true, false],
      FULL_TRANSITIVE: [false, false],
    };
    for (const [level, [pOk, qOk]] of Object.entries(expected)) {
      assert.deepEqual((await c.put('/config/levels-value', { compatibility: level })).body, { compatibility: level });
      for (const [name, schema, ok] of [['P', p, pOk], ['Q', q, qOk]] as const) {
        const all = await c.post('/compatibility/subjects/levels-value/versions', { schema });
        assert.deepEqual(all.body, { is_compatible: ok }, `${level}: ${name} against the versions the level names`);
      }
    }
    await c.put('/config/levels-value', { compatibility: 'BACKWARD' });
    assert.deepEqual((await c.post('/compatibility/subjects/levels-value/versions/latest', { schema: p })).body, { is_compatible: true });
    assert.deepEqual((await c.post('/compatibility/subjects/levels-value/versions/1', { schema: p })).body, { is_compatible: false }, 'against version 1 only');
    const verbose = await c.post('/compatibility/subjects/levels-value/versions/latest?verbose=true', { schema: q });
    const body = verbose.body as { is_compatible: boolean; messages: string[] };
    assert.equal(body.is_compatible, false);
    assert.ok(body.messages.some((m) => m.includes("'b'") && m.includes('default')), `verbose names the field: ${JSON.stringify(body.messages)}`);
    const refused = await c.post('/subjects/levels-value/versions', { schema: q });
    assertError(refused, 409, 409, 'registering an incompatible schema');
    assert.deepEqual((await c.post('/compatibility/subjects/brand-new/versions/latest', { schema: q })).body, { is_compatible: true }, 'a subject with no versions accepts anything');
    assertError(await c.post('/compatibility/subjects/levels-value/versions/9', { schema: q }), 404, 40402, 'against a missing version');
  });

  await t.test('config', async () => {
    assert.deepEqual((await c.get('/config')).body, { compatibilityLevel: 'BACKWARD' }, 'BACKWARD by default');
    assertError(await c.put('/config', { compatibility: 'SIDEWAYS' }), 422, 42203, 'invalid level');
    assert.deepEqual((await c.put('/config', { compatibility: 'FORWARD' })).body, { compatibility: 'FORWARD' });
    assert.deepEqual((await c.get('/config')).body, { compatibilityLevel: 'FORWARD' });
    assertError(await c.get('/config/users-value'), 404, 40408, 'no subject-level config');
    assert.deepEqual((await c.get('/config/users-value?defaultToGlobal=true')).body, { compatibilityLevel: 'FORWARD' });
    await c.put('/config/users-value', { compatibility: 'FULL' });
    assert.deepEqual((await c.get('/config/users-value')).body, { compatibilityLevel: 'FULL' });
    assert.deepEqual((await c.del('/config/users-value')).body, { compatibilityLevel: 'FULL' }, 'DELETE answers the level removed');
    assertError(await c.get('/config/users-value'), 404, 40408, 'removed');
    assert.deepEqual((await c.del('/config')).body, { compatibilityLevel: 'FORWARD' });
    assert.deepEqual((await c.get('/config')).body, { compatibilityLevel: 'BACKWARD' }, 'back to the default');
  });

  await t.test('mode: READONLY, IMPORT with explicit ids', async () => {
    assert.deepEqual((await c.get('/mode')).body, { mode: 'READWRITE' });
    assertError(await c.put('/mode', { mode: 'SOMETIMES' }), 422, 42204, 'invalid mode');
    assertError(await c.get('/mode/users-value'), 404, 40409, 'no subject-level mode');
    assert.deepEqual((await c.put('/mode/users-value', { mode: 'READONLY' })).body, { mode: 'READONLY' });
    assertError(await c.post('/subjects/users-value/versions', { schema: rec('User', [{ name: 'name', type: 'string' }, { name: 'b', type: 'int', default: 1 }]) }), 422, 42205, 'register under READONLY');
    assertError(await c.del('/subjects/users-value/versions/1'), 422, 42205, 'delete under READONLY');
    assert.deepEqual((await c.del('/mode/users-value')).body, { mode: 'READONLY' });
    assertError(await c.put('/mode', { mode: 'IMPORT' }), 422, 42205, 'IMPORT on a registry with subjects needs force');
    assertError(await c.post('/subjects/imported-value/versions', { schema: '"string"', id: 100 }), 422, 42205, 'an explicit id outside IMPORT mode');
    assert.deepEqual((await c.put('/mode/imported-value', { mode: 'IMPORT' })).body, { mode: 'IMPORT' });
    const imp = await c.post('/subjects/imported-value/versions', { schema: '"string"', id: 100, version: 5 });
    assert.deepEqual(imp.body, { id: 100, version: 5, schema: '"string"' });
    assert.equal(((await c.get('/subjects/imported-value/versions/5')).body as { id: number }).id, 100);
    assertError(await c.post('/subjects/imported-value/versions', { schema: '"bytes"', id: 2, version: 6 }), 422, 42207, 'an id that holds another schema');
    await c.del('/mode/imported-value');
    assert.equal(await c.register('after-import-value', '"long"'), 101, 'ids continue after the largest imported id');
  });

  await t.test('soft and permanent deletes', async () => {
    await c.register('del-value', rec('D', [{ name: 'a', type: 'int' }]));
    await c.register('del-value', rec('D', [{ name: 'a', type: 'int' }, { name: 'b', type: 'int', default: 0 }]));
    await c.register('del-value', rec('D', [{ name: 'a', type: 'int' }, { name: 'b', type: 'int', default: 0 }, { name: 'c', type: 'int', default: 0 }]));
    assertError(await c.del('/subjects/del-value/versions/1?permanent=true'), 404, 40407, 'permanent before soft');
    assert.deepEqual((await c.del('/subjects/del-value/versions/1')).body, 1);
    assertError(await c.del('/subjects/del-value/versions/1'), 404, 40406, 'soft delete twice');
    assertError(await c.get('/subjects/del-value/versions/1'), 404, 40402, 'soft-deleted version is hidden');
    assert.equal(((await c.get('/subjects/del-value/versions/1?deleted=true')).body as { deleted?: boolean }).deleted, true);
    assert.deepEqual((await c.get('/subjects/del-value/versions')).body, [2, 3]);
    assert.deepEqual((await c.get('/subjects/del-value/versions?deleted=true')).body, [1, 2, 3]);
    const id1 = ((await c.get('/subjects/del-value/versions/1?deleted=true')).body as { id: number }).id;
    assert.equal((await c.get(`/schemas/ids/${id1}`)).status, 200, 'a soft-deleted schema still resolves by id');
    assert.deepEqual((await c.del('/subjects/del-value/versions/1?permanent=true')).body, 1);
    assertError(await c.get(`/schemas/ids/${id1}`), 404, 40403, 'a permanently deleted schema is gone');
    assertError(await c.del('/subjects/del-value?permanent=true'), 404, 40405, 'permanent subject delete before soft');
    assert.deepEqual((await c.del('/subjects/del-value')).body, [2, 3]);
    assertError(await c.del('/subjects/del-value'), 404, 40404, 'soft subject delete twice');
    assert.ok(!((await c.get('/subjects')).body as string[]).includes('del-value'));
    assert.ok(((await c.get('/subjects?deleted=true')).body as string[]).includes('del-value'));
    assert.deepEqual((await c.get('/subjects?deletedOnly=true')).body, ['del-value'], 'deletedOnly: only subjects deleted as a whole');
    assertError(await c.get('/subjects/del-value/versions'), 404, 40401, 'a soft-deleted subject is not found');
    assert.equal(await c.register('del-value', rec('D', [{ name: 'z', type: 'string' }])) > id1, true, 'a soft-deleted subject takes new versions');
    assert.deepEqual((await c.get('/subjects/del-value/versions')).body, [4], 'versions continue after soft-deleted ones');
    assert.deepEqual((await c.del('/subjects/del-value')).body, [4]);
    assert.deepEqual((await c.del('/subjects/del-value?permanent=true')).body, [2, 3, 4]);
    assertError(await c.get('/subjects/del-value/versions?deleted=true'), 404, 40401, 'permanently deleted');
    assert.equal(await c.register('again-value', rec('D', [{ name: 'a', type: 'int' }])) > 101, true, 'the id of a permanently deleted schema is never given again');
  });

  await t.test('references: Avro, JSON Schema, Protobuf', async () => {
    const address = JSON.stringify({ type: 'record', name: 'Address', namespace: 'floe', fields: [{ name: 'city', type: 'string' }] });
    const addrId = await c.register('address', address);
    const person = JSON.stringify({ type: 'record', name: 'Person', namespace: 'floe', fields: [{ name: 'home', type: 'floe.Address' }] });
    const refs = [{ name: 'floe.Address', subject: 'address', version: 1 }];
    const personId = await c.register('person-value', person, undefined, refs);
    assert.notEqual(personId, addrId);
    const got = (await c.get('/subjects/person-value/versions/1')).body as { references: unknown };
    assert.deepEqual(got.references, refs);
    // Stored as Avro writes it: the reference in the record's own namespace by its short name.
    assert.deepEqual((await c.get(`/schemas/ids/${personId}`)).body, { references: refs, schema: person.replace('"floe.Address"', '"Address"') });
    assert.deepEqual((await c.get('/subjects/address/versions/1/referencedby')).body, [personId]);
    assertError(await c.del('/subjects/address/versions/1'), 422, 42206, 'deleting a referenced version');
    assertError(await c.post('/subjects/person2-value/versions', { schema: person }), 422, 42201, 'the same schema without its reference');
    const latestRef = await c.post('/subjects/person3-value/versions', { schema: person, references: [{ name: 'floe.Address', subject: 'address', version: -1 }] });
    assert.equal(latestRef.status, 200, 'version -1 names the latest');

    const jsonAddr = JSON.stringify({ $id: 'https://floe.example/address.json', type: 'object', properties: { city: { type: 'string' } } });
    await c.register('json-address', jsonAddr, 'JSON');
    const jsonPerson = JSON.stringify({ type: 'object', properties: { home: { $ref: 'https://floe.example/address.json' } } });
    assert.ok((await c.register('json-person', jsonPerson, 'JSON', [{ name: 'https://floe.example/address.json', subject: 'json-address', version: 1 }])) > 0);
    assertError(await c.post('/subjects/json-person2/versions', { schema: jsonPerson, schemaType: 'JSON' }), 422, 42201, 'an unresolved $ref');

    await c.register('proto-common', 'syntax = "proto3";\npackage floe.common;\nmessage Money { int64 cents = 1; string currency = 2; }\n', 'PROTOBUF');
    const order = 'syntax = "proto3";\npackage floe.orders;\nimport "floe/common.proto";\nimport "google/protobuf/timestamp.proto";\nmessage Order { floe.common.Money total = 1; google.protobuf.Timestamp at = 2; }\n';
    assert.ok((await c.register('proto-order', order, 'PROTOBUF', [{ name: 'floe/common.proto', subject: 'proto-common', version: 1 }])) > 0, 'an import by reference plus a well-known type');
    assertError(await c.post('/subjects/proto-order2/versions', { schema: order, schemaType: 'PROTOBUF' }), 422, 42201, 'an import without its reference');
  });

  await t.test('the in-process view answers what HTTP answers, and tells listeners after each durable change', async () => {
    const view = broker.broker.services.schemaRegistry?.view;
    assert.ok(view);
    const seen: (number | undefined)[] = [];
    const off = view.onChange(() => seen.push(view.latestVersion('watched-value')?.id));
    const id = await c.register('watched-value', '"double"');
    assert.deepEqual(seen, [id], 'the listener ran once, after the change was applied');
    await c.register('watched-value', '"double"');
    assert.equal(seen.length, 1, 'registering the same schema again changes nothing and tells nobody');
    off();
    assert.deepEqual(view.versionsOfId(id).map((v) => v.subject), ['watched-value']);
    assert.equal(view.schemaById(2)?.schema, v2);
    assert.equal(view.latestVersion('users-value')?.version, 2);
    assert.equal(view.subjectVersion('users-value', 1)?.id, 1);
    assert.equal(view.subjectVersion('nobody', 1), undefined);
  });
});
