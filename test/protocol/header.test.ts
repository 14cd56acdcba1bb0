import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  readRequestHeader,
  readResponseHeader,
  requestHeaderVersion,
  responseHeaderVersion,
  writeRequestHeader,
  writeResponseHeader,
} from '../../protocol/header.js';
import { ProtocolError } from '../../protocol/protocol-error.js';
import { Reader } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';

test('header versions follow flexibility, except ApiVersions responses which are always v0', () => {
  assert.equal(requestHeaderVersion(false), 1);
  assert.equal(requestHeaderVersion(true), 2);
  assert.equal(responseHeaderVersion(0, false), 0);
  assert.equal(responseHeaderVersion(0, true), 1);
  assert.equal(responseHeaderVersion(18, true), 0);
  assert.equal(responseHeaderVersion(18, false), 0);
});

test('request header v1 layout', () => {
  const w = new Writer();
  writeRequestHeader(w, { apiKey: 3, apiVersion: 12, correlationId: 7, clientId: 'c' }, 1);
  assert.deepEqual([...w.toBuffer()], [0, 3, 0, 12, 0, 0, 0, 7, 0, 1, 0x63]);
});

test('request header v2 keeps a classic int16 clientId and adds a tagged-field section', () => {
  const w = new Writer();
  writeRequestHeader(w, { apiKey: 3, apiVersion: 12, correlationId: 7, clientId: null }, 2);
  const bytes = w.toBuffer();
  assert.deepEqual([...bytes], [0, 3, 0, 12, 0, 0, 0, 7, 0xff, 0xff, 0]);
  assert.deepEqual(readRequestHeader(new Reader(bytes), 2), { apiKey: 3, apiVersion: 12, correlationId: 7, clientId: null });
});

test('request header v2 skips unknown tagged fields', () => {
  const bytes = Buffer.from([0, 1, 0, 13, 0, 0, 0, 9, 0, 2, 0x61, 0x62, 1, 4, 2, 0xaa, 0xbb, 0x42]);
  const r = new Reader(bytes);
  assert.deepEqual(readRequestHeader(r, 2), { apiKey: 1, apiVersion: 13, correlationId: 9, clientId: 'ab' });
  assert.equal(r.int8(), 0x42);
});

test('response headers v0 and v1', () => {
  const w0 = new Writer();
  writeResponseHeader(w0, { correlationId: -2 }, 0);
  assert.deepEqual([...w0.toBuffer()], [0xff, 0xff, 0xff, 0xfe]);
  const w1 = new Writer();
  writeResponseHeader(w1, { correlationId: 5 }, 1);
  const b1 = w1.toBuffer();
  assert.deepEqual([...b1], [0, 0, 0, 5, 0]);
  assert.deepEqual(readResponseHeader(new Reader(b1), 1), { correlationId: 5 });
});

test('a short header is TRUNCATED', () => {
  assert.throws(() => readRequestHeader(new Reader(Buffer.from([0, 1, 0])), 1), (e: unknown) => e instanceof ProtocolError && e.code === 'TRUNCATED');
});
