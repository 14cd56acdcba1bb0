/**
 * The typed topic of the engine tests (typed.test.ts): an Avro schema with one field of each type the
 * engines must read (long, int, string, boolean, double, decimal(10,2) on bytes, timestamp-millis, date, a
 * nested record, an array of strings, a map of longs, an enum, a nullable string), a second version that
 * adds an optional field, the values a producer sends with each, and one comparable view of a row
 * (`OrderView`) that every engine's answer is turned into and compared with.
 *
 * The values follow what Confluent's AvroSerializer (avsc, no logical-type hooks) takes: a decimal as the
 * minimal big-endian two's complement bytes of its unscaled value, a timestamp-millis as a number, a date as
 * the number of days since the epoch, a nullable union as the plain value or null. Map keys are not
 * integer-like (a JS object would reorder them, and the bytes could not be rebuilt; see the README's "Type mapping").
 */
export const ORDER_V1 = {
  type: 'record',
  name: 'Order',
  namespace: 'floe.engines',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'int' },
    { name: 'item', type: 'string' },
    { name: 'paid', type: 'boolean' },
    { name: 'weight', type: 'double' },
    { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'user', type: { type: 'record', name: 'User', fields: [{ name: 'name', type: 'string' }, { name: 'city', type: 'string' }] } },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'counts', type: { type: 'map', values: 'long' } },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID', 'SHIPPED'] } },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

/** Version 2: adds the optional `coupon` (rows written with version 1 read null there). */
export const ORDER_V2 = { ...ORDER_V1, fields: [...ORDER_V1.fields, { name: 'coupon', type: ['null', 'string'], default: null }] };

/** The table's top-level columns, in order: the `kafka` struct, `value`, then the value's fields. */
export const TABLE_COLUMNS = ['kafka', 'value', ...ORDER_V2.fields.map((f) => f.name)];

/** The Iceberg types Floe must give the typed columns (the README's "Type mapping"). */
export const ICEBERG_TYPES: Readonly<Record<string, unknown>> = {
  id: 'long',
  qty: 'int',
  item: 'string',
  paid: 'boolean',
  weight: 'double',
  price: 'decimal(10,2)',
  at: 'timestamptz',
  day: 'date',
  tags: 'list',
  counts: 'map',
  user: 'struct',
  status: 'string',
  note: 'string',
  coupon: 'string',
};

const CITIES = ['Paris', 'Oslo', 'Lima'];
const STATUSES = ['NEW', 'PAID', 'SHIPPED'];
const DAY_MS = 86_400_000;

/** One order as the producer sends it (the AvroSerializer's input), `coupon` only from version 2 on. */
export interface Order {
  readonly id: number;
  readonly qty: number;
  readonly item: string;
  readonly paid: boolean;
  readonly weight: number;
  readonly price: Buffer;
  readonly at: number;
  readonly day: number;
  readonly user: { readonly name: string; readonly city: string };
  readonly tags: readonly string[];
  readonly counts: Readonly<Record<string, number>>;
  readonly status: string;
  readonly note: string | null;
  readonly coupon?: string | null;
}

/** The minimal big-endian two's complement bytes of `n` (Avro's decimal on bytes). */
export function decimalBytes(n: bigint): Buffer {
  const out: number[] = [];
  let v = n;
  for (;;) {
    out.unshift(Number(BigInt.asUintN(8, v)));
    v >>= 8n;
    const sign = (out[0]! & 0x80) !== 0;
    if ((v === 0n && !sign) || (v === -1n && sign)) break;
  }
  return Buffer.from(out);
}

/** An unscaled value with scale 2 as its exact decimal text (`-200.00`, `0.05`). */
export function decimalText(unscaled: bigint): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(3, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** The unscaled price of order `i`: negatives, zero, small and the largest decimal(10,2). */
function unscaledPrice(i: number): bigint {
  if (i === 1) return 9_999_999_999n;
  if (i === 2) return -9_999_999_999n;
  if (i === 3) return 0n;
  return BigInt(i * 12_345 - 20_000);
}

/** Order `i` (0-based over the whole topic); `withCoupon` for the version 2 records. */
export function order(i: number, withCoupon: boolean): Order {
  const base: Order = {
    id: 1_000_000_000_000 + i,
    qty: ((i * 7) % 25) - 3,
    item: i === 3 ? 'café ☕ "quoted"' : `item-${i}`,
    paid: i % 2 === 0,
    weight: i * 1.5 + 0.1,
    price: decimalBytes(unscaledPrice(i)),
    // Milliseconds that are not a multiple of 1000, so a reader that rounds to seconds fails.
    at: 1_700_000_000_000 + i * 1_234_567 + (i % 997),
    day: 19_675 + i * 3,
    user: { name: `u${i}`, city: CITIES[i % 3]! },
    tags: i % 3 === 0 ? [] : ['a', `t${i}`],
    counts: i % 4 === 0 ? {} : { clicks: i, views: i * 1_000_000_007 },
    status: STATUSES[i % 3]!,
    note: i % 4 === 1 ? null : `note ${i}`,
  };
  return withCoupon ? { ...base, coupon: i % 2 === 0 ? `C${i}` : null } : base;
}

/** A typed row as every engine's answer is compared: exact texts for decimals, microseconds, dates. */
export interface OrderView {
  readonly offset: number;
  /** kafka.value_schema_id. */
  readonly sid: number | null;
  /** `value` is null: the typed columns rebuild the bytes. */
  readonly noBytes: boolean;
  readonly id: string;
  readonly qty: number;
  readonly item: string;
  readonly paid: boolean;
  readonly weight: number;
  /** Exact decimal text. */
  readonly price: string;
  /** Microseconds since the epoch, as text. */
  readonly atUs: string;
  /** YYYY-MM-DD. */
  readonly day: string;
  /** Never null in what the producer sends (null only where an engine fails to read it). */
  readonly user: { readonly name: string; readonly city: string } | null;
  readonly tags: readonly string[];
  /** Map entries sorted by key, values as text. */
  readonly counts: readonly (readonly [string, string])[];
  readonly status: string;
  readonly note: string | null;
  readonly coupon: string | null;
}

export const isoDay = (days: number): string => new Date(days * DAY_MS).toISOString().slice(0, 10);

/** What the table must show for order `i` at `offset`, decoded with registry id `sid`. */
export function expectedView(i: number, offset: number, sid: number, withCoupon: boolean): OrderView {
  const o = order(i, withCoupon);
  return {
    offset,
    sid,
    noBytes: true,
    id: String(o.id),
    qty: o.qty,
    item: o.item,
    paid: o.paid,
    weight: o.weight,
    price: decimalText(unscaledPrice(i)),
    atUs: String(BigInt(o.at) * 1000n),
    day: isoDay(o.day),
    user: { ...o.user },
    tags: [...o.tags],
    counts: sortedEntries(Object.entries(o.counts)),
    status: o.status,
    note: o.note,
    coupon: o.coupon ?? null,
  };
}

/** Map entries (any engine's form: [k, v] pairs or an object) sorted by key, values as text. */
export function mapEntries(v: unknown): [string, string][] {
  const pairs = Array.isArray(v) ? (v as [unknown, unknown][]) : v instanceof Map ? [...v.entries()] : Object.entries(v as Record<string, unknown>);
  return sortedEntries(pairs.map(([k, x]) => [String(k), x]));
}

function sortedEntries(pairs: readonly (readonly [string, unknown])[]): [string, string][] {
  return pairs.map(([k, x]) => [k, String(x)] as [string, string]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
