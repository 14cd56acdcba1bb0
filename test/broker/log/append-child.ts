// Child process for partition-log-kill.test.ts: opens the log (recovering it), then appends forever from eight
// lanes at once (so appends are written in groups), small batches and every 16th one large, printing
// "<offset> <id>" after each acknowledged append, until the parent kills it with SIGKILL.
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { makeBatch } from './batches.js';

const LARGE_VALUE_BYTES = 256 * 1024;
const [dir, cycle] = process.argv.slice(2);
if (dir === undefined || cycle === undefined) throw new Error('usage: append-child <dir> <cycle>');
const log = await PartitionLog.open({ dir, config: { 'segment.bytes': 1024 * 1024, 'index.interval.bytes': 512 } });
process.stdout.write(`ready ${log.logEndOffset}\n`);
let next = 0;
const lane = async (): Promise<never> => {
  for (;;) {
    const i = next++;
    const id = `${cycle}:${i}`;
    const res = await log.append(makeBatch({ values: [id, `${id}:b`, 'x'.repeat(i % 16 === 15 ? LARGE_VALUE_BYTES : i % 700)] }));
    process.stdout.write(`${res.baseOffset} ${id}\n`);
  }
};
await Promise.all(Array.from({ length: 8 }, lane));
