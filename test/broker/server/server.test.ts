import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { KafkaServer } from '../../../broker/server/server.js';
import { FramePool, sizeClass as sizeClassOf } from '../../../broker/server/frame-pool.js';
import type { FrameHandler } from '../../../broker/server/connection.js';
import { createLogger } from '../../../broker/logger.js';

const log = createLogger('silent');

function frame(payload: Buffer): Buffer {
  const b = Buffer.alloc(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  payload.copy(b, 4);
  return b;
}

/** Echoes each frame back (size-prefixed) after a delay encoded in its first byte, in milliseconds. */
const delayedEcho: FrameHandler = async (f) => {
  await new Promise((r) => setTimeout(r, f[0] ?? 0));
  return frame(Buffer.from(f));
};

async function start(handler: FrameHandler, overrides: Partial<ConstructorParameters<typeof KafkaServer>[1]> = {}) {
  const server = new KafkaServer(
    handler,
    { host: '127.0.0.1', port: 0, maxFrameBytes: 1 << 20, maxInFlight: 100, maxUnsentBytes: 1 << 20, idleMs: 0, ...overrides },
    log,
  );
  const addr = await server.listen();
  return { server, port: addr.port };
}

function reader(sock: Socket) {
  let buf = Buffer.alloc(0);
  const frames: Buffer[] = [];
  const waiters: (() => void)[] = [];
  sock.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const n = buf.readInt32BE(0);
      frames.push(buf.subarray(4, 4 + n));
      buf = buf.subarray(4 + n);
    }
    for (const w of waiters.splice(0)) w();
  });
  return async (count: number) => {
    while (frames.length < count) await new Promise<void>((r) => waiters.push(r));
    return frames.slice(0, count);
  };
}

test('pipelined requests are answered in request order even when they finish out of order', async (t) => {
  const { server, port } = await start(delayedEcho);
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  const read = reader(sock);
  const delays = [40, 5, 30, 0, 10];
  sock.write(Buffer.concat(delays.map((d, i) => frame(Buffer.from([d, i])))));
  const got = await read(delays.length);
  assert.deepEqual(
    got.map((f) => f[1]),
    [0, 1, 2, 3, 4],
  );
});

test('requests without a response (acks=0) keep later responses in order', async (t) => {
  const handler: FrameHandler = (f) => (f[0] === 1 ? undefined : frame(Buffer.from(f)));
  const { server, port } = await start(handler);
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  const read = reader(sock);
  sock.write(Buffer.concat([frame(Buffer.from([0, 0])), frame(Buffer.from([1, 1])), frame(Buffer.from([0, 2]))]));
  const got = await read(2);
  assert.deepEqual(
    got.map((f) => f[1]),
    [0, 2],
  );
});

test('an oversized frame closes that connection; other clients keep being served', async (t) => {
  const { server, port } = await start(delayedEcho, { maxFrameBytes: 1024 });
  t.after(() => server.close(100));
  const bad = connect(port, '127.0.0.1');
  const header = Buffer.alloc(4);
  header.writeInt32BE(4096);
  bad.write(header);
  await once(bad, 'close');
  const good = connect(port, '127.0.0.1');
  t.after(() => good.destroy());
  const read = reader(good);
  good.write(frame(Buffer.from([0, 9])));
  assert.equal((await read(1))[0]?.[1], 9);
});

test('a handler error closes the connection', async (t) => {
  const { server, port } = await start(() => {
    throw new Error('cannot parse');
  });
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  sock.write(frame(Buffer.from([1])));
  await once(sock, 'close');
});

test('back-pressure: a client that never reads responses does not make the broker buffer without bound', async (t) => {
  const payload = Buffer.alloc(64 * 1024, 1);
  let handled = 0;
  const { server, port } = await start(
    (f) => {
      handled++;
      return frame(Buffer.concat([Buffer.from(f.subarray(0, 1)), payload]));
    },
    { maxUnsentBytes: 256 * 1024, maxInFlight: 8 },
  );
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  await once(sock, 'connect');
  sock.pause(); // never read
  const req = frame(Buffer.from([0]));
  for (let i = 0; i < 5000; i++) sock.write(req);
  await new Promise((r) => setTimeout(r, 300));
  // With 5000 requests of 64 KiB responses (~320 MiB) the broker must have stopped reading long before.
  assert.ok(handled < 5000, `handled ${handled} of 5000 while the client read nothing`);
  const resumed = handled;
  sock.resume();
  await new Promise((r) => setTimeout(r, 50));
  sock.on('data', () => {});
  while (handled < 5000) await new Promise((r) => setTimeout(r, 20));
  assert.ok(handled > resumed);
});

test('idle connections are closed', async (t) => {
  const { server, port } = await start(delayedEcho, { idleMs: 100 });
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  await once(sock, 'close');
});

