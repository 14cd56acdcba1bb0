/**
 * Round trip of every declared API at every version, driven by the schemas: random bodies (seeded) are
 * encoded, decoded and compared with the expected body (absent fields at their defaults), and the decoded
 * body re-encodes to the same bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { API_SPECS } from '../../../protocol/messages/index.js';
import { Reader } from '../../../protocol/reader.js';
import { decodeMessage, encodeMessage, messageCodec } from '../../../protocol/schema/codec.js';
import type { MessageSpec } from '../../../protocol/schema/types.js';
import { listVersions } from '../../../protocol/schema/versions.js';
import { prng, randomBody } from '../helpers/random-values.js';

const ITERATIONS = 12;

function roundTrip(spec: MessageSpec, version: number, seed: number): void {
  const rand = prng(seed);
  for (let i = 0; i < ITERATIONS; i++) {
    const { input, expected } = randomBody(spec, version, rand);
    const bytes = encodeMessage(spec, version, input);
    const decoded = decodeMessage(spec, version, bytes);
    assert.deepStrictEqual(decoded, expected, `${spec.name} ${spec.type} v${version} iteration ${i}`);
    const again = encodeMessage(spec, version, decoded);
    assert.ok(again.equals(bytes), `${spec.name} ${spec.type} v${version} iteration ${i}: re-encoding changed the bytes`);
    // Reading with a Reader over a larger buffer leaves the position exactly after the body.
    const padded = Buffer.concat([Buffer.from([9, 9]), bytes, Buffer.from([7])]);
    const r = new Reader(padded, 2);
    messageCodec(spec, version).decode(r);
    assert.equal(r.pos, 2 + bytes.length);
  }
}

test('API_SPECS declares APIs for the round trip to cover', () => {
  assert.ok(API_SPECS.size > 0, 'no APIs registered in protocol/messages');
});

for (const [apiKey, api] of API_SPECS) {
  test(`round trip ${api.name} (${apiKey}) request and response at every version`, () => {
    assert.equal(api.request.apiKey, apiKey);
    assert.equal(api.response.apiKey, apiKey);
    for (const spec of [api.request, api.response]) {
      for (const version of listVersions(spec.validVersions)) {
        roundTrip(spec, version, apiKey * 1000 + version * 2 + (spec.type === 'request' ? 0 : 1));
      }
    }
  });
}
