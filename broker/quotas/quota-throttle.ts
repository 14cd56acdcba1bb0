/**
 * Byte-rate quotas on Produce and Fetch, wrapped around their handlers so that neither knows about quotas.
 * As Kafka (KIP-219): the response carries `throttle_time_ms` at once and the broker then mutes the
 * connection for that long (reads no further request from it); a client of a version older than KIP-219
 * (Produce < 6, Fetch < 8) gets its response only after the throttle time instead.
 *
 * - Produce records the bytes of the request's record sets, then throttles when the rate is over
 *   producer_byte_rate; the records are appended either way.
 * - Fetch is capped at what the quota allows in its windows (Kafka's maxValueInQuotaWindow), records the
 *   bytes of the response's record sets and, when that puts the rate over consumer_byte_rate, takes them
 *   back and answers with no partitions and the throttle time (Kafka's throttled fetch response, which
 *   clients expect and do not count as an error).
 */
import type { ApiHandler, Body, HandlerContext } from '../handlers/handler.js';
import type { ClientQuotas, QuotaType } from './client-quotas.js';
import type { RateWindows } from './sampled-rate.js';

/** The first versions whose clients throttle themselves on throttle_time_ms (KIP-219). */
const CLIENT_THROTTLES_FROM: Readonly<Record<QuotaType, number>> = { produce: 6, fetch: 8 };

interface ProduceBody {
  topicData?: { partitionData?: { records: Buffer | null }[] }[];
}
interface FetchResponseBody {
  responses?: { partitions?: { records?: Buffer | null }[] }[];
}

export function produceBytes(body: Body): number {
  let n = 0;
  for (const t of (body as ProduceBody).topicData ?? []) for (const p of t.partitionData ?? []) n += p.records?.length ?? 0;
  return n;
}

export function fetchResponseBytes(body: Body): number {
  let n = 0;
  for (const t of (body as FetchResponseBody).responses ?? []) for (const p of t.partitions ?? []) n += p.records?.length ?? 0;
  return n;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Wraps the Produce (0) or Fetch (1) handler with client byte-rate quotas. */
export class QuotaThrottledHandler implements ApiHandler {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** The inner handler's: this wrapper reads only the sizes of the request's record sets, before it resolves. */
  readonly keepsNoRequestBytes: boolean | undefined;
  private readonly type: QuotaType;

  constructor(
    private readonly inner: ApiHandler,
    private readonly quotas: ClientQuotas,
    private readonly windows: RateWindows,
  ) {
    if (inner.apiKey !== 0 && inner.apiKey !== 1) throw new Error(`byte-rate quotas apply to Produce and Fetch, not API ${inner.apiKey}`);
    this.apiKey = inner.apiKey;
    this.minVersion = inner.minVersion;
    this.maxVersion = inner.maxVersion;
    this.keepsNoRequestBytes = inner.keepsNoRequestBytes;
    this.type = inner.apiKey === 0 ? 'produce' : 'fetch';
  }

  handle(request: Body, ctx: HandlerContext): Promise<Body | undefined> | Body | undefined {
    // Without any quota of this type the request path is the handler's alone.
    if (!this.quotas.active(this.type)) return this.inner.handle(request, ctx);
    return this.type === 'produce' ? this.produce(request, ctx) : this.fetch(request, ctx);
  }

  private async produce(request: Body, ctx: HandlerContext): Promise<Body | undefined> {
    const response = await this.inner.handle(request, ctx);
    const ms = this.quotas.record('produce', ctx.conn.security.principal, ctx.header.clientId, produceBytes(request));
    // acks=0 gets no response; the connection is still muted, as Kafka mutes it.
    return this.throttle(response, ms, ctx);
  }

  private async fetch(request: Body, ctx: HandlerContext): Promise<Body | undefined> {
    const cap = this.quotas.maxBytesInWindow('fetch', ctx.conn.security.principal, ctx.header.clientId, this.windows);
    const maxBytes = typeof request.maxBytes === 'number' ? request.maxBytes : 0x7fffffff;
    const capped = cap === undefined || cap >= maxBytes ? request : { ...request, maxBytes: Math.max(1, Math.floor(cap)) };
    const response = await this.inner.handle(capped, ctx);
    if (response === undefined) return response;
    const bytes = fetchResponseBytes(response);
    const ms = this.quotas.record('fetch', ctx.conn.security.principal, ctx.header.clientId, bytes);
    if (ms > 0) {
      this.quotas.unrecord('fetch', ctx.conn.security.principal, ctx.header.clientId, bytes);
      return this.throttle({ ...response, responses: [] }, ms, ctx);
    }
    return response;
  }

  private async throttle(response: Body | undefined, ms: number, ctx: HandlerContext): Promise<Body | undefined> {
    if (ms <= 0) return response;
    if (ctx.apiVersion < CLIENT_THROTTLES_FROM[this.type]) {
      // An old client does not wait by itself: the answer waits instead.
      await sleep(ms);
      return response === undefined ? undefined : { ...response, throttleTimeMs: ms };
    }
    ctx.conn.mute?.(ms);
    return response === undefined ? undefined : { ...response, throttleTimeMs: ms };
  }
}
