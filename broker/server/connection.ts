/**
 * One client connection: splits frames, runs several requests at once, and writes responses strictly in
 * request order (Kafka clients pipeline requests and match responses by order and correlation id).
 *
 * Back-pressure: reading pauses while `maxInFlight` requests are unanswered or while more than
 * `maxUnsentBytes` of responses wait in the socket's buffer (a slow consumer), and resumes when both drop.
 * So a client that does not read its responses cannot make the broker's memory grow without bound.
 * A quota throttle mutes the connection the same way, for the throttle time (`mute`).
 */
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';
import type { ConnectionSecurity } from '../security/session.js';
import type { FramePool } from './frame-pool.js';
import { FrameSplitter } from './frame-splitter.js';

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
  /** The listener, security protocol and principal of the connection (SASL moves the principal on). */
  readonly security: ConnectionSecurity;
  /**
   * Stops reading requests from this connection for `ms` (a quota's throttle, KIP-219): requests already
   * read wait too; responses still go out.
   */
  readonly mute?: (ms: number) => void;
}

/**
 * Handles one request frame (without its size prefix). Resolves to the encoded response including its size
 * prefix, or undefined when the request gets no response (Produce with acks=0). Throwing closes the
 * connection, which is what Kafka does with a request it cannot parse.
 */
export type FrameHandler = (frame: Buffer, conn: ConnectionInfo) => Promise<ResponseFrame | undefined> | ResponseFrame | undefined;

/**
 * An encoded response: one buffer, or several written back to back in one vectored write (a Fetch
 * response whose record sets are the buffers the log read, not copies).
 */
export type ResponseFrame = Buffer | readonly Buffer[];

/** Bytes moved over Kafka client sockets, added to by every connection (metrics read it). */
export interface TrafficCounters {
  bytesIn: number;
  bytesOut: number;
}

export interface ConnectionOptions {
  readonly maxFrameBytes: number;
  readonly maxInFlight: number;
  readonly maxUnsentBytes: number;
  /** Close after this long without traffic while nothing is in flight; 0 disables. */
  readonly idleMs: number;
  /** Where to count bytes in and out, when metrics are on. */
  readonly traffic?: TrafficCounters;
  /** Where warnings about a client's bad input go (rate-limited, shared by every connection); the connection's logger otherwise. */
  readonly badInputLog?: Pick<Logger, 'warn'>;
  /** Where frames spanning reads are assembled (and frames copied out of a reused read buffer). */
  readonly framePool?: FramePool;
  /**
   * Frames whose memory goes back to `framePool` once their handler has resolved: the handler must keep no
   * view of such a frame after that (Produce: the log write completes before the answer).
   */
  readonly recyclable?: (frame: Buffer) => boolean;
  /**
   * Memory a handler read a response's parts into (Fetch's record sets): each part of a response lent from
   * this pool goes back to it once the socket has written it. Parts from anywhere else are left alone.
   */
  readonly responsePool?: FramePool;
}

/**
 * How a connection receives bytes: 'data' events of chunks it may keep views of (TLS), or reads into
 * memory the socket reuses (a plaintext socket created with `onread`), which the server forwards to
 * `readTarget` and `landed`.
 */
export type ConnectionInput = 'data-events' | 'reused-buffer';

type Slot = { done: boolean; response: ResponseFrame | undefined };

