/**
 * Fault injection for the transaction crash tests, as tiering/plugin/crash-points.ts does for tiering: with
 * `FLOE_TXN_CRASH_AT=<point>[:<n>]` in the environment the process SIGKILLs itself (like kill -9) the n-th
 * time (default 1st) the coordinator reaches that point, after writing `FLOE_TXN_CRASH <point> <n>` to
 * stderr. Points, in the order ending a transaction meets them:
 *
 *   after-prepare   PrepareCommit/PrepareAbort is durable; no marker is written yet
 *   mid-markers     the first partition's marker is written, the others are not
 *   after-markers   every marker is written and a commit's offsets are committed; CompleteCommit/CompleteAbort
 *                   is not durable yet
 *
 * Unset (production), `txnCrashPoint` is a no-op.
 */
import { writeSync } from 'node:fs';

export type TxnCrashPoint = 'after-prepare' | 'mid-markers' | 'after-markers';

export const TXN_CRASH_MARKER = 'FLOE_TXN_CRASH';

const spec = process.env['FLOE_TXN_CRASH_AT'];
const [target, nth] = (spec ?? '').split(':');
const limit = nth === undefined || nth === '' ? 1 : Number(nth);
let reached = 0;

export function txnCrashPoint(point: TxnCrashPoint): void {
  if (spec === undefined || target !== point) return;
  reached++;
  if (reached >= limit) {
    writeSync(2, `${TXN_CRASH_MARKER} ${point} ${reached}\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
