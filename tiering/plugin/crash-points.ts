/**
 * Fault injection for crash-safety tests: with `FLOE_TIERING_CRASH_AT=<point>[:<n>]` in the environment, the
 * process kills itself with SIGKILL (no cleanup, like kill -9) the n-th time (default 1st) tiering reaches
 * that point. Just before, it writes `FLOE_TIERING_CRASH <point> <n>` to stderr (synchronously), so a test
 * can tell that the process died where it was told to. Points, in the order one segment meets them:
 *
 *   mid-upload      after the first object of a segment's conversion is stored, before the rest
 *   before-commit   every object of the batch is stored, the partition manifests too; the table commit has
 *                   not started
 *   mid-commit      inside the table commit: the catalog has written the new table metadata file, the
 *                   catalog pointer has not been swapped to it yet (reached through `crashInsideCommit`,
 *                   which wraps the catalog's FileIO). With an external REST catalog: the catalog has
 *                   answered the commit request, Floe has not read the answer (`crashAfterCatalogCommit`,
 *                   which wraps the client's fetch): the commit landed, and Floe does not know it
 *   after-commit    the commit landed; local segments are not deleted yet (the local hand-off comes later,
 *                   on the retention schedule, so this is also "after commit, before local delete")
 *
 * Compaction (iceberg-topic.ts compact) has its own two, around its rewrite commit:
 *
 *   before-compaction-commit   the merged segment's files are stored, the commit (manifest, then table) has
 *                              not started
 *   after-compaction-commit    the rewrite commit landed; the in-memory history is the new one
 *
 * ('mid-commit' is reached inside compaction's commits too, counted with the tiering commits.)
 *
 * The upsert table (latest/latest-table.ts) has one, in its sync after a topic-table operation:
 *
 *   before-upsert-commit       its delete files are stored, its commit has not started (the topic table's
 *                              commit it follows has landed)
 *
 * Unset (production), `crashPoint` is a no-op.
 */
import { writeSync } from 'node:fs';
import type { FileIO } from '../../iceberg/io/file-io.js';

export type CrashPoint = 'mid-upload' | 'before-commit' | 'mid-commit' | 'after-commit' | 'before-compaction-commit' | 'after-compaction-commit' | 'before-upsert-commit';

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

/** A FileIO that reaches the 'mid-upload' crash point after its first completed put. */
export function crashAfterFirstPut(io: FileIO): FileIO {
  let puts = 0;
  return afterEachPut(io, () => {
    if (++puts === 1) crashPoint('mid-upload');
  });
}

/** `<NNNNN>-<uuid>.metadata.json` with NNNNN > 0: a commit's new metadata file (version 0 is the table's creation). */
const COMMIT_METADATA = /\/metadata\/(\d+)-[^/]*\.metadata\.json$/;

/**
 * The catalog's FileIO, reaching the 'mid-commit' crash point right after a commit's new table metadata file is
 * stored (before the catalog pointer is swapped to it). Returns `io` itself unless that point is the target.
 */
export function crashInsideCommit(io: FileIO): FileIO {
  if (target !== 'mid-commit') return io;
  return afterEachPut(io, (location) => {
    if (Number(COMMIT_METADATA.exec(location)?.[1] ?? 0) > 0) crashPoint('mid-commit');
  });
}

/** `io` calling `stored` with the location of each object once its put has completed. */
function afterEachPut(io: FileIO, stored: (location: string) => void): FileIO {
  return new Proxy(io, {
    get(t, prop, receiver) {
      if (prop === 'put') {
        return async (location: string, data: Buffer) => {
          const info = await t.put(location, data);
          stored(location);
          return info;
        };
      }
      const v: unknown = Reflect.get(t, prop, receiver);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(t) : v;
    },
  });
}

/** A REST commit: POST .../namespaces/{ns}/tables/{table} (a create is POST .../namespaces/{ns}/tables). */
const REST_COMMIT = /\/namespaces\/[^/]+\/tables\/[^/?]+$/;

/**
 * The REST catalog client's fetch, reaching the 'mid-commit' crash point once a commit request has been
 * answered, before the client reads the answer. Returns `doFetch` itself unless that point is the target.
 */
export function crashAfterCatalogCommit(doFetch: typeof fetch): typeof fetch {
  if (target !== 'mid-commit') return doFetch;
  return async (input, init) => {
    const res = await doFetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (init?.method === 'POST' && REST_COMMIT.test(new URL(url).pathname) && res.ok) crashPoint('mid-commit');
    return res;
  };
}
