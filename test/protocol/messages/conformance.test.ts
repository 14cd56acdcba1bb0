/**
 * Cross-checks every declared message against Apache Kafka's own JSON message definitions, which CI lays
 * out beside the repository at `../shared/kafka-protocol/messages/`. For every message of every API in
 * `API_SPECS` and every version we declare, the fields present in that version must match the reference:
 * same names (camelCase), same order, same wire types, nullability, tagged status and tag, default and
 * ignorable flag; the message's flexibility must match; and the declared versions must be valid in Kafka.
 *
 * The comparison returns a list of problems rather than asserting, so the last tests can prove it catches
 * a missing field, a wrong type, a wrong tag, and so on, by mutating real declarations.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { API_SPECS } from '../../../protocol/messages/index.js';
import { API_SPECS_A } from '../../../protocol/messages/registry-a.js';
import type { FieldSpec, FieldType, MessageSpec, PrimitiveType } from '../../../protocol/schema/types.js';

// Tests run from the repository root (npm test, or npx tsx --test), so resolve from the working directory.
const REFERENCE_DIR = resolve(process.cwd(), '..', 'shared', 'kafka-protocol', 'messages');

// ---------------------------------------------------------------------------------------------------
// Version ranges, parsed independently of the codec engine's parser.

interface Range {
  readonly min: number;
  readonly max: number;
}

const NO_VERSIONS: Range = { min: 1, max: 0 };

function parseRange(text: string): Range {
  const s = text.trim();
  if (s === 'none') return NO_VERSIONS;
  let m = /^(\d+)\+$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number.MAX_SAFE_INTEGER };
  m = /^(\d+)-(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[2]) };
  m = /^(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[1]) };
  throw new Error(`bad version range '${text}': use 'none', 'N', 'N-M' or 'N+'`);
}

function inRange(version: number, range: string | undefined): boolean {
  if (range === undefined) return false;
  const r = parseRange(range);
  return version >= r.min && version <= r.max;
}

// ---------------------------------------------------------------------------------------------------
// The reference JSON.

interface RefField {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly default?: string | number | boolean;
  readonly ignorable?: boolean;
  readonly fields?: readonly RefField[];
}

interface RefStruct {
  readonly name: string;
  readonly fields: readonly RefField[];
}

interface RefMessage {
  readonly apiKey: number;
  readonly type: string;
  readonly name: string;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly fields: readonly RefField[];
  readonly commonStructs?: readonly RefStruct[];
}

/** Removes `//` comments (outside string literals) so the reference files parse as JSON. */
function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

const referenceCache = new Map<string, RefMessage>();

function loadReference(fileName: string): RefMessage {
  const cached = referenceCache.get(fileName);
  if (cached) return cached;
  const path = join(REFERENCE_DIR, `${fileName}.json`);
  if (!existsSync(path)) {
    throw new Error(`reference ${path} is missing: the declared message name must match Kafka's, and the repository must sit beside shared/`);
  }
  const parsed: unknown = JSON.parse(stripJsonComments(readFileSync(path, 'utf8')));
  if (typeof parsed !== 'object' || parsed === null || !('fields' in parsed) || !('validVersions' in parsed)) {
    throw new Error(`reference ${path} is not a message definition`);
  }
  const ref = parsed as RefMessage;
  referenceCache.set(fileName, ref);
  return ref;
}

/** Every named struct of a reference message: common structs and structs declared inline. */
function structTable(ref: RefMessage): Map<string, readonly RefField[]> {
  const table = new Map<string, readonly RefField[]>();
  for (const s of ref.commonStructs ?? []) table.set(s.name, s.fields);
  const visit = (fields: readonly RefField[]): void => {
    for (const f of fields) {
      if (f.fields) {
        table.set(f.type.replace(/^\[\]/, ''), f.fields);
        visit(f.fields);
      }
    }
  };
  visit(ref.fields);
  for (const s of ref.commonStructs ?? []) visit(s.fields);
  return table;
}