test('graceful close finishes in-flight requests and flushes their responses', async (t) => {
  const { server, port } = await start(delayedEcho);
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  const read = reader(sock);
  await once(sock, 'connect');
  sock.write(frame(Buffer.from([150, 7])));
  await new Promise((r) => setTimeout(r, 30));
  const closing = server.close(5000);
  const got = await read(1);
  assert.equal(got[0]?.[1], 7);
  await closing;
  assert.equal(server.connectionCount, 0);
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest();

test('a plaintext connection reads large frames exactly, and leaves the server when its client does', async (t) => {
  // The handler hashes each frame after a delay, so a frame whose memory a later read reused would differ.
  const { server, port } = await start(async (f) => {
    await new Promise((r) => setTimeout(r, f[0] ?? 0));
    return frame(sha(f));
  }, { maxFrameBytes: 4 << 20 });
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  const read = reader(sock);
  await once(sock, 'connect');
  const payloads = [1 << 20, 10, 300_000, 70_000, 5, 2 << 20].map((n, i) => {
    const b = randomBytes(n);
    b[0] = (i * 7) % 20;
    return b;
  });
  const stream = Buffer.concat(payloads.map(frame));
  // Written in odd pieces, so frames and size prefixes straddle reads.
  for (let pos = 0; pos < stream.length; pos += 99_991) sock.write(stream.subarray(pos, pos + 99_991));
  const got = await read(payloads.length);
  got.forEach((h, i) => assert.ok(h.equals(sha(payloads[i] ?? Buffer.alloc(0))), `frame ${i}`));
  assert.equal(server.connectionCount, 1);
  sock.destroy();
  while (server.connectionCount > 0) await new Promise((r) => setTimeout(r, 10));
  // The server counts the connection as closed too, or close() would wait for it.
  await server.close(100);
});

test('recyclable frames go back to the pool once answered; other frames and failed requests do not', async (t) => {
  const pool = new FramePool(64 << 20);
  let handled = 0;
  const { server, port } = await start(
    async (f) => {
      await new Promise((r) => setTimeout(r, handled++ % 3));
      if (f[1] === 9) throw new Error('refused');
      return frame(sha(f));
    },
    { framePool: pool, recyclable: (f) => f[0] === 1, maxFrameBytes: 1 << 20 },
  );
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  const read = reader(sock);
  await once(sock, 'connect');
  // Pipelined, so several are in flight at once: each must keep its own memory until answered.
  const payloads = Array.from({ length: 40 }, (_, i) => {
    const b = randomBytes(200_000 + i);
    b[0] = i < 20 ? 0 : 1;
    b[1] = 0;
    return b;
  });
  sock.write(Buffer.concat(payloads.slice(0, 20).map(frame)));
  (await read(20)).forEach((h, i) => assert.ok(h.equals(sha(payloads[i] ?? Buffer.alloc(0))), `frame ${i}`));
  assert.equal(pool.idleBytes, 0, 'frames that are not recyclable are not given back');
  sock.write(Buffer.concat(payloads.slice(20).map(frame)));
  (await read(40)).slice(20).forEach((h, i) => assert.ok(h.equals(sha(payloads[20 + i] ?? Buffer.alloc(0))), `frame ${20 + i}`));
  assert.ok(pool.idleBytes > 0, 'answered recyclable frames are given back');
  const idle = pool.idleBytes;
  const failing = randomBytes(200_000);
  failing[0] = 1;
  failing[1] = 9;
  sock.write(frame(failing));
  await once(sock, 'close');
  assert.ok(pool.idleBytes < idle, 'a failed request does not give its frame back (its handler may still hold it)');
});

test('response parts lent from the response pool go back once written; other parts do not', async (t) => {
  const pool = new FramePool(64 << 20);
  const other = new FramePool(64 << 20);
  const { server, port } = await start(
    (f) => {
      // A response in three parts: a header, a part from the response pool, and one from another pool.
      const body = pool.lend(100_000).fill(f[0] ?? 0);
      const foreign = other.lend(50_000).fill(7);
      const header = Buffer.alloc(4);
      header.writeInt32BE(body.length + foreign.length);
      return [header, body, foreign];
    },
    { responsePool: pool },
  );
  t.after(() => server.close(100));
  const sock = connect(port, '127.0.0.1');
  t.after(() => sock.destroy());
  const read = reader(sock);
  await once(sock, 'connect');
  for (let i = 1; i <= 5; i++) sock.write(frame(Buffer.from([i])));
  const got = await read(5);
  got.forEach((f, i) => {
    assert.ok(f.subarray(0, 100_000).every((b) => b === i + 1), `response ${i}: its part from the pool, intact`);
    assert.ok(f.subarray(100_000).every((b) => b === 7));
  });
  // Every part was written before the client read it; the callbacks may run a moment later.
  for (let i = 0; i < 200 && pool.idleBytes < 5 * sizeClassOf(100_000); i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(pool.idleBytes, 5 * sizeClassOf(100_000), 'each written part was given back');
  assert.equal(other.idleBytes, 0, 'parts this pool did not lend are left alone');
});
