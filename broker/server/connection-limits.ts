/**
 * Kafka's per-address connection limits (`max.connections.per.ip`, `max.connections.per.ip.overrides`),
 * shared by every listener as Kafka's ConnectionQuotas are: a new connection from an address that already
 * has its limit open is closed at once, before any byte is read, and counted per listener.
 */
import { isIP } from 'node:net';

export interface ConnectionLimitSettings {
  /** Connections each address may hold open (Kafka's default, 2147483647, means no limit). */
  readonly perIp: number;
  /** Per-address exceptions: `host:count` pairs, comma-separated (hostnames and IP addresses). */
  readonly overrides: string;
}

/** Parses `max.connections.per.ip.overrides`; returns problems for entries that are not `host:count`. */
export function parseConnectionOverrides(value: string): { overrides: Map<string, number>; problems: string[] } {
  const overrides = new Map<string, number>();
  const problems: string[] = [];
  for (const entry of value.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const at = entry.lastIndexOf(':');
    const host = at > 0 ? entry.slice(0, at).trim().replace(/^\[(.*)\]$/, '$1') : '';
    const count = at > 0 ? entry.slice(at + 1).trim() : '';
    if (host === '' || !/^\d+$/.test(count) || Number(count) > 2147483647) {
      problems.push(`max.connections.per.ip.overrides: '${entry}' is not host:count (for example 127.0.0.1:200,broker-host:50)`);
      continue;
    }
    overrides.set(normalizeAddress(host), Number(count));
  }
  return { overrides, problems };
}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) is 10.0.0.1; hostnames lower-cased. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  return isIP(address) ? address : address.toLowerCase();
}

export class ConnectionLimits {
  private readonly open = new Map<string, number>();
  private readonly refusedByListener = new Map<string, number>();

  /** `overrides` keys are IP addresses (hostnames resolved by the caller) or names to match literally. */
  constructor(
    private readonly perIp: number,
    private readonly overrides: ReadonlyMap<string, number>,
  ) {}

  /** Takes a slot for `address`, or returns false (and counts a refusal on `listener`) when it has none left. */
  tryAcquire(address: string | undefined, listener: string): boolean {
    const ip = normalizeAddress(address ?? '');
    const limit = this.overrides.get(ip) ?? this.perIp;
    const now = this.open.get(ip) ?? 0;
    if (now >= limit) {
      this.refusedByListener.set(listener, (this.refusedByListener.get(listener) ?? 0) + 1);
      return false;
    }
    this.open.set(ip, now + 1);
    return true;
  }

  release(address: string | undefined): void {
    const ip = normalizeAddress(address ?? '');
    const now = this.open.get(ip) ?? 0;
    if (now <= 1) this.open.delete(ip);
    else this.open.set(ip, now - 1);
  }

  /** Connections refused since start, per listener. */
  refused(): ReadonlyMap<string, number> {
    return this.refusedByListener;
  }
}

/**
 * Resolves the hostnames among the overrides to every address they have (Kafka resolves them once, at
 * start); an IP address stands for itself. A name that does not resolve is an error: the operator meant a
 * host that does not exist.
 */
export async function resolveConnectionOverrides(overrides: ReadonlyMap<string, number>, lookup: (host: string) => Promise<string[]>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [host, count] of overrides) {
    if (isIP(host) !== 0) {
      out.set(host, count);
      continue;
    }
    let addresses: string[];
    try {
      addresses = await lookup(host);
    } catch (err) {
      throw new Error(`max.connections.per.ip.overrides names ${host}, which does not resolve (${(err as Error).message}); fix the name or use its IP address`, { cause: err });
    }
    for (const a of addresses) out.set(normalizeAddress(a), count);
  }
  return out;
}
