/** The benchmark segment shared by the tiering benches: Kafka-like JSON events in producer-sized batches. */
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../protocol/record-batch/records.js';
import type { CompressionType } from '../../protocol/record-batch/compression.js';

/** Pseudo-random text, so values compress about as much as real JSON events (not 20x like repeated bytes). */
function pad(i: number): string {
  let x = (i * 2654435761) >>> 0;
  let out = '';
  while (out.length < 400) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += x.toString(36);
  }
  return out.slice(0, 400);
}

/**
 * What the values look like:
 * - `text`: JSON events whose 400-character `pad` is pseudo-random base-36 text: zstd gets ~1.8x out of them,
 *   the hard case (every byte costs compression work and little is saved);
 * - `json`: JSON events with fields drawn from small vocabularies, as application events tend to be: zstd
 *   gets ~5-8x, close to the ~530 B events of shared/measurements.md (7.6x).
 */
export type ValueShape = 'text' | 'json';

const EVENTS = ['page_view', 'click', 'add_to_cart', 'checkout', 'login', 'logout', 'search', 'purchase'];
const PAGES = ['/', '/products', '/products/42', '/cart', '/checkout', '/account', '/search?q=shoes', '/help'];
const AGENTS = ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) Safari/605.1.15', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) Mobile/15E148'];

function event(i: number, shape: ValueShape): Buffer {
  if (shape === 'text') return Buffer.from(JSON.stringify({ id: i, user: `user-${i % 1000}`, ts: 1_700_000_000_000 + i, pad: pad(i), n: Math.sin(i) }));
  const x = (i * 2654435761) >>> 0;
  return Buffer.from(
    JSON.stringify({
      id: i,
      event: EVENTS[x % EVENTS.length],
      user: { id: `user-${x % 5000}`, plan: x % 7 === 0 ? 'pro' : 'free', country: ['DE', 'FR', 'US', 'JP', 'BR'][x % 5] },
      page: PAGES[(x >>> 3) % PAGES.length],
      referrer: PAGES[(x >>> 7) % PAGES.length],
      agent: AGENTS[(x >>> 11) % AGENTS.length],
      ts: 1_700_000_000_000 + i * 13,
      session: `s-${(x >>> 5) % 20000}`,
      cart: { items: x % 4, total: Math.round((x % 10000) * 1.37) / 100, currency: 'EUR' },
      flags: { beta: x % 3 === 0, consent: true },
    }),
  );
}

/** ~540-byte JSON events with a key and two headers, in 64 KiB batches (offsets from 0), as a producer sends them. */
export function buildSegment(mb: number, compression: CompressionType = 'zstd', shape: ValueShape = 'text'): Buffer {
  const out: Buffer[] = [];
  let total = 0;
  let offset = 0n;
  let i = 0;
  while (total < mb * 1024 * 1024) {
    const records: RecordInput[] = [];
    let size = 0;
    while (size < 64 * 1024) {
      const value = event(i, shape);
      records.push({ key: Buffer.from(`key-${i % 5000}`), value, timestampDelta: records.length, headers: [{ key: 'trace-id', value: Buffer.from(`t-${i}`) }, { key: 'source', value: Buffer.from('bench') }] });
      size += value.length + 40;
      i++;
    }
    const b = encodeRecordBatch({ baseOffset: offset, baseTimestamp: 1_700_000_000_000n + BigInt(i), compression, compressionLevel: 1, producerId: 1n, producerEpoch: 0, baseSequence: Number(offset), records });
    offset += BigInt(records.length);
    total += b.length;
    out.push(b);
  }
  return Buffer.concat(out);
}
