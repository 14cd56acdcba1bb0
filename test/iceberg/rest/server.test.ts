/**
 * REST catalog contract: an independent client (npm iceberg-js) for config, namespaces and tables, and raw
 * HTTP for HEAD, error bodies and types, %1F namespaces, the prefix, bearer auth, 405/400/404 and the
 * `endpoints` list.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IcebergRestCatalog } from 'iceberg-js';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../../iceberg/rest/server.js';
import { Table } from '../../../iceberg/table.js';
import { parseJson, isJsonObject } from '../../../iceberg/json.js';
import type { Schema } from '../../../iceberg/schema.js';
import * as arrow from 'apache-arrow';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'payload', required: false, type: 'binary' },
  ],
};

const TABLE_CONFIG = { 's3.endpoint': 'http://127.0.0.1:9000', 's3.path-style-access': 'true', 's3.region': 'us-east-1' };

async function start(t: TestContext, extra: Partial<RestCatalogServerOptions> = {}): Promise<{ url: string; catalog: WarehouseCatalog; io: LocalFileIO }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-rest-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const io = new LocalFileIO({ root: dir, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: `file://${dir}/wh` });
  const server = new RestCatalogServer({ catalog, host: '127.0.0.1', port: 0, tableConfig: TABLE_CONFIG, ...extra });
  const { url } = await server.start();
  t.after(() => server.close());
  return { url, catalog, io };
}

async function call(url: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, text, json: text ? parseJson(text) : undefined, headers: res.headers };
}

function assertError(r: { status: number; json: unknown }, status: number, type: string): void {
  assert.equal(r.status, status);
  assert.ok(isJsonObject(r.json) && isJsonObject(r.json['error']), `error body for ${status}`);
  const e = (r.json as { error: { message: unknown; type: unknown; code: unknown } }).error;
  assert.equal(e.type, type);
  assert.equal(e.code, status);
  assert.equal(typeof e.message, 'string');
  assert.ok((e.message as string).length > 10);
}

test('iceberg-js drives namespaces and tables, including multi-level namespaces', async (t) => {
  const { url } = await start(t);
  const client = new IcebergRestCatalog({ baseUrl: url, auth: { type: 'none' } });
  await client.createNamespace({ namespace: ['kafka'] }, { properties: { owner: 'floe' } });
  await client.createNamespace({ namespace: ['prod'] });
  await client.createNamespace({ namespace: ['prod', 'eu'] });
  assert.deepEqual((await client.listNamespaces()).map((n) => n.namespace), [['kafka'], ['prod']]);
  assert.deepEqual((await client.listNamespaces({ namespace: ['prod'] })).map((n) => n.namespace), [['prod', 'eu']]);
  assert.deepEqual((await client.loadNamespaceMetadata({ namespace: ['kafka'] })).properties, { owner: 'floe' });
  assert.equal(await client.namespaceExists({ namespace: ['prod', 'eu'] }), true);
  assert.equal(await client.namespaceExists({ namespace: ['nope'] }), false);

  const created = await client.createTable(
    { namespace: ['prod', 'eu'] },
    {
      name: 'orders',
      schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', type: 'long', required: true }, { id: 2, name: 'ts', type: 'timestamptz', required: false }] },
      // iceberg-js types partition fields as source_id/field_id (not the spec's source-id), so partitioned
      // creates are tested with raw HTTP below.
      'partition-spec': { 'spec-id': 0, fields: [] },
      properties: { 'write.format.default': 'parquet' },
    },
  );
  assert.equal(created['format-version'], 2);
  assert.deepEqual(await client.listTables({ namespace: ['prod', 'eu'] }), [{ namespace: ['prod', 'eu'], name: 'orders' }]);
  const loaded = await client.loadTable({ namespace: ['prod', 'eu'], name: 'orders' });
  assert.equal(loaded['table-uuid'], created['table-uuid']);
  assert.deepEqual(loaded['partition-specs']?.[0]?.fields, []);
  assert.equal(loaded.schemas[0]?.fields[1]?.type, 'timestamptz');
  assert.equal(await client.tableExists({ namespace: ['prod', 'eu'], name: 'orders' }), true);
  assert.equal(await client.tableExists({ namespace: ['prod', 'eu'], name: 'missing' }), false);

  await assert.rejects(client.dropNamespace({ namespace: ['prod', 'eu'] }), /still holds tables|409/);
  await client.dropTable({ namespace: ['prod', 'eu'], name: 'orders' });
  assert.equal(await client.tableExists({ namespace: ['prod', 'eu'], name: 'orders' }), false);
  await client.dropNamespace({ namespace: ['prod', 'eu'] });
  assert.equal(await client.namespaceExists({ namespace: ['prod', 'eu'] }), false);
});

test('config lists every route served, and each listed route answers', async (t) => {
  const { url, catalog } = await start(t);
  const cfg = await call(url, 'GET', '/v1/config');
  assert.equal(cfg.status, 200);
  const body = cfg.json as { defaults: object; overrides: object; endpoints: string[] };
  assert.deepEqual(body.defaults, {});
  assert.deepEqual(body.overrides, {});
  assert.deepEqual(new Set(body.endpoints), new Set([
    'GET /v1/config',
    'GET /v1/{prefix}/namespaces',
    'POST /v1/{prefix}/namespaces',
    'GET /v1/{prefix}/namespaces/{namespace}',
    'HEAD /v1/{prefix}/namespaces/{namespace}',
    'DELETE /v1/{prefix}/namespaces/{namespace}',
    'GET /v1/{prefix}/namespaces/{namespace}/tables',
    'POST /v1/{prefix}/namespaces/{namespace}/tables',
    'POST /v1/{prefix}/namespaces/{namespace}/register',
    'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
    'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
    'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
    'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  ]));
  await catalog.createNamespace(['ns']);
  await catalog.createTable({ namespace: ['ns'], name: 't' }, { schema: SCHEMA });
  // Every listed route is routed (no 404 for the route, no 405): a missing namespace/table 404 carries its own type.
  for (const e of body.endpoints) {
    const [method, path] = e.split(' ') as [string, string];
    const concrete = path.replace('/{prefix}', '').replace('{namespace}', 'ns').replace('{table}', 'other');
    const reqBody = method === 'POST' ? '{}' : undefined;
    const r = await call(url, method, concrete, reqBody);
    assert.notEqual(r.status, 405, e);
    if (r.status === 404 && method !== 'HEAD') assert.notEqual((r.json as { error: { type: string } }).error.type, 'NoSuchEndpointException', e);
  }
});

test('load returns metadata-location, exact metadata and storage config; HEAD answers without a body', async (t) => {
  const { url, catalog, io } = await start(t);
  await catalog.createNamespace(['kafka']);
  const id = { namespace: ['kafka'], name: 'events' };
  await catalog.createTable(id, { schema: SCHEMA });
  const table = await Table.load(catalog, id, io);
  const file = await table.writeDataFile(new arrow.Table({ id: arrow.makeVector(BigInt64Array.of(1n, 2n)), payload: arrow.vectorFromArray([Buffer.from('x'), null], new arrow.Binary()) }));
  const snap = await table.commit(table.newAppend().addFile(file).set('floe.kafka.offsets', '{"0":1}'));

  const r = await call(url, 'GET', '/v1/namespaces/kafka/tables/events');
  assert.equal(r.status, 200);
  const body = r.json as { 'metadata-location': string; metadata: { 'current-snapshot-id': bigint | number; snapshots: { summary: Record<string, string> }[] }; config: Record<string, string> };
  assert.equal(body['metadata-location'], table.metadataLocation);
  assert.equal(BigInt(body.metadata['current-snapshot-id']), snap['snapshot-id'], 'the 64-bit snapshot id is exact on the wire');
  assert.equal(body.metadata.snapshots[0]?.summary['floe.kafka.offsets'], '{"0":1}');
  assert.deepEqual(body.config, TABLE_CONFIG);

  const head = await call(url, 'HEAD', '/v1/namespaces/kafka/tables/events');
  assert.equal(head.status, 204);
  assert.equal(head.text, '');
  const headMissing = await call(url, 'HEAD', '/v1/namespaces/kafka/tables/nope');
  assert.equal(headMissing.status, 404);
  assert.equal(headMissing.text, '');
  assert.equal((await call(url, 'HEAD', '/v1/namespaces/kafka')).status, 204);
  assert.equal((await call(url, 'HEAD', '/v1/namespaces/nope')).status, 404);
});

test('errors: 404 and 409 types, %1F namespaces, 400 on bad JSON, 405, unknown routes', async (t) => {
  const { url, catalog } = await start(t);
  await catalog.createNamespace(['a', 'b']);
  assertError(await call(url, 'GET', '/v1/namespaces/missing'), 404, 'NoSuchNamespaceException');
  assertError(await call(url, 'GET', '/v1/namespaces/missing/tables'), 404, 'NoSuchNamespaceException');
  assertError(await call(url, 'GET', '/v1/namespaces/a%1Fb/tables/missing'), 404, 'NoSuchTableException');
  assert.equal((await call(url, 'GET', '/v1/namespaces/a%1Fb')).status, 200);
  assert.deepEqual((await call(url, 'GET', '/v1/namespaces/a%1Fb')).json, { namespace: ['a', 'b'], properties: {} });
  assert.deepEqual((await call(url, 'GET', '/v1/namespaces?parent=a')).json, { namespaces: [['a', 'b']] });

  assertError(await call(url, 'POST', '/v1/namespaces', JSON.stringify({ namespace: ['a', 'b'] })), 409, 'AlreadyExistsException');
  const create = JSON.stringify({
    name: 't',
    schema: { type: 'struct', fields: [{ id: 1, name: 'x', type: 'int', required: false }, { id: 2, name: 'ts', type: 'timestamptz', required: false }] },
    'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' }] },
  });
  const made = await call(url, 'POST', '/v1/namespaces/a%1Fb/tables', create);
  assert.equal(made.status, 200);
  const spec = (made.json as { metadata: { 'partition-specs': { fields: { transform: string; 'source-id': number }[] }[] } }).metadata['partition-specs'][0];
  assert.deepEqual(spec?.fields.map((f) => [f.transform, f['source-id']]), [['day', 2]]);
  assertError(await call(url, 'POST', '/v1/namespaces/a%1Fb/tables', create), 409, 'AlreadyExistsException');
  assertError(await call(url, 'DELETE', '/v1/namespaces/a%1Fb'), 409, 'NamespaceNotEmptyException');

  // A stale requirement on a table outsiders may write: 409 CommitFailedException.
  const stale = JSON.stringify({ requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 7 }], updates: [{ action: 'set-properties', updates: { k: 'v' } }] });
  assertError(await call(url, 'POST', '/v1/namespaces/a%1Fb/tables/t', stale), 409, 'CommitFailedException');
  const ok = JSON.stringify({ requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }], updates: [{ action: 'set-properties', updates: { k: 'v' } }] });
  const committed = await call(url, 'POST', '/v1/namespaces/a%1Fb/tables/t', ok);
  assert.equal(committed.status, 200);
  assert.equal((committed.json as { metadata: { properties: Record<string, string> } }).metadata.properties['k'], 'v');

  assertError(await call(url, 'POST', '/v1/namespaces', '{"namespace": ['), 400, 'BadRequestException');
  assertError(await call(url, 'POST', '/v1/namespaces', '{"namespace": "flat"}'), 400, 'BadRequestException');
  assertError(await call(url, 'POST', '/v1/namespaces/a%1Fb/tables/t', '{"requirements": [], "updates": [{"action": "explode"}]}'), 400, 'BadRequestException');
  assertError(await call(url, 'POST', '/v1/namespaces/a%1Fb/tables', '{"name": "u"}'), 400, 'BadRequestException');

  const wrong = await call(url, 'PUT', '/v1/namespaces');
  assertError(wrong, 405, 'MethodNotAllowedException');
  assert.equal(wrong.headers.get('allow'), 'GET, POST');
  assertError(await call(url, 'POST', '/v1/config', '{}'), 405, 'MethodNotAllowedException');
  assertError(await call(url, 'GET', '/v1/nothing/here'), 404, 'NoSuchEndpointException');
  assertError(await call(url, 'GET', '/v2/config'), 404, 'NoSuchEndpointException');
});

test('tables Floe owns refuse outside commits and drops with 403, and the message says why', async (t) => {
  const { url, catalog } = await start(t);
  await catalog.createNamespace(['kafka']);
  await catalog.createTable({ namespace: ['kafka'], name: 'orders' }, { schema: SCHEMA, properties: { 'floe.owner': 'tiering' } });
  const body = JSON.stringify({ requirements: [], updates: [{ action: 'set-properties', updates: { x: 'y' } }] });
  const r = await call(url, 'POST', '/v1/namespaces/kafka/tables/orders', body);
  assertError(r, 403, 'ForbiddenException');
  assert.match((r.json as { error: { message: string } }).error.message, /read-only/);
  assertError(await call(url, 'DELETE', '/v1/namespaces/kafka/tables/orders'), 403, 'ForbiddenException');
  assert.equal((await catalog.loadTable({ namespace: ['kafka'], name: 'orders' })).metadata.properties['x'], undefined);
  // Outsiders cannot claim the reserved property either.
  const claim = JSON.stringify({ name: 'fake', schema: SCHEMA, properties: { 'floe.owner': 'me' } });
  assertError(await call(url, 'POST', '/v1/namespaces/kafka/tables', claim), 403, 'ForbiddenException');
});

test('a read-only table still takes commits of only the properties the owner lets outsiders set', async (t) => {
  const settable = (k: string): boolean => k.startsWith('history.expire.');
  const { url, catalog } = await start(t, { settableWhenReadOnly: settable });
  await catalog.createNamespace(['kafka']);
  const id = { namespace: ['kafka'], name: 'orders' };
  await catalog.createTable(id, { schema: SCHEMA, properties: { 'floe.owner': 'tiering', 'history.expire.min-snapshots-to-keep': '1' } });
  const commit = (updates: unknown[]) => call(url, 'POST', '/v1/namespaces/kafka/tables/orders', JSON.stringify({ requirements: [], updates }));
  assert.equal((await commit([{ action: 'set-properties', updates: { 'history.expire.max-snapshot-age-ms': '3600000' } }])).status, 200);
  assert.equal((await commit([{ action: 'remove-properties', removals: ['history.expire.min-snapshots-to-keep'] }])).status, 200);
  const props = (await catalog.loadTable(id)).metadata.properties;
  assert.equal(props['history.expire.max-snapshot-age-ms'], '3600000');
  assert.equal(props['history.expire.min-snapshots-to-keep'], undefined);
  // One other key, or any other kind of update, and the whole commit is refused.
  assertError(await commit([{ action: 'set-properties', updates: { 'history.expire.max-snapshot-age-ms': '1', other: 'x' } }]), 403, 'ForbiddenException');
  assertError(await commit([{ action: 'set-properties', updates: { 'floe.owner': 'me' } }]), 403, 'ForbiddenException');
  assertError(await commit([{ action: 'set-properties', updates: { 'history.expire.max-snapshot-age-ms': '1' } }, { action: 'remove-snapshots', 'snapshot-ids': [1] }]), 403, 'ForbiddenException');
  assertError(await commit([]), 403, 'ForbiddenException');
  const after = (await catalog.loadTable(id)).metadata.properties;
  assert.equal(after['history.expire.max-snapshot-age-ms'], '3600000');
  assert.equal(after['other'], undefined);
  assert.equal(after['floe.owner'], 'tiering');
});

test('prefix: announced in config overrides and required on catalog routes', async (t) => {
  const { url } = await start(t, { prefix: 'floe', warehouse: 'file:///wh' });
  const cfg = (await call(url, 'GET', '/v1/config')).json as { overrides: Record<string, string> };
  assert.deepEqual(cfg.overrides, { prefix: 'floe', warehouse: 'file:///wh' });
  const client = new IcebergRestCatalog({ baseUrl: url, catalogName: 'floe' });
  await client.createNamespace({ namespace: ['p'] });
  assert.deepEqual((await client.listNamespaces()).map((n) => n.namespace), [['p']]);
  assertError(await call(url, 'GET', '/v1/namespaces'), 404, 'NoSuchEndpointException');
  assert.equal((await call(url, 'GET', '/v1/floe/namespaces/p')).status, 200);
});

test('bearer auth: 401 with the error body without or with a wrong token', async (t) => {
  const { url } = await start(t, { token: 's3cret' });
  const none = await call(url, 'GET', '/v1/config');
  assertError(none, 401, 'NotAuthorizedException');
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  assertError(await call(url, 'GET', '/v1/namespaces', undefined, { authorization: 'Bearer nope' }), 401, 'NotAuthorizedException');
  assert.equal((await call(url, 'GET', '/v1/config', undefined, { authorization: 'Bearer s3cret' })).status, 200);
  const client = new IcebergRestCatalog({ baseUrl: url, auth: { type: 'bearer', token: 's3cret' } });
  await client.createNamespace({ namespace: ['secure'] });
  assert.equal(await client.namespaceExists({ namespace: ['secure'] }), true);
  const anonymous = new IcebergRestCatalog({ baseUrl: url });
  await assert.rejects(anonymous.listNamespaces(), /401|Authentication/);
});

test('REST commits of remove-snapshots expire a snapshot, and delete-after-commit prunes old metadata files', async (t) => {
  const { url, catalog, io } = await start(t);
  await catalog.createNamespace(['n']);
  const id = { namespace: ['n'], name: 't' };
  await catalog.createTable(id, { schema: SCHEMA, properties: { 'write.metadata.previous-versions-max': '1', 'write.metadata.delete-after-commit.enabled': 'true' } });
  const table = await Table.load(catalog, id, io);
  const batch = (ids: bigint[]): arrow.Table => new arrow.Table({ id: arrow.makeVector(BigInt64Array.from(ids)), payload: arrow.vectorFromArray(ids.map(() => null), new arrow.Binary()) });
  const s1 = await table.commit(table.newAppend().addFile(await table.writeDataFile(batch([1n]))));
  const afterS1 = table.metadataLocation;
  await table.commit(table.newAppend().addFile(await table.writeDataFile(batch([2n]))));
  const body = `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":${table.metadata['current-snapshot-id']}}],"updates":[{"action":"remove-snapshots","snapshot-ids":[${s1['snapshot-id']}]}]}`;
  const r = await call(url, 'POST', '/v1/namespaces/n/tables/t', body);
  assert.equal(r.status, 200, r.text);
  const { metadata, metadataLocation } = await catalog.loadTable(id);
  assert.deepEqual(metadata.snapshots.map((s) => s['snapshot-id']), [table.metadata['current-snapshot-id']]);
  // previous-versions-max=1: the log names only the file before this one, and older ones were deleted.
  assert.equal(metadata['metadata-log'].length, 1);
  assert.equal(await io.head(afterS1), undefined);
  assert.ok(await io.head(metadata['metadata-log'][0]?.['metadata-file'] ?? ''));
  assert.ok(await io.head(metadataLocation));
});

test('auth hooks: the OAuth2 token endpoint (form body or Basic), 401 with the challenge, lists hide and loads refuse what the hooks deny', async (t) => {
  const tokens = new Map<string, string>();
  const auth: NonNullable<RestCatalogServerOptions['auth']> = {
    challenge: 'Basic realm="test", Bearer realm="test"',
    authenticate: (header) => (header?.startsWith('Bearer ') ? tokens.get(header.slice(7)) : undefined),
    issueToken: (id, secret) => {
      if (secret !== `${id}-pw`) return undefined;
      const token = `tok-${id}-${tokens.size}`;
      tokens.set(token, `User:${id}`);
      return { token, expiresInS: 60 };
    },
    mayDescribe: (caller, id) => caller.principal === 'User:alice' || id.name !== 'hidden',
    mayLoad: (caller) => caller.principal === 'User:alice',
  };
  const { url, catalog } = await start(t, { auth });
  await catalog.createNamespace(['n']);
  await catalog.createTable({ namespace: ['n'], name: 'open' }, { schema: SCHEMA });
  await catalog.createTable({ namespace: ['n'], name: 'hidden' }, { schema: SCHEMA });
  const form = (body: string, headers: Record<string, string> = {}) => fetch(`${url}/v1/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

  const byBody = await form('grant_type=client_credentials&client_id=alice&client_secret=alice-pw&scope=catalog');
  assert.equal(byBody.status, 200);
  const alice = (await byBody.json()) as { access_token: string; token_type: string; expires_in: number; issued_token_type: string };
  assert.deepEqual({ ...alice, access_token: '' }, { access_token: '', token_type: 'bearer', expires_in: 60, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
  const byBasic = await form('grant_type=client_credentials', { authorization: `Basic ${Buffer.from('bob:bob-pw').toString('base64')}` });
  assert.equal(byBasic.status, 200);
  const bob = ((await byBasic.json()) as { access_token: string }).access_token;
  const wrong = await form('grant_type=client_credentials&client_id=bob&client_secret=nope');
  assert.equal(wrong.status, 401);
  assert.deepEqual(Object.keys((await wrong.json()) as object), ['error', 'error_description']);
  const grant = await form('grant_type=password&username=bob&password=bob-pw');
  assert.equal(grant.status, 400);
  assert.equal(((await grant.json()) as { error: string }).error, 'unsupported_grant_type');
  assert.equal((await fetch(`${url}/v1/oauth/tokens`)).status, 405);

  const none = await call(url, 'GET', '/v1/config');
  assertError(none, 401, 'NotAuthorizedException');
  assert.equal(none.headers.get('www-authenticate'), auth.challenge);
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const names = async (token: string) => ((await call(url, 'GET', '/v1/namespaces/n/tables', undefined, as(token))).json as { identifiers: { name: string }[] }).identifiers.map((i) => i.name).sort();
  assert.deepEqual(await names(alice.access_token), ['hidden', 'open']);
  assert.deepEqual(await names(bob), ['open']);
  assert.equal((await call(url, 'GET', '/v1/namespaces/n/tables/open', undefined, as(alice.access_token))).status, 200);
  assertError(await call(url, 'GET', '/v1/namespaces/n/tables/open', undefined, as(bob)), 403, 'ForbiddenException');
  assert.equal((await call(url, 'HEAD', '/v1/namespaces/n/tables/hidden', undefined, as(bob))).status, 403);
  assert.equal((await call(url, 'HEAD', '/v1/namespaces/n/tables/open', undefined, as(bob))).status, 204);
});
