/**
 * Seeded pseudo-random message bodies generated from the schemas themselves. For a message at a version it
 * returns the `input` to encode (absent and unset tagged fields sometimes omitted, absent ignorable fields
 * sometimes set to junk) and the `expected` decoded body (every field present, absent ones at default).
 */
import { defaultValue } from '../../../protocol/schema/defaults.js';
import type { FieldSpec, FieldType, MessageSpec, PrimitiveType } from '../../../protocol/schema/types.js';
import { inVersionRange } from '../../../protocol/schema/versions.js';

/** mulberry32: small, fast, good enough for test data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;

export function randInt(rand: Rand, min: number, max: number): number {
  return min + Math.floor(rand() * (max - min + 1));
}

export function randBytes(rand: Rand, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

const ALPHABET = ['a', 'Z', '0', '-', '_', '.', ' ', 'é', 'ß', '中', '𝄞'];

function randString(rand: Rand): string {
  const n = randInt(rand, 0, 12);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[randInt(rand, 0, ALPHABET.length - 1)];
  return s;
}

function pick<T>(rand: Rand, values: readonly T[]): T {
  return values[randInt(rand, 0, values.length - 1)] as T;
}

function randPrimitive(rand: Rand, type: PrimitiveType): unknown {
  switch (type) {
    case 'bool':
      return rand() < 0.5;
    case 'int8':
      return pick(rand, [-128, 127, 0, -1, randInt(rand, -128, 127)]);
    case 'int16':
      return pick(rand, [-32768, 32767, 0, -1, randInt(rand, -32768, 32767)]);
    case 'uint16':
      return pick(rand, [0, 65535, randInt(rand, 0, 65535)]);
    case 'int32':
      return pick(rand, [-2147483648, 2147483647, 0, -1, randInt(rand, -2147483648, 2147483647)]);
    case 'uint32':
      return pick(rand, [0, 4294967295, randInt(rand, 0, 4294967295)]);
    case 'int64':
      return pick(rand, [-(1n << 63n), (1n << 63n) - 1n, 0n, -1n, BigInt.asIntN(64, (BigInt(randInt(rand, 0, 0xffffffff)) << 32n) | BigInt(randInt(rand, 0, 0xffffffff)))]);
    case 'float64':
      return pick(rand, [0, -1.5, Math.PI, Number.MAX_VALUE, -Infinity, (rand() - 0.5) * 1e9]);
    case 'string':
      return randString(rand);
    case 'bytes':
      return randBytes(rand, randInt(rand, 0, 24));
    case 'records':
      return randBytes(rand, randInt(rand, 0, 64));
    case 'uuid':
      return randBytes(rand, 16);
  }
}

export interface Generated {
  readonly input: Record<string, unknown>;
  readonly expected: Record<string, unknown>;
}

/**
 * Values are generated once and shared by input and expected (arrays and structs included), except where
 * the input deliberately differs: omitted keys and junk in absent ignorable fields.
 */
interface Pair {
  input: unknown;
  expected: unknown;
}

function randTypePair(rand: Rand, type: FieldType, version: number, flexible: boolean, depth: number): Pair {
  if (typeof type === 'string') {
    const v = randPrimitive(rand, type);
    return { input: v, expected: v };
  }
  if (type.kind === 'array') {
    const n = depth > 4 ? 0 : randInt(rand, 0, 3);
    const input: unknown[] = [];
    const expected: unknown[] = [];
    for (let i = 0; i < n; i++) {
      const p = randTypePair(rand, type.items, version, flexible, depth + 1);
      input.push(p.input);
      expected.push(p.expected);
    }
    return { input, expected };
  }
  const g = randStruct(rand, type.fields, version, flexible, depth + 1);
  return { input: g.input, expected: g.expected };
}

function randStruct(rand: Rand, fields: readonly FieldSpec[], version: number, flexible: boolean, depth: number): Generated {
  const input: Record<string, unknown> = {};
  const expected: Record<string, unknown> = {};
  for (const f of fields) {
    const present = inVersionRange(f.versions, version);
    const tagged = present && flexible && inVersionRange(f.taggedVersions, version);
    if (!present) {
      expected[f.name] = defaultValue(f);
      const roll = rand();
      if (roll < 0.4) input[f.name] = defaultValue(f);
      else if (roll < 0.6 && f.ignorable === true) input[f.name] = randTypePair(rand, f.type, version, flexible, depth).input;
      continue;
    }
    if (tagged && rand() < 0.4) {
      // Unset tagged field: omitted or explicitly at its default; decodes to the default.
      expected[f.name] = defaultValue(f);
      if (rand() < 0.5) input[f.name] = defaultValue(f);
      continue;
    }
    if (inVersionRange(f.nullableVersions, version) && rand() < 0.2) {
      input[f.name] = null;
      expected[f.name] = null;
      continue;
    }
    const p = randTypePair(rand, f.type, version, flexible, depth);
    input[f.name] = p.input;
    expected[f.name] = p.expected;
  }
  return { input, expected };
}

/** A random body for `spec` at `version`, with the expected decoded form. */
export function randomBody(spec: MessageSpec, version: number, rand: Rand): Generated {
  return randStruct(rand, spec.fields, version, inVersionRange(spec.flexibleVersions, version), 0);
}
