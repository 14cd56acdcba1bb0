/** A minimal Kafka client for tests: sends requests encoded by our protocol layer and decodes the responses. */
import { connect, type Socket } from 'node:net';
import { decodeResponse, encodeRequest } from '../../../protocol/index.js';

export class WireClient {
  private buf = Buffer.alloc(0);
  private correlationId = 0;
  private readonly waiting = new Map<number, { apiKey: number; version: number; resolve: (b: Record<string, unknown>) => void; reject: (e: Error) => void }>();

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => {
      for (const w of this.waiting.values()) w.reject(new Error('connection closed'));
      this.waiting.clear();
    });
  }

  static open(port: number): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => resolve(new WireClient(s)));
      s.once('error', reject);
    });
  }

  send(apiKey: number, version: number, body: object, clientId = 'wire-test'): Promise<Record<string, unknown>> {
    const correlationId = ++this.correlationId;
    const frame = encodeRequest({ apiKey, apiVersion: version, correlationId, clientId }, body);
    return new Promise((resolve, reject) => {
      this.waiting.set(correlationId, { apiKey, version, resolve, reject });
      this.socket.write(frame);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 4) {
      const size = this.buf.readInt32BE(0);
      if (this.buf.length < 4 + size) return;
      const frame = this.buf.subarray(4, 4 + size);
      this.buf = this.buf.subarray(4 + size);
      const id = frame.readInt32BE(0);
      const w = this.waiting.get(id);
      if (!w) continue;
      this.waiting.delete(id);
      w.resolve(decodeResponse(w.apiKey, w.version, frame).body as Record<string, unknown>);
    }
  }
}
