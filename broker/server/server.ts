/**
 * One Kafka listener: accepts TCP (or, on SSL and SASL_SSL listeners, TLS) connections and hands each
 * request frame to a FrameHandler. `close()` is the graceful shutdown used on SIGTERM/SIGINT: stop
 * accepting, finish in-flight requests, flush their responses and close every connection.
 *
 * On a TLS listener a client that does not complete the handshake (a plaintext client, an expired or
 * untrusted certificate) is dropped at the TLS layer and never reaches the frame handler; with
 * ssl.client.auth=requested a certificate that was offered but does not verify closes the connection too.
 */
import { createServer, Socket, type Server, type SocketConstructorOpts } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { ListenerSpec } from '../config/listeners.js';
import type { Logger } from '../logger.js';
import { newConnectionSecurity } from '../security/session.js';
import { tlsPrincipal, type TlsContext } from '../security/tls.js';
import { Connection, type ConnectionInput, type ConnectionOptions, type FrameHandler } from './connection.js';
import type { ConnectionLimits } from './connection-limits.js';

export interface ListenOptions extends ConnectionOptions {
  readonly host: string;
  readonly port: number;
  /** The listener's name and security protocol; PLAINTEXT when absent. */
  readonly listener?: ListenerSpec;
  /** Certificates for SSL and SASL_SSL listeners. */
  readonly tls?: TlsContext;
  /** Per-address connection limits, shared by every listener. */
  readonly limits?: ConnectionLimits;
}

/** Shared by every listener so that connection ids stay unique across them. */
let nextConnectionId = 1;

/**
 * What a plaintext socket reads into before its connection copies the bytes out (or reads straight into a
 * large frame's own buffer instead). One per listener: every read callback runs to its end on this thread
 * before the next read starts, and each copies out what it needs.
 */
const SCRATCH_BYTES = 128 * 1024;

/**
 * A socket that reads into memory its connection chooses (`onread`) rather than into a new Buffer per read,
 * so that reading allocates nothing (frame-pool.ts says why that matters). Node offers `onread` only to
 * sockets it constructs, so the accepted socket, paused since accept (`pauseOnConnect`), hands its handle to
 * a new one, which also takes its place in the server's count of open connections (so `server.close()`
 * still waits for it). `_handle` and `_server` are Node's own fields: there is no public way to do this, and
 * server.test.ts checks both the reads and the count.
 */
function withReadBuffer(accepted: Socket, onread: { buffer: () => Buffer; callback: (n: number, into: Buffer) => void }): Socket {
  const old = accepted as unknown as { _handle: unknown; _server: unknown; server: unknown };
  const socket = new Socket({
    handle: old._handle,
    readable: true,
    writable: true,
    onread: {
      buffer: onread.buffer,
      callback: (n: number, into: Uint8Array) => {
        onread.callback(n, into as Buffer);
        return true;
      },
    },
  } as SocketConstructorOpts);
  const adopted = socket as unknown as { _server: unknown; server: unknown };
  adopted._server = old._server;
  adopted.server = old.server;
  old._handle = null;
  old._server = null;
  return socket;
}

export class KafkaServer {
  private readonly server: Server | TlsServer;
  private readonly connections = new Set<Connection>();
  /** TLS handshakes that failed (plaintext clients, bad certificates), since start. */
  tlsHandshakeFailures = 0;

  constructor(
    private readonly handler: FrameHandler,
    private readonly options: ListenOptions,
    private readonly log: Logger,
  ) {
    const tls = options.tls;
    if (tls !== undefined) {
      const server = createTlsServer({ ...tls.options }, (socket) => this.acceptTls(socket));
      server.on('connection', (raw: Socket) => this.admit(raw));
      tls.onReload((next) => server.setSecureContext({ ...next }));
      server.on('tlsClientError', (err, socket) => {
        this.tlsHandshakeFailures++;
        this.log.debug('TLS handshake failed', { listener: this.name, remote: `${socket.remoteAddress}:${socket.remotePort}`, err: err.message });
      });
      this.server = server;
    } else {
      const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
      this.server = createServer({ pauseOnConnect: true }, (accepted) => {
        let conn: Connection | undefined;
        const socket = withReadBuffer(accepted, {
          // The first call comes before the connection exists.
          buffer: () => conn?.readTarget(scratch) ?? scratch,
          callback: (n, into) => conn?.landed(into, n),
        });
        if (this.admit(socket)) conn = this.accept(socket, undefined, 'reused-buffer');
      });
    }
  }

  /** Whether this listener speaks TLS (SSL, SASL_SSL). */
  get tls(): boolean {
    return this.options.tls !== undefined;
  }

  get name(): string {
    return this.options.listener?.name ?? 'PLAINTEXT';
  }

  async listen(): Promise<{ host: string; port: number }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const addr = this.server.address();
    if (addr === null || typeof addr === 'string') throw new Error('listener has no TCP address');
    return { host: addr.address, port: addr.port };
  }

  private acceptTls(socket: TLSSocket): void {
    const offered = socket.getPeerCertificate(false);
    if (this.options.tls?.options.requestCert && offered && offered.raw && !socket.authorized) {
      // ssl.client.auth=requested: a certificate that was offered must verify.
      this.tlsHandshakeFailures++;
      this.log.debug('TLS client certificate refused', { listener: this.name, remote: `${socket.remoteAddress}:${socket.remotePort}`, reason: String(socket.authorizationError) });
      socket.destroy();
      return;
    }
    const principal = tlsPrincipal(socket);
    if (principal !== undefined) this.log.debug('TLS client certificate accepted', { listener: this.name, remote: `${socket.remoteAddress}:${socket.remotePort}`, principal });
    this.accept(socket, principal);
  }

  /**
   * The per-address limit, checked on the TCP connection before anything is read (and before a TLS
   * handshake): false when the connection was refused and closed.
   */
  private admit(raw: Socket): boolean {
    const limits = this.options.limits;
    if (limits === undefined) return true;
    const address = raw.remoteAddress;
    if (!limits.tryAcquire(address, this.name)) {
      (this.options.badInputLog ?? this.log).warn('refused a connection: its address has max.connections.per.ip connections open', { listener: this.name, remote: `${address}:${raw.remotePort}` });
      raw.destroy();
      return false;
    }
    raw.once('close', () => limits.release(address));
    return true;
  }

  private accept(socket: Socket, principal: string | undefined, input: ConnectionInput = 'data-events'): Connection {
    const listener = this.options.listener;
    const security = newConnectionSecurity(listener?.name ?? 'PLAINTEXT', listener?.protocol ?? 'PLAINTEXT', principal);
    const conn = new Connection(
      socket,
      { id: nextConnectionId++, remoteAddress: `${socket.remoteAddress}:${socket.remotePort}`, security, mute: (ms) => conn.mute(ms) },
      this.handler,
      this.options,
      this.log,
      input,
    );
    this.connections.add(conn);
    socket.on('close', () => this.connections.delete(conn));
    return conn;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  async close(timeoutMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.connections].map((c) => c.drain(timeoutMs)));
    await closed;
  }
}
