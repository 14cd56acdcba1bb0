/**
 * The Kafka listener: accepts TCP connections and hands each request frame to a FrameHandler.
 * `close()` is the graceful shutdown used on SIGTERM/SIGINT: stop accepting, finish in-flight requests,
 * flush their responses and close every connection.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { Connection, type ConnectionOptions, type FrameHandler } from './connection.js';

export interface ListenOptions extends ConnectionOptions {
  readonly host: string;
  readonly port: number;
}

export class KafkaServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private nextId = 1;

  constructor(
    private readonly handler: FrameHandler,
    private readonly options: ListenOptions,
    private readonly log: Logger,
  ) {
    this.server = createServer((socket) => this.accept(socket));
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

  private accept(socket: Socket): void {
    const conn = new Connection(
      socket,
      { id: this.nextId++, remoteAddress: `${socket.remoteAddress}:${socket.remotePort}` },
      this.handler,
      this.options,
      this.log,
    );
    this.connections.add(conn);
    socket.on('close', () => this.connections.delete(conn));
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
