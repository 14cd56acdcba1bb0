// Avro schema resolution as the compatibility check applies it: each case is a (reader, writer) pair and
// whether the reader can read the writer's data, per the Avro specification's rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AVRO_FORMAT } from '../../../../broker/schema-registry/formats/avro.js';
import { RegistryError } from '../../../../broker/schema-registry/errors.js';

const parse = (s: unknown, refs: { name: string; schema: unknown }[] = []) =>
  AVRO_FORMAT.parse(JSON.stringify(s), refs.map((r) => ({ name: r.name, schemaType: 'AVRO' as const, schema: JSON.stringify(r.schema) })));
const canRead = (reader: unknown, writer: unknown) => AVRO_FORMAT.readerIncompatibilities(parse(reader), parse(writer));
const record = (fields: unknown[], name = 'R', extra: object = {}) => ({ type: 'record', name, fields, ...extra });

test('primitive promotions: int to long, float, double; long to float, double; float to double; string and bytes', () => {
  const ok: [string, string][] = [
    ['long', 'int'], ['float', 'int'], ['double', 'int'], ['float', 'long'], ['double', 'long'], ['double', 'float'], ['bytes', 'string'], ['string', 'bytes'], ['int', 'int'],
  ];
  for (const [reader, writer] of ok) assert.deepEqual(canRead(reader, writer), [], `${reader} reads ${writer}`);
  const bad: [string, string][] = [['int', 'long'], ['long', 'double'], ['float', 'double'], ['int', 'string'], ['boolean', 'int'], ['null', 'int']];
  for (const [reader, writer] of bad) assert.equal(canRead(reader, writer).length, 1, `${reader} cannot read ${writer}`);
});

test('records: added fields need defaults, removed fields are skipped, names and aliases match', () => {
  const v1 = record([{ name: 'a', type: 'int' }]);
  assert.deepEqual(canRead(record([{ name: 'a', type: 'int' }, { name: 'b', type: 'string', default: '' }]), v1), [], 'added with a default');
  assert.match(canRead(record([{ name: 'a', type: 'int' }, { name: 'b', type: 'string' }]), v1).join(), /'b' has no default/, 'added without a default');
  assert.deepEqual(canRead(record([]), v1), [], 'a removed field is skipped');
  assert.deepEqual(canRead(record([{ name: 'x', type: 'long', aliases: ['a'] }]), v1), [], 'a renamed field found by its alias, promoted');
  assert.match(canRead(record([{ name: 'a', type: 'int' }], 'Other'), v1).join(), /name Other does not match/);
  assert.deepEqual(canRead(record([{ name: 'a', type: 'int' }], 'Other', { aliases: ['R'] }), v1), [], 'a renamed record found by its alias');
  assert.deepEqual(canRead(record([{ name: 'a', type: 'int' }], 'ns.R'), v1), [], 'unqualified names match across namespaces, as Avro does');
});

test('nested records, arrays and maps are checked recursively', () => {
  const inner = (t: string) => record([{ name: 'in', type: record([{ name: 'v', type: t }], 'Inner') }]);
  assert.deepEqual(canRead(inner('long'), inner('int')), []);
  assert.match(canRead(inner('int'), inner('long')).join(), /\/fields\/in\/fields\/v/, 'the path names the nested field');
  assert.deepEqual(canRead({ type: 'array', items: 'long' }, { type: 'array', items: 'int' }), []);
  assert.equal(canRead({ type: 'array', items: 'int' }, { type: 'array', items: 'string' }).length, 1);
  assert.deepEqual(canRead({ type: 'map', values: 'double' }, { type: 'map', values: 'float' }), []);
  assert.equal(canRead({ type: 'map', values: 'int' }, { type: 'array', items: 'int' }).length, 1);
});

test('enums: writer symbols must be reader symbols unless the reader has a default', () => {
  const e = (symbols: string[], extra: object = {}) => ({ type: 'enum', name: 'Color', symbols, ...extra });
  assert.deepEqual(canRead(e(['RED', 'GREEN', 'BLUE']), e(['RED', 'GREEN'])), [], 'symbols added');
  assert.match(canRead(e(['RED']), e(['RED', 'GREEN'])).join(), /GREEN/, 'a symbol removed');
  assert.deepEqual(canRead(e(['RED', 'OTHER'], { default: 'OTHER' }), e(['RED', 'GREEN'])), [], 'a removed symbol falls back to the default');
  assert.equal(canRead({ type: 'enum', name: 'Shade', symbols: ['RED'] }, e(['RED'])).length, 1, 'names must match');
});

test('fixed: names and sizes match', () => {
  assert.deepEqual(canRead({ type: 'fixed', name: 'F', size: 4 }, { type: 'fixed', name: 'F', size: 4 }), []);
  assert.match(canRead({ type: 'fixed', name: 'F', size: 8 }, { type: 'fixed', name: 'F', size: 4 }).join(), /size 8/);
});

