/** Schemas shared by the codec tests (JavaScript and Python serializers) and their expected mappings. */

export const POINT = { type: 'record', name: 'Point', fields: [{ name: 'x', type: 'int' }, { name: 'y', type: 'int' }] };

/** Every mapped construct once. */
export const READING = {
  type: 'record',
  name: 'Reading',
  namespace: 'floe.typed',
  doc: 'one reading',
  fields: [
    { name: 'id', type: 'long', doc: 'the id' },
    { name: 'score', type: 'float' },
    { name: 'ratio', type: 'double' },
    { name: 'ok', type: 'boolean' },
    { name: 'label', type: 'string' },
    { name: 'blob', type: 'bytes' },
    { name: 'hash', type: { type: 'fixed', name: 'Hash', size: 4 } },
    { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['A', 'B', 'C'] } },
    { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
    { name: 'fprice', type: { type: 'fixed', name: 'Price8', size: 8, logicalType: 'decimal', precision: 18, scale: 4 } },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'tmillis', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'tmicros', type: { type: 'long', logicalType: 'time-micros' } },
    { name: 'tsmillis', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'tsmicros', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'local', type: { type: 'long', logicalType: 'local-timestamp-micros' } },
    { name: 'uid', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'note', type: ['null', 'string'], default: null },
    { name: 'note2', type: ['string', 'null'] },
    { name: 'choice', type: ['null', 'int', 'string', POINT], default: null },
    { name: 'either', type: ['long', 'string'] },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'points', type: { type: 'array', items: 'Point' } },
    { name: 'attrs', type: { type: 'map', values: ['null', 'long'] } },
    { name: 'nested', type: { type: 'record', name: 'Inner', fields: [{ name: 'deep', type: { type: 'record', name: 'Deeper', fields: [{ name: 'v', type: 'double' }] } }] } },
  ],
};

const POINT_STRUCT = { type: 'struct', fields: [{ name: 'x', required: true, type: 'int' }, { name: 'y', required: true, type: 'int' }] };

export const READING_FIELDS = [
  { name: 'id', required: true, type: 'long', doc: 'the id' },
  { name: 'score', required: true, type: 'float' },
  { name: 'ratio', required: true, type: 'double' },
  { name: 'ok', required: true, type: 'boolean' },
  { name: 'label', required: true, type: 'string' },
  { name: 'blob', required: true, type: 'binary' },
  { name: 'hash', required: true, type: 'fixed[4]' },
  { name: 'kind', required: true, type: 'string' },
  { name: 'price', required: true, type: 'decimal(9,2)' },
  { name: 'fprice', required: true, type: 'decimal(18,4)' },
  { name: 'day', required: true, type: 'date' },
  { name: 'tmillis', required: true, type: 'time' },
  { name: 'tmicros', required: true, type: 'time' },
  { name: 'tsmillis', required: true, type: 'timestamptz' },
  { name: 'tsmicros', required: true, type: 'timestamptz' },
  { name: 'local', required: true, type: 'timestamp' },
  { name: 'uid', required: true, type: 'uuid' },
  { name: 'note', required: false, type: 'string' },
  { name: 'note2', required: false, type: 'string' },
  {
    name: 'choice',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { name: 'tag', required: true, type: 'int' },
        { name: 'field0', required: false, type: 'int' },
        { name: 'field1', required: false, type: 'string' },
        { name: 'field2', required: false, type: POINT_STRUCT },
      ],
    },
  },
  {
    name: 'either',
    required: true,
    type: { type: 'struct', fields: [{ name: 'tag', required: true, type: 'int' }, { name: 'field0', required: false, type: 'long' }, { name: 'field1', required: false, type: 'string' }] },
  },
  { name: 'tags', required: true, type: { type: 'list', element: 'string', elementRequired: true } },
  { name: 'points', required: true, type: { type: 'list', element: POINT_STRUCT, elementRequired: true } },
  { name: 'attrs', required: true, type: { type: 'map', key: 'string', value: 'long', valueRequired: false } },
  { name: 'nested', required: true, type: { type: 'struct', fields: [{ name: 'deep', required: true, type: { type: 'struct', fields: [{ name: 'v', required: true, type: 'double' }] } }] } },
];

export const EVENT = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Event',
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: ['string', 'null'] },
    score: { type: 'number' },
    ok: { type: 'boolean' },
    when: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'time' },
    uid: { type: 'string', format: 'uuid' },
    color: { type: 'string', enum: ['red', 'green'] },
    level: { enum: [1, 2, 3] },
    tags: { type: 'array', items: { type: 'string' } },
    attrs: { type: 'object', additionalProperties: { type: 'integer' } },
    home: { $ref: '#/definitions/Address' },
    pick: { oneOf: [{ type: 'string' }, { type: 'integer' }, { $ref: '#/definitions/Address' }] },
    maybe: { oneOf: [{ type: 'null' }, { type: 'number' }] },
    extra: {},
  },
  required: ['id', 'name'],
  definitions: { Address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'integer' } }, required: ['city'] } },
};

const ADDRESS = { type: 'struct', fields: [{ name: 'city', required: true, type: 'string' }, { name: 'zip', required: false, type: 'long' }] };

export const EVENT_FIELDS = [
  { name: 'id', required: true, type: 'long' },
  { name: 'name', required: false, type: 'string' },
  { name: 'score', required: false, type: 'double' },
  { name: 'ok', required: false, type: 'boolean' },
  { name: 'when', required: false, type: 'timestamptz' },
  { name: 'day', required: false, type: 'date' },
  { name: 'at', required: false, type: 'time' },
  { name: 'uid', required: false, type: 'uuid' },
  { name: 'color', required: false, type: 'string' },
  { name: 'level', required: false, type: 'long' },
  { name: 'tags', required: false, type: { type: 'list', element: 'string', elementRequired: true } },
  { name: 'attrs', required: false, type: { type: 'map', key: 'string', value: 'long', valueRequired: true } },
  { name: 'home', required: false, type: ADDRESS },
  { name: 'pick', required: false, type: { type: 'struct', fields: [{ name: 'option0', required: false, type: 'string' }, { name: 'option1', required: false, type: 'long' }, { name: 'option2', required: false, type: ADDRESS }] } },
  { name: 'maybe', required: false, type: 'double' },
  { name: 'extra', required: false, type: 'string' },
];
