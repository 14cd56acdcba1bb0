// Child process for partition-log-kill.test.ts: opens the log (recovering it), then appends forever,
// printing "<offset> <id>" after each acknowledged append, until the parent kills it with SIGKILL.
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { makeBatch } from './batches.js';

const [dir, cycle] = process.argv.slice(2);
if (dir === undefined || cycle === undefined) throw new Error('usage: append-child <dir> <cycle>');
const log = await PartitionLog.open({ dir, config: { 'segment.bytes': 64 * 1024, 'index.interval.bytes': 512 } });
process.stdout.write(`ready ${log.logEndOffset}\n`);
for (let i = 0; ; i++) {
  const id = `${cycle}:${i}`;
  const res = await log.append(makeBatch({ values: [id, `${id}:b`, 'x'.repeat(i % 700)] }));
  process.stdout.write(`${res.baseOffset} ${id}\n`);
}
