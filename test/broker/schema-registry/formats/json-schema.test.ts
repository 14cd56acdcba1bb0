// JSON Schema compatibility: can documents valid under the writer schema be read under the reader schema?
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSON_SCHEMA_FORMAT } from '../../../../broker/schema-registry/formats/json-schema.js';
import { RegistryError } from '../../../../broker/schema-registry/errors.js';

const p = (s: unknown) => JSON_SCHEMA_FORMAT.parse(JSON.stringify(s), []);
const canRead = (reader: unknown, writer: unknown) => JSON_SCHEMA_FORMAT.readerIncompatibilities(p(reader), p(writer));
const obj = (properties: object, extra: object = {}) => ({ type: 'object', properties, ...extra });

test('types: widening is fine, narrowing and changes are not', () => {
  assert.deepEqual(canRead({ type: 'number' }, { type: 'integer' }), [], 'integer widens to number');
  assert.match(canRead({ type: 'integer' }, { type: 'number' }).join(), /changed/);
  assert.deepEqual(canRead({ type: ['string', 'null'] }, { type: 'string' }), []);
  assert.match(canRead({ type: 'string' }, { type: ['string', 'null'] }).join(), /narrowed/);
  assert.match(canRead({ type: 'string' }, { type: 'boolean' }).join(), /changed/);
});

test('open content model: removing a property is fine, adding one is not', () => {
  const w = obj({ a: { type: 'string' }, b: { type: 'integer' } });
  assert.deepEqual(canRead(obj({ a: { type: 'string' } }), w), [], 'removed from an open model');
  assert.match(canRead(obj({ a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'string' } }), w).join(), /added to an open content model/);
});

test('closed content model: adding an optional property is fine, removing one is not', () => {
  const closed = (props: object, extra: object = {}) => obj(props, { additionalProperties: false, ...extra });
  const w = closed({ a: { type: 'string' } });
  assert.deepEqual(canRead(closed({ a: { type: 'string' }, b: { type: 'integer' } }), w), [], 'optional property added to a closed model');
  assert.match(canRead(closed({ a: { type: 'string' }, b: { type: 'integer' } }, { required: ['b'] }), w).join(), /required property 'b' added/);
  assert.match(canRead(closed({}), closed({ a: { type: 'string' }, b: { type: 'string' } })).join(), /removed from a closed content model/);
  assert.match(canRead(closed({ a: { type: 'string' } }), obj({ a: { type: 'string' } })).join(), /additionalProperties removed/);
  assert.deepEqual(canRead(obj({ a: { type: 'string' } }), w), [], 'opening a closed model is fine');
  assert.deepEqual(canRead(closed({ a: { type: 'string' }, b: { type: 'integer', default: 0 } }, { required: ['b'] }), w), [], 'a required property with a default');
  assert.deepEqual(canRead(closed({ a: { type: 'string' } }), closed({ a: { type: 'string' }, gone: false })), [], 'a property the writer never allowed (false) may go');
});

test('bounds, enums, patterns, arrays, oneOf and local $refs', () => {
  assert.match(canRead({ type: 'string', maxLength: 5 }, { type: 'string', maxLength: 10 }).join(), /maxLength/);
  assert.deepEqual(canRead({ type: 'string', maxLength: 10 }, { type: 'string', maxLength: 5 }), []);
  assert.match(canRead({ type: 'integer', minimum: 5 }, { type: 'integer' }).join(), /minimum/);
  assert.match(canRead({ enum: ['a'] }, { enum: ['a', 'b'] }).join(), /enum values removed/);
  assert.deepEqual(canRead({ enum: ['a', 'b', 'c'] }, { enum: ['a', 'b'] }), []);
  assert.match(canRead({ type: 'string', pattern: '^x' }, { type: 'string' }).join(), /pattern added/);
  assert.match(canRead({ type: 'array', uniqueItems: true }, { type: 'array' }).join(), /uniqueItems added/);
  assert.match(canRead({ type: 'array', items: { type: 'integer' } }, { type: 'array', items: { type: 'number' } }).join(), /items/);
  assert.deepEqual(canRead({ oneOf: [{ type: 'string' }, { type: 'integer' }] }, { oneOf: [{ type: 'string' }] }), [], 'a branch added');
  assert.match(canRead({ oneOf: [{ type: 'string' }] }, { oneOf: [{ type: 'string' }, { type: 'integer' }] }).join(), /branch 1/);
  const withDef = (t: string) => ({ definitions: { v: { type: t } }, type: 'object', properties: { x: { $ref: '#/definitions/v' } } });
  assert.deepEqual(canRead(withDef('number'), withDef('integer')), []);
  assert.match(canRead(withDef('string'), withDef('integer')).join(), /properties\/x/);
});

test('invalid JSON Schemas are refused with 42201', () => {
  for (const bad of ['{"type": 12}', '[1]', '"x"', '{"properties": {"a": {"type": "nope"}}}', '{"$ref": "#/definitions/missing"}']) {
    assert.throws(() => JSON_SCHEMA_FORMAT.parse(bad, []), (e: unknown) => e instanceof RegistryError && e.errorCode === 42201, bad);
  }
  assert.equal(JSON_SCHEMA_FORMAT.parse('{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{}}', []).schemaType, 'JSON', 'draft 2020-12');
  assert.equal(JSON_SCHEMA_FORMAT.parse('{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}', []).schemaType, 'JSON', 'draft-04 is accepted');
});
