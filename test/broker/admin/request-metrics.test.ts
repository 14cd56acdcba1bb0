// The broker-wide request and traffic counters, exactly: one client on a raw socket sends known frames and
// the counters must move by exactly what it sent: the bytes of its frames, one request (and one latency
// observation) per frame, a request with trailing bytes counted as such, and a frame that does not decode
// counted as a failure of api "unknown" (the broker closes that connection).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { encodeRequest } from '../../../protocol/index.js';
import { startBroker } from '../../helpers/broker.js';
import { scrape, value, type Family } from './scrape.js';

/** Writes `frame` and waits for one whole response frame (size-prefixed), returning its length. */
async function roundTrip(sock: Socket, frame: Buffer): Promise<number> {
  sock.write(frame);
  let buf = Buffer.alloc(0);
  for (;;) {
    const [chunk] = (await once(sock, 'data')) as [Buffer];
    buf = Buffer.concat([buf, chunk]);
    if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) return buf.length;
  }
}

const counters = (f: readonly Family[]) => ({
  received: value(f, 'floe_network_received_bytes_total') ?? 0,
  sent: value(f, 'floe_network_sent_bytes_total') ?? 0,
  apiVersions: value(f, 'floe_requests_total', { api: 'ApiVersions' }) ?? 0,
  apiVersionsObserved: value(f, 'floe_request_duration_seconds_count', { api: 'ApiVersions' }) ?? 0,
  trailing: value(f, 'floe_requests_with_trailing_bytes_total', { api: 'ApiVersions' }) ?? 0,
  unknown: value(f, 'floe_request_failures_total', { api: 'unknown' }) ?? 0,
});

test('request, latency, trailing-bytes, failure and traffic counters move by exactly what a client sent', { timeout: 60_000 }, async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  const adminUrl = b.adminUrl;
  assert.ok(adminUrl);
  const before = counters(await scrape(adminUrl));
  assert.equal(before.received, 0, 'no client has sent anything yet');

  const sock = connect(b.port, '127.0.0.1');
  await once(sock, 'connect');
  t.after(() => sock.destroy());
  const plain = encodeRequest({ apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'metrics-test' }, { clientSoftwareName: 'metrics-test', clientSoftwareVersion: '1' });
  const answer1 = await roundTrip(sock, plain);
  // The same request with three bytes after its body (and the size prefix counting them).
  const body = encodeRequest({ apiKey: 18, apiVersion: 3, correlationId: 2, clientId: 'metrics-test' }, { clientSoftwareName: 'metrics-test', clientSoftwareVersion: '1' });
  const trailing = Buffer.concat([body, Buffer.from([1, 2, 3])]);
  trailing.writeInt32BE(body.length - 4 + 3, 0);
  const answer2 = await roundTrip(sock, trailing);

  const after = counters(await scrape(adminUrl));
  assert.equal(after.received - before.received, plain.length + trailing.length, 'bytes received = the frames sent');
  assert.equal(after.sent - before.sent, answer1 + answer2, 'bytes sent = the responses received');
  assert.equal(after.apiVersions - before.apiVersions, 2, 'two ApiVersions requests');
  assert.equal(after.apiVersionsObserved - before.apiVersionsObserved, 2, 'two latency observations');
  assert.equal(after.trailing - before.trailing, 1, 'one request carried trailing bytes');

  // A frame that does not decode: the broker closes the connection and counts a failure.
  const bad = connect(b.port, '127.0.0.1');
  await once(bad, 'connect');
  const closed = once(bad, 'close');
  bad.on('error', () => undefined);
  bad.write(Buffer.from([0, 0, 0, 2, 0xff, 0xff]));
  await closed;
  const final = counters(await scrape(adminUrl));
  assert.equal(final.unknown - after.unknown, 1, 'one undecodable frame');
  assert.equal(final.received - after.received, 6);
});
