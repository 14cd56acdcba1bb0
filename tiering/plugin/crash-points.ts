/**
 * Fault injection for crash-safety tests: with `FLOE_TIERING_CRASH_AT=<point>[:<n>]` in the environment, the
 * process kills itself with SIGKILL (no cleanup, like kill -9) the n-th time (default 1st) tiering reaches
 * that point. Just before, it writes `FLOE_TIERING_CRASH <point> <n>` to stderr (synchronously), so a test
 * can tell that the process died where it was told to. Points, in the order one segment meets them:
 *
 *   mid-upload      after the first object of a segment's conversion is stored, before the rest
 *   before-commit   every object of the batch is stored, the partition manifests too; the table commit has
 *                   not started
 *   after-commit    the commit landed; local segments are not deleted yet (the local hand-off comes later,
 *                   on the retention schedule, so this is also "after commit, before local delete")
 *
 * Unset (production), `crashPoint` is a no-op.
 */
import { writeSync } from 'node:fs';

export type CrashPoint = 'mid-upload' | 'before-commit' | 'after-commit';

export const CRASH_MARKER = 'FLOE_TIERING_CRASH';

const spec = process.env['FLOE_TIERING_CRASH_AT'];
const [target, nth] = (spec ?? '').split(':');
const limit = nth === undefined || nth === '' ? 1 : Number(nth);
let reached = 0;

export function crashPoint(point: CrashPoint): void {
  if (spec === undefined || target !== point) return;
  reached++;
  if (reached >= limit) {
    writeSync(2, `${CRASH_MARKER} ${point} ${reached}\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
