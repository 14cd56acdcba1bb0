/**
 * Exact JSON for Iceberg metadata. `JSON.parse` turns a snapshot id like 8744736658442914487 into
 * 8744736658442914000; this parser keeps every integer literal outside the safe range (±2^53-1) as a
 * `bigint`, and the serializer writes bigints as bare integer literals, so 64-bit ids round-trip byte-exact.
 * Everything else follows RFC 8259 and `JSON.parse` semantics (strings are decoded by `JSON.parse` itself).
 */
import { IcebergError } from './types.js';

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** Parses JSON text, keeping integers beyond ±(2^53-1) as bigint. Throws IcebergError 'INVALID_JSON'. */
export function parseJson(text: string): JsonValue {
  let pos = 0;
  const fail = (what: string): never => {
    throw new IcebergError('INVALID_JSON', `Invalid JSON at offset ${pos}: ${what}`);
  };
  const skip = (): void => {
    while (pos < text.length && WS.has(text.charCodeAt(pos))) pos++;
  };
  const value = (depth: number): JsonValue => {
    if (depth > 512) fail('nesting deeper than 512 levels');
    skip();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const obj: JsonObject = {};
      skip();
      if (text[pos] === '}') {
        pos++;
        return obj;
      }
      for (;;) {
        skip();
        if (text[pos] !== '"') fail('expected a string key');
        const key = str();
        skip();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        const v = value(depth + 1);
        Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        skip();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      pos++;
      const arr: JsonValue[] = [];
      skip();
      if (text[pos] === ']') {
        pos++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        skip();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', pos)) {
      pos += 4;
      return true;
    }
    if (text.startsWith('false', pos)) {
      pos += 5;
      return false;
    }
    if (text.startsWith('null', pos)) {
      pos += 4;
      return null;
    }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) return fail(pos >= text.length ? 'unexpected end of input' : `unexpected character '${text[pos]}'`);
    pos += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const str = (): string => {
    STRING.lastIndex = pos;
    const m = STRING.exec(text);
    if (!m) return fail('invalid string literal');
    pos += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  const result = value(0);
  skip();
  if (pos !== text.length) fail('unexpected text after the JSON value');
  return result;
}

/**
 * Serializes like `JSON.stringify(value, null, indent)`, plus bigints as integer literals. Object keys keep
 * insertion order; `undefined` object members are omitted.
 */
export function stringifyJson(value: JsonValue, indent = 0): string {
  const pad = ' '.repeat(indent);
  const write = (v: JsonValue, prefix: string): string => {
    if (v === null) return 'null';
    switch (typeof v) {
      case 'boolean':
        return v ? 'true' : 'false';
      case 'number':
        if (!Number.isFinite(v)) throw new IcebergError('INVALID_JSON', `Cannot write ${v} as JSON: only finite numbers`);
        return JSON.stringify(v);
      case 'bigint':
        return v.toString();
      case 'string':
        return JSON.stringify(v);
    }
    const inner = prefix + pad;
    const sep = indent > 0 ? `,\n${inner}` : ',';
    const open = indent > 0 ? `\n${inner}` : '';
    const close = indent > 0 ? `\n${prefix}` : '';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${open}${v.map((x) => write(x, inner)).join(sep)}${close}]`;
    }
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      parts.push(`${JSON.stringify(k)}:${indent > 0 ? ' ' : ''}${write(x, inner)}`);
    }
    if (parts.length === 0) return '{}';
    return `{${open}${parts.join(sep)}${close}}`;
  };
  return write(value, '');
}

/** Whether a JSON value is a plain object (not an array or null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An integer JSON value (number or bigint) as a bigint, or undefined if it is not an integer. */
export function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return undefined;
}

/** A bigint as the smallest exact JSON value: a number when safe, else the bigint itself. */
export function fromBigInt(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}
