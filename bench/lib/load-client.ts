/**
 * A raw Kafka load client: N TCP connections, each pipelining pre-encoded request frames and matching the
 * in-order responses by correlation id. It never decodes on the hot path (a callback may), so one client
 * core can drive a broker on the other core. Used identically against Floe and the baseline servers, so
 * any difference in throughput is the server's.
 *
 *   closedLoop: keep `window` requests in flight per connection for a duration (throughput).
 *   openLoop:   send on a fixed schedule regardless of responses and time each response from its
 *               scheduled send time, which avoids coordinated omission (latency).
 *
 * Response frames handed to callbacks are valid only during the callback (see FrameReader `reuse`).
 */
import { connect, type Socket } from 'node:net';
import { FrameReader } from './frames.js';

export interface Sendable {
  readonly frame: Buffer;
  readonly correlationId: number;
}

interface Pending {
  readonly request: number;
  readonly correlationId: number;
  /** hrtime ns the request was due (open loop) or sent. */
  readonly scheduledNs: bigint;
  readonly sentNs: bigint;
}

type ResponseHandler = (response: Buffer, pending: Pending) => void;

class Lane {
  private readonly pending: Pending[] = [];
  private head = 0;
  handler: ResponseHandler = () => undefined;
  failure: Error | undefined;

