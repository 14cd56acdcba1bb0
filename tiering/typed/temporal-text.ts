/**
 * Dates and times as JSON Schema's `format`s write them (RFC 3339: full-date, date-time, full-time), to and
 * from Iceberg's values (days since the epoch; microseconds since the epoch or since midnight).
 *
 * Parsing accepts any RFC 3339 text (a `t`/space separator, lowercase `z`, numeric offsets, 1 to 9 fraction
 * digits; digits past microseconds are dropped). Formatting writes one canonical text, the form JavaScript's
 * Date.prototype.toISOString() gives (so what Confluent's JsonSerializer writes for a Date): UTC with `Z`,
 * three fraction digits, six when the value has microseconds; times as `HH:MM:SS` with the fraction only
 * when there is one. Other spellings parse to the same value but format differently (so conversion keeps
 * their raw bytes). Undefined means "not such a text".
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})?$/;
const DAY_MS = 86_400_000;

function daysOf(y: number, m: number, d: number): number | undefined {
  if (m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  const check = new Date(0);
  check.setUTCFullYear(y, m - 1, d);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d) return undefined;
  return Math.round(check.getTime() / DAY_MS);
}

function fractionMicros(fraction: string | undefined): number {
  return fraction === undefined ? 0 : Number(fraction.slice(0, 6).padEnd(6, '0'));
}

function pad(n: number | bigint, width: number): string {
  return String(n).padStart(width, '0');
}

/** `YYYY-MM-DD` → days since 1970-01-01. */
export function parseDate(text: string): number | undefined {
  const m = DATE.exec(text);
  return m === null ? undefined : daysOf(Number(m[1]), Number(m[2]), Number(m[3]));
}

export function formatDate(days: number): string {
  const d = new Date(days * DAY_MS);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

/** An RFC 3339 date-time → microseconds since the epoch (UTC). */
export function parseDateTime(text: string): bigint | undefined {
  const m = DATE_TIME.exec(text);
  if (m === null) return undefined;
  const days = daysOf(Number(m[1]), Number(m[2]), Number(m[3]));
  const [h, min, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (days === undefined || h > 23 || min > 59 || s > 60) return undefined;
  const zone = m[8] as string;
  const offsetMinutes = zone === 'Z' || zone === 'z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const seconds = BigInt(days) * 86_400n + BigInt(h * 3600 + min * 60 + s - offsetMinutes * 60);
  return seconds * 1_000_000n + BigInt(fractionMicros(m[7]));
}

export function formatDateTime(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const sub = Number(micros - ms * 1000n);
  const iso = new Date(Number(ms)).toISOString();
  return sub === 0 ? iso : `${iso.slice(0, -1)}${pad(sub, 3)}Z`;
}

/** An RFC 3339 full-time (or partial-time) → microseconds since midnight; an offset is read and ignored. */
export function parseTime(text: string): bigint | undefined {
  const m = TIME.exec(text);
  if (m === null) return undefined;
  const [h, min, s] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (h > 23 || min > 59 || s > 59) return undefined;
  return BigInt(h * 3600 + min * 60 + s) * 1_000_000n + BigInt(fractionMicros(m[4]));
}

export function formatTime(micros: bigint): string {
  const totalSeconds = micros / 1_000_000n;
  const frac = Number(micros % 1_000_000n);
  const base = `${pad(totalSeconds / 3600n, 2)}:${pad((totalSeconds / 60n) % 60n, 2)}:${pad(totalSeconds % 60n, 2)}`;
  if (frac === 0) return base;
  return frac % 1000 === 0 ? `${base}.${pad(frac / 1000, 3)}` : `${base}.${pad(frac, 6)}`;
}