const PRIMITIVES: ReadonlySet<string> = new Set<PrimitiveType>([
  'bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'records', 'uuid',
]);

/** Kafka's `TopicData` becomes `topicData`. */
function camelCase(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

// ---------------------------------------------------------------------------------------------------
// Normalised views of a field, so both sides compare with one deepEqual-like check.

type Shape =
  | { readonly kind: 'primitive'; readonly type: string }
  | { readonly kind: 'array'; readonly items: Shape }
  | { readonly kind: 'struct'; readonly fields: readonly unknown[] };

function describeShape(shape: Shape): string {
  if (shape.kind === 'primitive') return shape.type;
  if (shape.kind === 'array') return `[]${describeShape(shape.items)}`;
  return 'struct';
}

interface OurShape {
  readonly shape: Shape;
  readonly fields?: readonly FieldSpec[];
}

function ourShape(type: FieldType): OurShape {
  if (typeof type === 'string') return { shape: { kind: 'primitive', type } };
  if (type.kind === 'struct') return { shape: { kind: 'struct', fields: type.fields }, fields: type.fields };
  const items = ourShape(type.items);
  return { shape: { kind: 'array', items: items.shape }, ...(items.fields ? { fields: items.fields } : {}) };
}

interface RefShape {
  readonly shape: Shape;
  readonly fields?: readonly RefField[];
}

function refShape(type: string, inline: readonly RefField[] | undefined, structs: Map<string, readonly RefField[]>): RefShape {
  if (type.startsWith('[]')) {
    const items = refShape(type.slice(2), inline, structs);
    return { shape: { kind: 'array', items: items.shape }, ...(items.fields ? { fields: items.fields } : {}) };
  }
  if (PRIMITIVES.has(type)) return { shape: { kind: 'primitive', type } };
  const fields = inline ?? structs.get(type);
  if (!fields) throw new Error(`reference struct type '${type}' is not defined in its message or commonStructs`);
  return { shape: { kind: 'struct', fields }, fields };
}

/** A default as a comparable token: numbers, bigints, booleans, strings, null, or 'empty' for arrays/structs. */
function ourDefault(f: FieldSpec, shape: Shape): unknown {
  if (shape.kind !== 'primitive') {
    if (f.default === null) return null;
    if (f.default === undefined) return 'empty';
    if (Array.isArray(f.default) && f.default.length === 0) return 'empty';
    return f.default;
  }
  if (f.default !== undefined) return f.default;
  return zeroValue(shape.type);
}

function zeroValue(type: string): unknown {
  switch (type) {
    case 'bool':
      return false;
    case 'int64':
      return 0n;
    case 'string':
      return '';
    case 'bytes':
    case 'records':
    case 'uuid':
      return 'empty';
    default:
      return 0;
  }
}

function refDefault(f: RefField, shape: Shape): unknown {
  if (f.default === undefined) return shape.kind === 'primitive' ? zeroValue(shape.type) : 'empty';
  const text = String(f.default).trim();
  if (text === 'null') return null;
  if (shape.kind !== 'primitive') return text;
  switch (shape.type) {
    case 'bool':
      return text === 'true';
    case 'int64':
      return BigInt(text);
    case 'string':
      return text;
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
    case 'float64':
      return Number(text);
    default:
      return text;
  }
}

// ---------------------------------------------------------------------------------------------------
// The comparison.

function compareFields(
  ours: readonly FieldSpec[],
  theirs: readonly RefField[],
  version: number,
  structs: Map<string, readonly RefField[]>,
  path: string,
  problems: string[],
): void {
  const ourPresent = ours.filter((f) => inRange(version, f.versions));
  const refPresent = theirs.filter((f) => inRange(version, f.versions));
  const ourNames = ourPresent.map((f) => f.name);
  const refNames = refPresent.map((f) => camelCase(f.name));
  if (ourNames.join(',') !== refNames.join(',')) {
    problems.push(`${path}: fields [${ourNames.join(', ')}] but Kafka has [${refNames.join(', ')}]`);
    return;
  }
  for (let i = 0; i < ourPresent.length; i++) {
    const o = ourPresent[i];
    const r = refPresent[i];
    if (!o || !r) continue;
    const where = `${path}.${o.name}`;
    const os = ourShape(o.type);
    const rs = refShape(r.type, r.fields, structs);
    const ot = describeShape(os.shape);
    const rt = describeShape(rs.shape);
    if (ot !== rt) {
      problems.push(`${where}: type ${ot} but Kafka has ${rt}`);
      continue;
    }
    const on = inRange(version, o.nullableVersions);
    const rn = inRange(version, r.nullableVersions);
    if (on !== rn) problems.push(`${where}: nullable=${on} but Kafka has nullable=${rn}`);
    const otag = inRange(version, o.taggedVersions);
    const rtag = inRange(version, r.taggedVersions);
    if (otag !== rtag) problems.push(`${where}: tagged=${otag} but Kafka has tagged=${rtag}`);
    else if (otag && o.tag !== r.tag) problems.push(`${where}: tag ${String(o.tag)} but Kafka has tag ${String(r.tag)}`);
    if (o.tag !== undefined && o.taggedVersions === undefined) problems.push(`${where}: has a tag but no taggedVersions`);
    if (Boolean(o.ignorable) !== Boolean(r.ignorable)) {
      problems.push(`${where}: ignorable=${Boolean(o.ignorable)} but Kafka has ignorable=${Boolean(r.ignorable)}`);
    }
    const od = ourDefault(o, os.shape);
    const rd = refDefault(r, rs.shape);
    if (!Object.is(od, rd)) {
      problems.push(`${where}: default ${formatValue(od)} but Kafka's is ${formatValue(rd)}`);
    }
    if (os.fields && rs.fields) compareFields(os.fields, rs.fields, version, structs, where, problems);
  }
}

function formatValue(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/** Everything that differs between one declared message and Kafka's definition of it. */
function compareMessage(spec: MessageSpec, ref: RefMessage): string[] {
  const problems: string[] = [];
  const label = `${spec.name}${spec.type === 'request' ? 'Request' : 'Response'}`;
  if (ref.apiKey !== spec.apiKey) problems.push(`${label}: apiKey ${spec.apiKey} but Kafka has ${ref.apiKey}`);
  if (ref.type !== spec.type) problems.push(`${label}: type ${spec.type} but Kafka has ${ref.type}`);
  const ours = parseRange(spec.validVersions);
  const theirs = parseRange(ref.validVersions);
  if (ours.min > ours.max) problems.push(`${label}: declares no versions`);
  if (ours.min < theirs.min || ours.max > theirs.max) {
    problems.push(`${label}: versions ${spec.validVersions} are outside Kafka's ${ref.validVersions}`);
  }
  const structs = structTable(ref);
  for (let v = ours.min; v <= Math.min(ours.max, theirs.max); v++) {
    const of = inRange(v, spec.flexibleVersions);
    const rf = inRange(v, ref.flexibleVersions);
    if (of !== rf) problems.push(`${label} v${v}: flexible=${of} but Kafka has flexible=${rf}`);
    compareFields(spec.fields, ref.fields, v, structs, `${label} v${v}`, problems);
  }
  return problems;
}

function referenceFor(spec: MessageSpec): RefMessage {
  return loadReference(`${spec.name}${spec.type === 'request' ? 'Request' : 'Response'}`);
}

// ---------------------------------------------------------------------------------------------------
// The declarations against the reference.

test('the reference message definitions are present', () => {
  assert.ok(
    existsSync(REFERENCE_DIR),
    `expected Kafka's message JSON at ${REFERENCE_DIR}; run the tests from the repository root, with shared/ beside it`,
  );
});

test('API_SPECS is keyed by each spec\'s own API key and names match the request/response pair', () => {
  assert.ok(API_SPECS.size > 0, 'no API is declared');
  for (const [key, spec] of API_SPECS) {
    assert.equal(spec.apiKey, key);
    assert.equal(spec.request.type, 'request');
    assert.equal(spec.response.type, 'response');
    assert.equal(spec.request.name, spec.name);
    assert.equal(spec.response.name, spec.name);
    assert.equal(spec.request.validVersions, spec.response.validVersions, `${spec.name}: request and response versions differ`);
  }
});

for (const spec of API_SPECS.values()) {
  for (const msg of [spec.request, spec.response]) {
    test(`${msg.name}${msg.type === 'request' ? 'Request' : 'Response'} (key ${msg.apiKey}, v${msg.validVersions}) matches Kafka's definition`, () => {
      const problems = compareMessage(msg, referenceFor(msg));
      assert.deepEqual(problems, []);
    });
  }
}

test('registry A declares the produce/fetch/metadata/admin APIs over their full Kafka range', () => {
  // key -> the lowest max version the broker needs; the declaration must span Kafka's whole range.
  const expected = new Map<number, string>([
    [0, 'Produce'], [1, 'Fetch'], [2, 'ListOffsets'], [3, 'Metadata'], [18, 'ApiVersions'],
    [19, 'CreateTopics'], [20, 'DeleteTopics'], [21, 'DeleteRecords'], [22, 'InitProducerId'],
    [23, 'OffsetForLeaderEpoch'], [32, 'DescribeConfigs'], [33, 'AlterConfigs'], [37, 'CreatePartitions'],
    [35, 'DescribeLogDirs'], [44, 'IncrementalAlterConfigs'], [60, 'DescribeCluster'], [75, 'DescribeTopicPartitions'],
  ]);
  const declared = new Map(API_SPECS_A.map((s) => [s.apiKey, s] as const));
  assert.equal(declared.size, API_SPECS_A.length, 'an API key is declared twice in registry A');
  assert.deepEqual([...declared.keys()].sort((a, b) => a - b), [...expected.keys()].sort((a, b) => a - b));
  for (const [key, name] of expected) {
    const spec = declared.get(key);
    assert.ok(spec, `${name} is missing`);
    assert.equal(spec.name, name);
    for (const msg of [spec.request, spec.response]) {
      assert.equal(msg.validVersions, referenceFor(msg).validVersions, `${name} ${msg.type} should declare Kafka's full range`);
      assert.equal(msg.flexibleVersions, referenceFor(msg).flexibleVersions);
    }
  }
});

// ---------------------------------------------------------------------------------------------------
// The comparison itself must catch mistakes: mutate real declarations and expect problems.

type FieldEdit = (f: FieldSpec) => FieldSpec | undefined;

/** Rebuilds a message with `edit` applied to the field at `path` (names, outermost first). */
function mutate(spec: MessageSpec, path: readonly string[], edit: FieldEdit): MessageSpec {
  const walk = (fields: readonly FieldSpec[], rest: readonly string[]): FieldSpec[] => {
    const [head, ...tail] = rest;
    let found = false;
    const out: FieldSpec[] = [];
    for (const f of fields) {
      if (f.name !== head) {
        out.push(f);
        continue;
      }
      found = true;
      if (tail.length === 0) {
        const edited = edit(f);
        if (edited) out.push(edited);
        continue;
      }
      out.push({ ...f, type: rewrap(f.type, (inner) => walk(inner, tail)) });
    }
    if (!found) throw new Error(`no field ${String(head)} to mutate`);
    return out;
  };
  return { ...spec, fields: walk(spec.fields, path) };
}

function rewrap(type: FieldType, fn: (fields: readonly FieldSpec[]) => FieldSpec[]): FieldType {
  if (typeof type === 'string') throw new Error('cannot descend into a primitive field');
  if (type.kind === 'struct') return { kind: 'struct', fields: fn(type.fields) };
  if (typeof type.items === 'string') throw new Error('cannot descend into an array of primitives');
  return { kind: 'array', items: { kind: 'struct', fields: fn(type.items.fields) } };
}

function declared(apiKey: number, type: 'request' | 'response'): MessageSpec {
  const spec = API_SPECS.get(apiKey);
  assert.ok(spec, `API ${apiKey} is not declared`);
  return type === 'request' ? spec.request : spec.response;
}

test('the comparison finds nothing wrong with an unmodified declaration (baseline for the mutations below)', () => {
  const produce = declared(0, 'response');
  assert.deepEqual(compareMessage(produce, referenceFor(produce)), []);
});

test('the comparison catches a missing field', () => {
  const spec = mutate(declared(0, 'request'), ['topicData', 'partitionData', 'records'], () => undefined);
  const problems = compareMessage(spec, referenceFor(spec));
  assert.ok(problems.some((p) => p.includes('partitionData') && p.includes('records')), problems.join('\n'));
});

test('the comparison catches a mistyped field', () => {
  const spec = mutate(declared(0, 'response'), ['responses', 'partitionResponses', 'baseOffset'], (f) => ({ ...f, type: 'int32' }));
  const problems = compareMessage(spec, referenceFor(spec));
  assert.ok(problems.some((p) => p.includes('baseOffset: type int32 but Kafka has int64')), problems.join('\n'));
});

test('the comparison catches records declared as bytes and an array declared as a scalar', () => {
  const asBytes = mutate(declared(1, 'response'), ['responses', 'partitions', 'records'], (f) => ({ ...f, type: 'bytes' }));
  assert.ok(compareMessage(asBytes, referenceFor(asBytes)).some((p) => p.includes('type bytes but Kafka has records')));
  const asScalar = mutate(declared(3, 'response'), ['topics', 'partitions', 'replicaNodes'], (f) => ({ ...f, type: 'int32' }));
  assert.ok(compareMessage(asScalar, referenceFor(asScalar)).some((p) => p.includes('type int32 but Kafka has []int32')));
});

test('the comparison catches fields out of order', () => {
  const base = declared(22, 'request');
  const [first, second, ...rest] = base.fields;
  assert.ok(first && second);
  const swapped: MessageSpec = { ...base, fields: [second, first, ...rest] };
  assert.ok(compareMessage(swapped, referenceFor(swapped)).some((p) => p.includes('but Kafka has [transactionalId, transactionTimeoutMs')));
});

test('the comparison catches a wrong version range on a field', () => {
  const spec = mutate(declared(3, 'request'), ['allowAutoTopicCreation'], (f) => ({ ...f, versions: '5+' }));
  const problems = compareMessage(spec, referenceFor(spec));
  assert.ok(problems.some((p) => p.startsWith('MetadataRequest v4: fields')), problems.join('\n'));
});

test('the comparison catches wrong nullability, including nullability that changes across versions', () => {
  const never = mutate(declared(3, 'request'), ['topics'], (f) => ({ ...f, nullableVersions: undefined }));
  assert.ok(compareMessage(never, referenceFor(never)).some((p) => p.startsWith('MetadataRequest v1.topics: nullable=false')));
  const always = mutate(declared(3, 'request'), ['topics'], (f) => ({ ...f, nullableVersions: '0+' }));
  const problems = compareMessage(always, referenceFor(always));
  assert.ok(problems.some((p) => p.startsWith('MetadataRequest v0.topics: nullable=true')), problems.join('\n'));
  assert.ok(!problems.some((p) => p.startsWith('MetadataRequest v1.')), 'v1+ is nullable in Kafka too');
});

test('the comparison catches a wrong tag, a field not tagged, and a field tagged in too many versions', () => {
  const wrongTag = mutate(declared(18, 'response'), ['finalizedFeatures'], (f) => ({ ...f, tag: 1 }));
  assert.ok(compareMessage(wrongTag, referenceFor(wrongTag)).some((p) => p.includes('finalizedFeatures: tag 1 but Kafka has tag 2')));
  const untagged = mutate(declared(1, 'request'), ['clusterId'], (f) => ({ ...f, taggedVersions: undefined, tag: undefined }));
  assert.ok(compareMessage(untagged, referenceFor(untagged)).some((p) => p.includes('clusterId: tagged=false but Kafka has tagged=true')));
  const early = mutate(declared(1, 'response'), ['nodeEndpoints'], (f) => ({ ...f, versions: '12+', taggedVersions: '12+' }));
  assert.ok(compareMessage(early, referenceFor(early)).some((p) => p.startsWith('FetchResponse v12: fields')));
});

test('the comparison catches wrong defaults, including an int64 default given as a number', () => {
  const wrong = mutate(declared(1, 'request'), ['maxBytes'], (f) => ({ ...f, default: 0 }));
  assert.ok(compareMessage(wrong, referenceFor(wrong)).some((p) => p.includes('maxBytes: default 0 but Kafka\'s is 2147483647')));
  const numberNotBigint = mutate(declared(22, 'response'), ['producerId'], (f) => ({ ...f, default: -1 }));
  assert.ok(compareMessage(numberNotBigint, referenceFor(numberNotBigint)).some((p) => p.includes('producerId: default -1 but Kafka\'s is -1n')));
  const notNull = mutate(declared(0, 'request'), ['transactionalId'], (f) => ({ ...f, default: undefined }));
  assert.ok(compareMessage(notNull, referenceFor(notNull)).some((p) => p.includes('transactionalId: default "" but Kafka\'s is null')));
});

test('the comparison catches a wrong ignorable flag, wrong flexible versions, and versions Kafka does not have', () => {
  const ignorable = mutate(declared(1, 'response'), ['sessionId'], (f) => ({ ...f, ignorable: true }));
  assert.ok(compareMessage(ignorable, referenceFor(ignorable)).some((p) => p.includes('sessionId: ignorable=true')));
  const base = declared(19, 'request');
  const flexible: MessageSpec = { ...base, flexibleVersions: '4+' };
  assert.ok(compareMessage(flexible, referenceFor(flexible)).some((p) => p === 'CreateTopicsRequest v4: flexible=true but Kafka has flexible=false'));
  const tooNew: MessageSpec = { ...base, validVersions: '0-99' };
  assert.ok(compareMessage(tooNew, referenceFor(tooNew)).some((p) => p.includes('outside Kafka')));
});

test('the comparison catches wrong fields inside a shared struct and a misnamed field', () => {
  const short = mutate(declared(0, 'response'), ['nodeEndpoints'], (f) => ({
    ...f,
    type: { kind: 'array', items: { kind: 'struct', fields: [{ name: 'nodeId', type: 'int32', versions: '0+' }] } },
  }));
  assert.ok(compareMessage(short, referenceFor(short)).some((p) => p.includes('ProduceResponse v10.nodeEndpoints: fields [nodeId]')));
  const renamed = mutate(declared(1, 'response'), ['responses', 'partitions', 'currentLeader', 'leaderEpoch'], (f) => ({ ...f, name: 'epoch' }));
  assert.ok(compareMessage(renamed, referenceFor(renamed)).some((p) => p.includes('currentLeader: fields [leaderId, epoch]')));
});

test('comments are stripped from the reference JSON without touching strings', () => {
  const text = '// licence\n{ "a": "x // not a comment", // trailing\n "b": "q\\"//" }';
  assert.deepEqual(JSON.parse(stripJsonComments(text)), { a: 'x // not a comment', b: 'q"//' });
});