export class Connection {
  private readonly splitter: FrameSplitter;
  private readonly queue: Slot[] = [];
  /** Frames received but not yet dispatched because the connection is over its limits. */
  private backlog: Buffer[] = [];
  private inFlight = 0;
  private paused = false;
  private pumping = false;
  private draining = false;
  private closed = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Muted (a quota throttle) until this time on the monotonic clock; 0 when not muted. */
  private mutedUntil = 0;
  private muteTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    readonly info: ConnectionInfo,
    private readonly handler: FrameHandler,
    private readonly options: ConnectionOptions,
    private readonly log: Logger,
    input: ConnectionInput = 'data-events',
  ) {
    this.splitter = new FrameSplitter(options.maxFrameBytes, options.framePool);
    socket.setNoDelay(true);
    if (options.idleMs > 0) socket.setTimeout(options.idleMs, () => this.onIdle());
    if (input === 'data-events') socket.on('data', (chunk: Buffer) => this.onData(() => this.splitter.push(chunk), chunk.length));
    // No 'data' listener puts the socket in flowing mode, so that the end of its input is seen.
    else socket.resume();
    socket.on('drain', () => this.pump());
    socket.on('error', (err) => this.log.debug('connection error', { conn: info.id, err }));
    socket.on('close', () => this.onClose());
  }

  /** Where the socket's next read should land ('reused-buffer' input): the rest of a large frame, or `scratch`. */
  readTarget(scratch: Buffer): Buffer {
    return this.splitter.readTarget(scratch);
  }

  /** `n` bytes were read into `into` ('reused-buffer' input); nothing keeps a view of `into` afterwards. */
  landed(into: Buffer, n: number): void {
    this.onData(() => this.splitter.landed(into, n), n);
  }

  private onData(split: () => Buffer[], bytes: number): void {
    if (this.options.traffic !== undefined) this.options.traffic.bytesIn += bytes;
    if (this.draining) return;
    let frames: Buffer[];
    try {
      frames = split();
    } catch (err) {
      (this.options.badInputLog ?? this.log).warn('closing connection: bad frame', { conn: this.info.id, listener: this.info.security.listener, remote: this.info.remoteAddress, err });
      this.destroy();
      return;
    }
    if (this.backlog.length === 0) this.backlog = frames;
    else this.backlog.push(...frames);
    this.pump();
  }

  /** Reads no request from this connection for `ms` milliseconds (from now, or longer if already muted longer). */
  mute(ms: number): void {
    if (this.closed || ms <= 0) return;
    const until = performance.now() + ms;
    if (until <= this.mutedUntil) return;
    this.mutedUntil = until;
    clearTimeout(this.muteTimer);
    this.muteTimer = setTimeout(() => {
      this.muteTimer = undefined;
      this.mutedUntil = 0;
      this.pump();
    }, Math.ceil(ms));
    this.updateFlow();
  }

  /** Whether a quota throttle holds the connection. */
  get muted(): boolean {
    return this.mutedUntil !== 0;
  }

  private overloaded(): boolean {
    return this.mutedUntil !== 0 || this.inFlight >= this.options.maxInFlight || this.socket.writableLength > this.options.maxUnsentBytes;
  }

  /** Dispatches backlogged frames while the connection is within its limits, then pauses or resumes reading. */
  private pump(): void {
    if (this.pumping) return; // a synchronous handler completing inside the loop below
    this.pumping = true;
    let i = 0;
    while (i < this.backlog.length && !this.closed && !this.overloaded()) {
      const frame = this.backlog[i++];
      if (frame) this.dispatch(frame);
    }
    this.backlog = i === this.backlog.length ? [] : this.backlog.slice(i);
    this.pumping = false;
    this.updateFlow();
  }

  private dispatch(frame: Buffer): void {
    const slot: Slot = { done: false, response: undefined };
    this.queue.push(slot);
    this.inFlight++;
    let result: Promise<ResponseFrame | undefined> | ResponseFrame | undefined;
    try {
      result = this.handler(frame, this.info);
    } catch (err) {
      this.fail(err);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (response) => {
          this.recycle(frame);
          this.complete(slot, response);
        },
        (err: unknown) => this.fail(err),
      );
    } else {
      this.recycle(frame);
      this.complete(slot, result);
    }
  }

  /** Gives a recyclable frame's memory back once its handler resolved (a failed one may still hold it). */
  private recycle(frame: Buffer): void {
    if (this.options.framePool !== undefined && this.options.recyclable?.(frame) === true) this.options.framePool.giveBack(frame);
  }

  private complete(slot: Slot, response: ResponseFrame | undefined): void {
    slot.done = true;
    slot.response = response;
    this.inFlight--;
    while (this.queue.length > 0 && this.queue[0]?.done) {
      const head = this.queue.shift();
      if (head?.response && !this.closed) this.write(head.response);
      if (this.info.security.closeAfterResponse && !this.closed) {
        // A failed authentication: its answer is the last thing this connection sends.
        this.draining = true;
        this.backlog = [];
        this.queue.length = 0;
        this.socket.end();
        this.closed = true;
        return;
      }
    }
    this.pump();
    if (this.inFlight === 0) this.notifyIdle();
  }

  private write(response: ResponseFrame): void {
    if (Buffer.isBuffer(response)) {
      if (this.options.traffic !== undefined) this.options.traffic.bytesOut += response.length;
      this.socket.write(response);
      return;
    }
    // Corked, the chunks leave in one writev.
    const pool = this.options.responsePool;
    this.socket.cork();
    for (const chunk of response as readonly Buffer[]) {
      if (this.options.traffic !== undefined) this.options.traffic.bytesOut += chunk.length;
      // The callback runs once the socket is done with the chunk: written, or failed with the connection.
      if (pool === undefined) this.socket.write(chunk);
      else this.socket.write(chunk, () => pool.giveBack(chunk));
    }
    this.socket.uncork();
  }

  private fail(err: unknown): void {
    this.inFlight--;
    (this.options.badInputLog ?? this.log).warn('closing connection: request failed', { conn: this.info.id, listener: this.info.security.listener, remote: this.info.remoteAddress, err });
    this.destroy();
  }

  private updateFlow(): void {
    if (this.closed) return;
    const overloaded = this.backlog.length > 0 || this.overloaded();
    if (overloaded && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!overloaded && this.paused && !this.draining) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private onIdle(): void {
    if (this.inFlight > 0) return;
    this.log.debug('closing idle connection', { conn: this.info.id });
    this.destroy();
  }

  private onClose(): void {
    this.closed = true;
    clearTimeout(this.muteTimer);
    this.notifyIdle();
  }

  private notifyIdle(): void {
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Number of requests received but not yet answered. */
  get pendingRequests(): number {
    return this.inFlight;
  }

  /**
   * Graceful close: stop reading new requests, let in-flight ones finish (up to `timeoutMs`), flush their
   * responses, then close.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    this.backlog = [];
    clearTimeout(this.muteTimer);
    this.socket.pause();
    if (this.inFlight > 0 && !this.closed) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      // Reading again (what arrives is dropped) lets the socket see the client's end: a socket reading into
      // a reused buffer stops reading altogether while paused.
      this.socket.resume();
      this.socket.end();
      setTimeout(() => {
        this.destroy();
        resolve();
      }, Math.max(100, Math.min(timeoutMs, 5000))).unref();
    });
  }

  destroy(): void {
    this.closed = true;
    clearTimeout(this.muteTimer);
    this.socket.destroy();
  }
}
