/**
 * A consumer's read of whole partitions over Floe's load client: each connection fetches its partitions from
 * offset 0 to their ends, one Fetch at a time, and checks that offsets continue from response to response.
 */
import { decodeResponse } from '../../protocol/index.js';
import { nextBatch } from '../../protocol/record-batch/batches.js';
import type { LoadClient } from './load-client.js';
import { FETCH_VERSION, fetchRequest } from './workload.js';

interface FetchResponse {
  errorCode: number;
  responses: { topic: string; partitions: { partitionIndex: number; errorCode: number; highWatermark: bigint; records: Buffer | null }[] }[];
}

export interface FetchAllOptions {
  readonly topic: string;
  /** Each partition's log end offset: where its read stops. */
  readonly ends: readonly bigint[];
  /** Connections of the client, one consumer each; partitions are spread over them. */
  readonly consumers: number;
  readonly partitionMaxBytes: number;
}

/**
 * Each consumer fetches its partitions from offset 0 to their end, one request at a time. Returns the
 * record bytes received, the time, and the size of every response frame per consumer (for a replay).
 */
export async function fetchAll(client: LoadClient, o: FetchAllOptions): Promise<{ bytes: number; ns: number; sizes: number[][] }> {
  const { topic, consumers } = o;
  let bytes = 0;
  let correlationId = 1;
  const sizes: number[][] = [];
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: consumers }, async (_, c) => {
      const mine = o.ends.map((end, p) => ({ partition: p, offset: 0n, end })).filter((x) => x.partition % consumers === c);
      const frameSizes: number[] = [];
      sizes[c] = frameSizes;
      for (;;) {
        const wanted = mine.filter((x) => x.offset < x.end);
        if (wanted.length === 0) break;
        const id = correlationId++;
        const response = await client.request(fetchRequest(id, topic, wanted, o.partitionMaxBytes), id, c);
        frameSizes.push(response.length);
        const body = decodeResponse(1, FETCH_VERSION, response).body as unknown as FetchResponse;
        if (body.errorCode !== 0) throw new Error(`Fetch failed with error ${body.errorCode}`);
        for (const p of body.responses[0]?.partitions ?? []) {
          if (p.errorCode !== 0) throw new Error(`Fetch ${topic}-${p.partitionIndex} failed with error ${p.errorCode}`);
          const records = p.records ?? Buffer.alloc(0);
          const state = mine.find((x) => x.partition === p.partitionIndex);
          if (state === undefined) throw new Error(`unexpected partition ${p.partitionIndex} in the response`);
          // Walk the returned batches: offsets must continue where the last fetch ended.
          let pos = 0;
          for (let b = nextBatch(records, pos); b !== null; b = nextBatch(records, pos)) {
            if (b.baseOffset > state.offset) throw new Error(`${topic}-${p.partitionIndex}: gap, expected offset ${state.offset}, got batch at ${b.baseOffset}`);
            if (b.lastOffset >= state.offset) state.offset = b.lastOffset + 1n;
            pos = b.end;
          }
          if (pos === 0 && state.offset < state.end) throw new Error(`${topic}-${p.partitionIndex}: no complete batch at offset ${state.offset} within ${o.partitionMaxBytes} bytes`);
          bytes += pos;
        }
      }
    }),
  );
  return { bytes, ns: Number(process.hrtime.bigint() - t0), sizes };
}