  constructor(readonly socket: Socket) {
    const reader = new FrameReader((frame) => this.onFrame(frame), { reuse: true });
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (err) {
        this.fail(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  get inFlight(): number {
    return this.pending.length - this.head;
  }

  send(frame: Buffer, p: Pending): void {
    this.pending.push(p);
    this.socket.write(frame);
  }

  private onFrame(frame: Buffer): void {
    const p = this.pending[this.head];
    if (p === undefined) return this.fail(new Error('response without a request'));
    this.head++;
    if (this.head > 4096 && this.head * 2 > this.pending.length) {
      this.pending.splice(0, this.head);
      this.head = 0;
    }
    const correlationId = frame.readInt32BE(0);
    if (correlationId !== p.correlationId) {
      return this.fail(new Error(`response correlation id ${correlationId}, expected ${p.correlationId}: responses out of order`));
    }
    this.handler(frame, p);
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.socket.destroy();
  }
}

export interface ClosedLoopResult {
  /** Requests answered. */
  readonly completed: number;
  /** hrtime ns from the first send to the last response. */
  readonly ns: number;
  /** How often each pool index was answered. */
  readonly perRequest: Uint32Array;
}

export interface OpenLoopResult {
  readonly sent: number;
  readonly completed: number;
  readonly ns: number;
  /** Per response, ms from the scheduled send time (coordinated-omission safe). */
  readonly fromScheduleMs: Float64Array;
  /** Per response, ms from the actual write (service time, hides client lag). */
  readonly fromSendMs: Float64Array;
  /** Largest lag of an actual send behind its schedule, ms. */
  readonly maxSendLagMs: number;
  readonly perRequest: Uint32Array;
}

export class LoadClient {
  private constructor(private readonly lanes: Lane[]) {}

  static async connect(port: number, connections: number, host = '127.0.0.1'): Promise<LoadClient> {
    const lanes = await Promise.all(
      Array.from(
        { length: connections },
        () =>
          new Promise<Lane>((resolve, reject) => {
            const s = connect({ port, host, noDelay: true });
            s.once('connect', () => {
              s.off('error', reject);
              resolve(new Lane(s));
            });
            s.once('error', reject);
          }),
      ),
    );
    for (const lane of lanes) lane.socket.on('error', (err) => lane.fail(err));
    return new LoadClient(lanes);
  }

  get connections(): number {
    return this.lanes.length;
  }

  /**
   * One request on connection `lane`; resolves with the response frame (without size prefix). The frame may
   * live in the connection's scratch buffer: it is valid until the next response on that connection.
   */
  request(frame: Buffer, correlationId: number, lane = 0): Promise<Buffer> {
    const l = this.lanes[lane];
    if (l === undefined) throw new Error(`no connection ${lane}`);
    return new Promise<Buffer>((resolve, reject) => {
      const closed = () => reject(l.failure ?? new Error('connection closed before the response'));
      l.socket.once('close', closed);
      l.handler = (response) => {
        l.socket.off('close', closed);
        resolve(response);
      };
      const now = process.hrtime.bigint();
      l.send(frame, { request: 0, correlationId, scheduledNs: now, sentNs: now });
    });
  }

  /**
   * Keeps `window` requests in flight on every connection for `durationMs`, cycling through `requests`
   * (each connection starts at a different place). `onResponse` sees every response (keep it cheap).
   */
  closedLoop(
    requests: readonly Sendable[],
    options: { window: number; durationMs: number; onResponse?: (response: Buffer, request: number) => void },
  ): Promise<ClosedLoopResult> {
    const perRequest = new Uint32Array(requests.length);
    const start = process.hrtime.bigint();
    const stopAt = start + BigInt(Math.round(options.durationMs * 1e6));
    let last = start;
    let completed = 0;
    let stopped = false;
    return new Promise<ClosedLoopResult>((resolve, reject) => {
      let open = this.lanes.length;
      const finishLane = () => {
        if (--open === 0) {
          const failed = this.lanes.find((l) => l.failure !== undefined);
          if (failed) reject(failed.failure);
          else resolve({ completed, ns: Number(last - start), perRequest });
        }
      };
      this.lanes.forEach((lane, li) => {
        let next = Math.floor((li * requests.length) / this.lanes.length);
        let done = false;
        const sendNext = () => {
          const i = next;
          next = (next + 1) % requests.length;
          const r = requests[i]!;
          lane.send(r.frame, { request: i, correlationId: r.correlationId, scheduledNs: 0n, sentNs: 0n });
        };
        const onClose = () => {
          if (!done) {
            done = true;
            lane.failure ??= new Error('connection closed by the server during the run');
            stopped = true;
            finishLane();
          }
        };
        lane.socket.once('close', onClose);
        lane.handler = (response, p) => {
          completed++;
          perRequest[p.request]!++;
          options.onResponse?.(response, p.request);
          const now = process.hrtime.bigint();
          last = now;
          if (!stopped && now >= stopAt) stopped = true;
          if (!stopped) sendNext();
          else if (lane.inFlight === 0 && !done) {
            done = true;
            lane.socket.off('close', onClose);
            finishLane();
          }
        };
        for (let w = 0; w < options.window; w++) sendNext();
      });
    });
  }

  /**
   * Sends request k at start + k / ratePerSec (on connection k mod N) for `durationMs`, whatever the
   * responses do, then waits for the outstanding ones.
   */
  openLoop(requests: readonly Sendable[], options: { ratePerSec: number; durationMs: number }): Promise<OpenLoopResult> {
    const total = Math.max(1, Math.floor((options.ratePerSec * options.durationMs) / 1000));
    const intervalNs = 1e9 / options.ratePerSec;
    const fromScheduleMs = new Float64Array(total);
    const fromSendMs = new Float64Array(total);
    const perRequest = new Uint32Array(requests.length);
    let completed = 0;
    let sent = 0;
    let maxLagNs = 0;
    const start = process.hrtime.bigint();
    let last = start;
    return new Promise<OpenLoopResult>((resolve, reject) => {
      // One listener per connection and run, removed when the run ends: a client that runs many phases
      // would otherwise pile them up on its sockets.
      const onClose = this.lanes.map((lane) => () => {
        lane.failure ??= new Error('connection closed by the server during the run');
        finish();
      });
      const finish = () => {
        this.lanes.forEach((lane, i) => lane.socket.off('close', onClose[i]!));
        const failed = this.lanes.find((l) => l.failure !== undefined);
        if (failed) return reject(failed.failure);
        resolve({
          sent,
          completed,
          ns: Number(last - start),
          fromScheduleMs: fromScheduleMs.subarray(0, completed),
          fromSendMs: fromSendMs.subarray(0, completed),
          maxSendLagMs: maxLagNs / 1e6,
          perRequest,
        });
      };
      for (const [i, lane] of this.lanes.entries()) {
        lane.socket.once('close', onClose[i]!);
        lane.handler = (_response, p) => {
          const now = process.hrtime.bigint();
          last = now;
          fromScheduleMs[completed] = Number(now - p.scheduledNs) / 1e6;
          fromSendMs[completed] = Number(now - p.sentNs) / 1e6;
          completed++;
          perRequest[p.request]!++;
          if (completed === total) finish();
        };
      }
      const tick = () => {
        const now = process.hrtime.bigint();
        const elapsed = Number(now - start);
        const due = Math.min(total, Math.floor(elapsed / intervalNs) + 1);
        while (sent < due) {
          const scheduled = start + BigInt(Math.round(sent * intervalNs));
          const lag = Number(now - scheduled);
          if (lag > maxLagNs) maxLagNs = lag;
          const i = sent % requests.length;
          const r = requests[i]!;
          this.lanes[sent % this.lanes.length]!.send(r.frame, { request: i, correlationId: r.correlationId, scheduledNs: scheduled, sentNs: now });
          sent++;
        }
        if (sent < total) {
          // Timers fire after at least ~1 ms, so at high rates requests leave in small bursts up to ~1 ms
          // late. That lateness counts in fromScheduleMs (not in fromSendMs); spinning on setImmediate would
          // be more punctual but burns the core the broker shares with everything else on this machine.
          const nextDueNs = sent * intervalNs - Number(process.hrtime.bigint() - start);
          setTimeout(tick, Math.max(0, Math.floor(nextDueNs / 1e6)));
        }
      };
      tick();
    });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.lanes.map(
        (l) =>
          new Promise<void>((resolve) => {
            if (l.socket.destroyed) return resolve();
            l.socket.once('close', () => resolve());
            l.socket.end();
          }),
      ),
    );
  }
}
