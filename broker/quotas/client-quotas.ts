/**
 * Client quotas on the request path: the stored quotas (kept in the metadata store, changed by
 * AlterClientQuotas) and one byte-rate per quota type and (user, client-id) tag set, as Kafka's
 * ClientQuotaManager keeps one sensor per metric tags. Produce records the bytes of the request's record
 * sets, Fetch the bytes of the response's; when the rate is over the quota the request's throttle time is
 * what Kafka computes, and the caller puts it in `throttle_time_ms` and mutes the connection for that long.
 */
import type { ClientQuotaRecord, MetadataStore } from '../metadata/metadata-store.js';
import { CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, QuotaIndex, type ResolvedQuota } from './quota-entities.js';
import { SampledRate, type RateWindows } from './sampled-rate.js';

export type QuotaType = 'produce' | 'fetch';

const KEY_OF: Readonly<Record<QuotaType, string>> = { produce: PRODUCER_BYTE_RATE, fetch: CONSUMER_BYTE_RATE };

/** Rates not recorded to for this long are dropped (Kafka expires inactive quota sensors after an hour). */
const IDLE_RATE_MS = 3_600_000;
const SWEEP_EVERY_MS = 60_000;
/** Resolutions kept between quota changes, so a request costs one map lookup; cleared when full. */
const RESOLVED_CACHE_ENTRIES = 10_000;

/** Throttled requests and their throttle time since start, per quota type (metrics read them). */
export interface ThrottleCounters {
  requests: number;
  throttleMs: number;
}

export class ClientQuotas {
  private index: QuotaIndex;
  private readonly rates = new Map<string, SampledRate>();
  private readonly resolved = new Map<string, ResolvedQuota | null>();
  private lastSweepMs: number;
  readonly throttled: Readonly<Record<QuotaType, ThrottleCounters>> = { produce: { requests: 0, throttleMs: 0 }, fetch: { requests: 0, throttleMs: 0 } };
  private enabled: Record<QuotaType, boolean> = { produce: false, fetch: false };

  constructor(
    private readonly metadata: Pick<MetadataStore, 'listClientQuotas' | 'alterClientQuotas'>,
    private readonly windows: RateWindows,
    private readonly clock: () => number = Date.now,
  ) {
    this.index = new QuotaIndex([]);
    this.lastSweepMs = clock();
    this.reload();
  }

  list(): readonly ClientQuotaRecord[] {
    return this.metadata.listClientQuotas();
  }

  /** Stores changed entities (an entity with no values left is removed) and applies them to the next request. */
  async alter(records: readonly ClientQuotaRecord[]): Promise<void> {
    await this.metadata.alterClientQuotas(records);
    this.reload();
  }

  /** Whether a quota of this type is set anywhere (without one the request path records nothing). */
  active(type: QuotaType): boolean {
    return this.enabled[type];
  }

  /**
   * Records `bytes` for the request of `principal` (`User:alice`) with `clientId` and returns how long it
   * must be throttled, in milliseconds (0 when within its quota or when no quota applies).
   */
  record(type: QuotaType, principal: string, clientId: string | null, bytes: number): number {
    if (!this.enabled[type]) return 0;
    const quota = this.resolve(type, principal, clientId);
    if (quota === undefined) return 0;
    const now = this.clock();
    this.sweep(now);
    const key = `${type}\0${quota.user}\0${quota.clientId}`;
    let rate = this.rates.get(key);
    if (rate === undefined) {
      rate = new SampledRate(this.windows, now);
      this.rates.set(key, rate);
    }
    rate.record(bytes, now);
    const ms = Math.min(rate.throttleMs(quota.bound, now), 2_147_483_647);
    if (ms > 0) {
      this.throttled[type].requests++;
      this.throttled[type].throttleMs += ms;
    }
    return ms;
  }

  /** Takes back bytes recorded for a request that was answered without them (a throttled Fetch). */
  unrecord(type: QuotaType, principal: string, clientId: string | null, bytes: number): void {
    const quota = this.resolve(type, principal, clientId);
    if (quota !== undefined) this.rates.get(`${type}\0${quota.user}\0${quota.clientId}`)?.unrecord(bytes);
  }

  /**
   * The most bytes a request may carry under the quota that applies: what the quota allows over the
   * windows its rate is measured on (Kafka's maxValueInQuotaWindow); undefined without a quota.
   */
  maxBytesInWindow(type: QuotaType, principal: string, clientId: string | null, windows: RateWindows): number | undefined {
    if (!this.enabled[type]) return undefined;
    const quota = this.resolve(type, principal, clientId);
    if (quota === undefined) return undefined;
    return (quota.bound * Math.max(1, windows.samples - 1) * windows.windowMs) / 1000;
  }

  private resolve(type: QuotaType, principal: string, clientId: string | null): ResolvedQuota | undefined {
    const key = `${type}\0${principal}\0${clientId ?? ''}`;
    let quota = this.resolved.get(key);
    if (quota === undefined) {
      quota = this.index.resolve(KEY_OF[type], principalName(principal), clientId ?? '') ?? null;
      if (this.resolved.size >= RESOLVED_CACHE_ENTRIES) this.resolved.clear();
      this.resolved.set(key, quota);
    }
    return quota ?? undefined;
  }

  private reload(): void {
    this.resolved.clear();
    this.index = new QuotaIndex(this.metadata.listClientQuotas());
    this.enabled = { produce: this.index.has(PRODUCER_BYTE_RATE), fetch: this.index.has(CONSUMER_BYTE_RATE) };
  }

  private sweep(now: number): void {
    if (now - this.lastSweepMs < SWEEP_EVERY_MS) return;
    this.lastSweepMs = now;
    for (const [key, rate] of this.rates) if (now - rate.lastRecordMs > IDLE_RATE_MS) this.rates.delete(key);
  }
}

/** The user a quota names: the principal without its type (`User:alice` is user `alice`), as Kafka's sanitized user. */
export function principalName(principal: string): string {
  const colon = principal.indexOf(':');
  return colon < 0 ? principal : principal.slice(colon + 1);
}
