import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router, RouterError } from '../../broker/router.js';
import type { ApiHandler } from '../../broker/handlers/handler.js';
import { decodeResponse, encodeRequest } from '../../protocol/index.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { newConnectionSecurity } from '../../broker/security/session.js';
import type { ResponseFrame } from '../../broker/server/connection.js';

const conn = { id: 1, remoteAddress: 'test', security: newConnectionSecurity('PLAINTEXT', 'PLAINTEXT') };
const unframe = (b: ResponseFrame | undefined) => {
  assert.ok(b);
  return (Buffer.isBuffer(b) ? b : Buffer.concat(b)).subarray(4);
};

const heartbeat: ApiHandler = {
  apiKey: 12,
  minVersion: 0,
  maxVersion: 4,
  handle: (req) => ({ errorCode: req.groupId === 'g' ? ErrorCode.NONE : ErrorCode.GROUP_ID_NOT_FOUND }),
};

function router() {
  return new Router().register(heartbeat);
}

test('ApiVersions advertises exactly the registered handlers, at every ApiVersions version', async () => {
  const r = router();
  for (let v = 0; v <= 4; v++) {
    const frame = encodeRequest({ apiKey: 18, apiVersion: v, correlationId: 7 + v, clientId: 'c' }, { clientSoftwareName: 'x', clientSoftwareVersion: '1' });
    const res = decodeResponse(18, v, unframe(await r.handleFrame(frame.subarray(4), conn)));
    assert.equal(res.header.correlationId, 7 + v);
    assert.equal(res.body.errorCode, 0);
    assert.deepEqual(
      (res.body.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).map((k) => [k.apiKey, k.minVersion, k.maxVersion]),
      [
        [12, 0, 4],
        [18, 0, 4],
      ],
    );
  }
});

test('ApiVersions at a version we do not know is answered in v0 with UNSUPPORTED_VERSION', async () => {
  // A client from the future sends v9 with a body we cannot parse; only the header matters.
  const frame = Buffer.alloc(4 + 2 + 2 + 4 + 2 + 3);
  frame.writeInt16BE(18, 4);
  frame.writeInt16BE(9, 6);
  frame.writeInt32BE(99, 8);
  frame.writeInt16BE(-1, 12);
  frame.writeInt32BE(frame.length - 4, 0);
  const res = decodeResponse(18, 0, unframe(await router().handleFrame(frame.subarray(4), conn)));
  assert.equal(res.header.correlationId, 99);
  assert.equal(res.body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.ok((res.body.apiKeys as unknown[]).length >= 2);
});

test('requests are dispatched to their handler and answered with the same version', async () => {
  const frame = encodeRequest({ apiKey: 12, apiVersion: 4, correlationId: 5, clientId: null }, { groupId: 'g', generationId: 1, memberId: 'm' });
  const res = decodeResponse(12, 4, unframe(await router().handleFrame(frame.subarray(4), conn)));
  assert.equal(res.header.correlationId, 5);
  assert.equal(res.body.errorCode, 0);
});

test('an API without a handler, or a version outside the handler range, is refused (the connection closes)', () => {
  const r = new Router().register({ ...heartbeat, minVersion: 1, maxVersion: 2 });
  const fetchFrame = encodeRequest({ apiKey: 10, apiVersion: 0, correlationId: 1, clientId: null }, { key: 'g' });
  assert.throws(() => r.handleFrame(fetchFrame.subarray(4), conn), RouterError);
  const v4 = encodeRequest({ apiKey: 12, apiVersion: 4, correlationId: 1, clientId: null }, { groupId: 'g' });
  assert.throws(() => r.handleFrame(v4.subarray(4), conn), /unsupported version 4 of API 12/);
  assert.throws(() => r.register(heartbeat), /already registered/);
});

test('bytes after a request body are ignored, as Kafka ignores them, and counted per API', async () => {
  const r = router();
  const frame = encodeRequest({ apiKey: 12, apiVersion: 4, correlationId: 6, clientId: null }, { groupId: 'g', generationId: 1, memberId: 'm' });
  // librdkafka 2.12+ leaves three bytes after an all-topics Metadata v12 body; here any API and any bytes.
  const padded = Buffer.concat([frame.subarray(4), Buffer.from([0, 0, 0])]);
  const res = decodeResponse(12, 4, unframe(await r.handleFrame(padded, conn)));
  assert.equal(res.header.correlationId, 6);
  assert.equal(res.body.errorCode, 0);
  assert.deepEqual([...r.requestsWithTrailingBytes()], [[12, 1]]);
  await r.handleFrame(frame.subarray(4), conn);
  assert.deepEqual([...r.requestsWithTrailingBytes()], [[12, 1]], 'an exact body is not counted');
});