test('unions: every writer branch readable; a writer non-union needs a matching reader branch', () => {
  assert.deepEqual(canRead(['null', 'string'], 'string'), [], 'a value becomes nullable');
  assert.deepEqual(canRead(['null', 'long'], 'int'), [], 'a reader branch by promotion');
  assert.equal(canRead('string', ['null', 'string']).length, 1, 'null data cannot be read as a string');
  assert.deepEqual(canRead(['null', 'string', 'int'], ['null', 'string']), [], 'branches added');
  assert.equal(canRead(['null', 'string'], ['null', 'string', 'int']).length, 1, 'a writer branch removed');
  assert.deepEqual(canRead('long', ['int', 'long']), [], 'every writer branch promotes to the reader type');
  const withOpt = record([{ name: 'a', type: 'int' }, { name: 'o', type: ['null', 'string'], default: null }]);
  assert.deepEqual(canRead(withOpt, record([{ name: 'a', type: 'int' }])), [], 'an optional field added');
});

test('recursive types terminate', () => {
  const list = (t: string) => ({ type: 'record', name: 'Node', fields: [{ name: 'v', type: t }, { name: 'next', type: ['null', 'Node'], default: null }] });
  assert.deepEqual(canRead(list('long'), list('int')), []);
  assert.equal(canRead(list('int'), list('string')).length > 0, true);
});

test('logical types compare by their underlying type; references resolve named types', () => {
  assert.deepEqual(canRead({ type: 'long', logicalType: 'timestamp-millis' }, { type: 'int', logicalType: 'date' }), []);
  const addr = { type: 'record', name: 'Address', namespace: 'floe', fields: [{ name: 'city', type: 'string' }] };
  const p = parse({ type: 'record', name: 'Person', namespace: 'floe', fields: [{ name: 'home', type: 'floe.Address' }] }, [{ name: 'floe.Address', schema: addr }]);
  assert.deepEqual(AVRO_FORMAT.readerIncompatibilities(p, p), []);
  assert.throws(() => parse({ type: 'record', name: 'Person', fields: [{ name: 'home', type: 'floe.Address' }] }), (e: unknown) => e instanceof RegistryError && e.errorCode === 42201);
});

test('canonical text is Avro\'s own spelling, so key order, type shorthands and name forms do not change identity', () => {
  const c = (s: unknown) => AVRO_FORMAT.parse(JSON.stringify(s), []).canonical;
  const want = '{"type":"record","name":"R","namespace":"a.b","fields":[{"name":"x","type":"int","default":1},{"name":"n","type":{"type":"record","name":"N","fields":[]}},{"name":"m","type":"N"},{"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}}]}';
  const spellings = [
    { type: 'record', name: 'R', namespace: 'a.b', fields: [{ name: 'x', type: 'int', default: 1 }, { name: 'n', type: { type: 'record', name: 'N', fields: [] } }, { name: 'm', type: 'N' }, { name: 't', type: { type: 'long', logicalType: 'timestamp-millis' } }] },
    { fields: [{ default: 1, type: { type: 'int' }, name: 'x' }, { name: 'n', type: { fields: [], name: 'a.b.N', type: 'record' } }, { type: 'a.b.N', name: 'm' }, { name: 't', type: { logicalType: 'timestamp-millis', type: 'long' } }], name: 'a.b.R', type: 'record' },
    { namespace: 'a.b', type: 'record', name: 'R', fields: [{ name: 'x', type: 'int', default: 1, order: 'ascending' }, { name: 'n', type: { type: 'record', name: 'N', namespace: 'a.b', fields: [] } }, { name: 'm', type: 'a.b.N' }, { name: 't', type: { type: 'long', logicalType: 'timestamp-millis' } }] },
  ];
  for (const s of spellings) assert.equal(c(s), want, JSON.stringify(s));
  assert.equal(c({ type: 'enum', symbols: ['A'], name: 'E', doc: 'd' }), '{"type":"enum","name":"E","doc":"d","symbols":["A"]}');
  assert.equal(c({ type: 'fixed', size: 4, name: 'x.F' }), '{"type":"fixed","name":"F","namespace":"x","size":4}');
  assert.equal(c({ type: 'map', values: { type: 'string' } }), '{"type":"map","values":"string"}');
  assert.equal(c(['null', { type: 'int' }]), '["null","int"]');
  assert.notEqual(c({ type: 'record', name: 'R', fields: [{ name: 'a', type: 'int' }, { name: 'b', type: 'int' }] }), c({ type: 'record', name: 'R', fields: [{ name: 'b', type: 'int' }, { name: 'a', type: 'int' }] }), 'field order is part of the schema');
});

test('canonical text is compact JSON, so formatting does not change identity', () => {
  const a = AVRO_FORMAT.parse('{ "type" : "record", "name":"R",\n "fields": [ ] }', []);
  const b = AVRO_FORMAT.parse('{"type":"record","name":"R","fields":[]}', []);
  assert.equal(a.canonical, b.canonical);
  assert.equal(AVRO_FORMAT.parse('"string"', []).canonical, '"string"');
});
