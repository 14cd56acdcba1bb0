/**
 * An HTTP proxy for tests that sits in front of an S3-compatible server (s3rver) on 127.0.0.1, port 0, and
 * injects faults. Point the client's endpoint at `proxy.endpoint`; requests are forwarded unchanged (the Host
 * header is kept, so SigV4 signatures made for the proxy still verify upstream, which ignores the host).
 *
 * Faults, drawn per request from a seeded PRNG (mulberry32) so that a run is reproducible, and switchable at
 * run time with `proxy.set({...})`:
 *   - `errorRate`: answer 503 SlowDown (an S3 error document) without forwarding;
 *   - `latencyMs` (+ up to `jitterMs`): wait before forwarding;
 *   - `dropRate`: drop the connection, one of three ways chosen at random: before forwarding (mid-request,
 *     the request body half read), after the upstream answered but before any byte of the answer (the store
 *     applied a write the client never hears about), or mid-response (headers and part of the body sent).
 * `match` restricts faults to requests whose `METHOD /path?query` it matches. `stats()` counts what happened.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FaultSettings {
  /** Probability in [0, 1] of a 503 SlowDown answer. */
  readonly errorRate?: number;
  /** Probability in [0, 1] of a dropped connection. */
  readonly dropRate?: number;
  /** Added delay before forwarding, in ms. */
  readonly latencyMs?: number;
  /** Up to this much more delay, drawn uniformly, in ms. */
  readonly jitterMs?: number;
  /** Only requests whose `METHOD /path?query` matches get faults (default: all). */
  readonly match?: RegExp;
}

export interface FaultStats {
  requests: number;
  forwarded: number;
  errors: number;
  dropsMidRequest: number;
  dropsAfterUpstream: number;
  dropsMidResponse: number;
  delayed: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Replaces the fault settings (an empty object turns every fault off). */
  set(settings: FaultSettings): void;
  stats(): FaultStats;
  close(): Promise<void>;
}

/** mulberry32: a small seeded PRNG giving floats in [0, 1). */
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

const SLOW_DOWN = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate. (injected by fault-proxy)</Message></Error>';

export async function startFaultProxy(upstream: string, options: { seed?: number; settings?: FaultSettings } = {}): Promise<FaultProxy> {
  const target = new URL(upstream);
  const random = prng(options.seed ?? 1);
  let settings: FaultSettings = options.settings ?? {};
  const counts: FaultStats = { requests: 0, forwarded: 0, errors: 0, dropsMidRequest: 0, dropsAfterUpstream: 0, dropsMidResponse: 0, delayed: 0 };
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    counts.requests++;
    const s = settings;
    const faulty = s.match === undefined || s.match.test(`${req.method ?? 'GET'} ${req.url ?? '/'}`);
    // Draw every number each time, so the sequence of faults does not depend on which one was taken.
    const rError = random();
    const rDrop = random();
    const rHow = random();
    const rDelay = random();
    if (faulty && (s.latencyMs ?? 0) + (s.jitterMs ?? 0) > 0) {
      counts.delayed++;
      await new Promise((r) => setTimeout(r, (s.latencyMs ?? 0) + rDelay * (s.jitterMs ?? 0)));
    }
    if (faulty && rError < (s.errorRate ?? 0)) {
      counts.errors++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(SLOW_DOWN) });
      res.end(SLOW_DOWN);
      return;
    }
    const drop = faulty && rDrop < (s.dropRate ?? 0) ? (['mid-request', 'after-upstream', 'mid-response'] as const)[Math.floor(rHow * 3)] : undefined;
    if (drop === 'mid-request') {
      counts.dropsMidRequest++;
      // Read some of the body (if any) first, so the client is mid-way through sending it.
      await Promise.race([once(req, 'data'), once(req, 'end'), new Promise((r) => setTimeout(r, 20))]);
      req.socket.destroy();
      return;
    }
    counts.forwarded++;
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers });
    req.pipe(up);
    up.on('error', () => req.socket.destroy());
    const [answer] = (await once(up, 'response')) as [IncomingMessage];
    if (drop === 'after-upstream') {
      counts.dropsAfterUpstream++;
      answer.resume();
      await once(answer, 'end').catch(() => undefined);
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    if (drop === 'mid-response') {
      counts.dropsMidResponse++;
      res.flushHeaders();
      const first = await Promise.race([once(answer, 'data').then(([c]) => c as Buffer), once(answer, 'end').then(() => undefined)]);
      if (first !== undefined && first.length > 1) res.write(first.subarray(0, Math.floor(first.length / 2)));
      answer.destroy();
      // Let what was written reach the client, then cut the connection.
      setImmediate(() => req.socket.destroy());
      return;
    }
    answer.pipe(res);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    set: (next) => {
      settings = { ...next };
    },
    stats: () => ({ ...counts }),
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
