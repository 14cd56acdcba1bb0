/**
 * The FileIO contract: one suite, run by every backend's test file against a real store. A case is skipped
 * only when the backend reports that it lacks the capability the case needs, and the skip says why.
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FileIOError, type FileIO, type FileIOErrorCode, type ObjectInfo } from '../../../iceberg/io/file-io.js';

export interface ContractSubject {
  readonly io: FileIO;
  /** A location prefix ending in "/", fresh for this test, under which it may write anything. */
  readonly base: string;
}

export interface ContractOptions {
  /** Creates the store for one test; registers its own cleanup with `t.after`. */
  readonly setup: (t: TestContext) => Promise<ContractSubject>;
  /** A well-formed location this backend does not serve (another scheme); must be refused INVALID_LOCATION. */
  readonly foreignLocation: string;
  /** Bytes for the large-object case; on S3 the setup must make this exceed the multipart threshold. */
  readonly largeObjectBytes: number;
  /** Objects in the many-objects listing case; on S3 the setup must make this exceed one list page. */
  readonly manyObjects: number;
}

export async function assertFileIOError(promise: Promise<unknown>, code: FileIOErrorCode): Promise<FileIOError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FileIOError, `expected FileIOError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    return err;
  }
  assert.fail(`expected FileIOError ${code}, but the call succeeded`);
}

async function collect(iter: AsyncIterable<ObjectInfo>): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const info of iter) out.push(info);
  return out;
}

/** Every byte value, then random bytes: catches text decoding, newline or encoding mangling. */
function binary(size: number): Buffer {
  const buf = randomBytes(size);
  for (let i = 0; i < Math.min(256, size); i++) buf[i] = i;
  return buf;
}

/** Returns the reason to skip when the store cannot do atomic conditional writes, or undefined. */
async function conditionalWritesMissing(io: FileIO, base: string): Promise<string | undefined> {
  const caps = io.capabilities ? await io.capabilities(base) : { conditionalWrites: true };
  return caps.conditionalWrites
    ? undefined
    : 'capability conditionalWrites=false: this store does not honour If-None-Match/If-Match, so the backend refuses conditional writes';
}

export function fileIOContract(name: string, opts: ContractOptions): void {
  describe(`FileIO contract: ${name}`, () => {
    test('put then get, head and list return the same bytes, size and etag', async (t) => {
      const { io, base } = await opts.setup(t);
      const data = binary(4096);
      const loc = `${base}obj.bin`;
      const put = await io.put(loc, data);
      assert.equal(put.location, loc);
      assert.equal(put.size, data.length);
      assert.ok(put.etag.length > 0);
      assert.deepEqual(await io.get(loc), data);
      const head = await io.head(loc);
      assert.ok(head);
      assert.equal(head.location, loc);
      assert.equal(head.size, data.length);
      assert.equal(head.etag, put.etag);
      assert.ok(head.lastModified instanceof Date && !Number.isNaN(head.lastModified.getTime()));
      const listed = await collect(io.list(base));
      assert.deepEqual(
        listed.map((i) => [i.location, i.size, i.etag]),
        [[loc, data.length, put.etag]],
      );
    });

    test('an empty object is stored and read back as zero bytes', async (t) => {
      const { io, base } = await opts.setup(t);
      const loc = `${base}empty`;
      const put = await io.put(loc, Buffer.alloc(0));
      assert.equal(put.size, 0);
      assert.equal((await io.get(loc)).length, 0);
      assert.equal((await io.head(loc))?.size, 0);
      // Not getRange here: s3rver breaks the connection on a range read of an empty object (S3 answers 416).
    });

    test('getRange reads inside, up to the end, across the end and past the end', async (t) => {
      const { io, base } = await opts.setup(t);
      const data = binary(1000);
      const loc = `${base}range.bin`;
      await io.put(loc, data);
      assert.deepEqual(await io.getRange(loc, 0, 10), data.subarray(0, 10));
      assert.deepEqual(await io.getRange(loc, 123, 456), data.subarray(123, 579));
      assert.deepEqual(await io.getRange(loc, 990, 10), data.subarray(990));
      assert.deepEqual(await io.getRange(loc, 995, 100), data.subarray(995), 'a range across the end is cut short');
      assert.equal((await io.getRange(loc, 1000, 5)).length, 0, 'a range starting at the end is empty');
      assert.equal((await io.getRange(loc, 5000, 5)).length, 0, 'a range past the end is empty');
      assert.equal((await io.getRange(loc, 10, 0)).length, 0, 'a zero-length range is empty');
    });

    test('put replaces an object, with a new etag', async (t) => {
      const { io, base } = await opts.setup(t);
      const loc = `${base}replace`;
      const first = await io.put(loc, Buffer.from('first version'));
      const second = await io.put(loc, Buffer.from('second, longer version'));
      assert.notEqual(second.etag, first.etag);
      assert.equal((await io.get(loc)).toString(), 'second, longer version');
      assert.equal((await io.head(loc))?.etag, second.etag);
      assert.equal((await collect(io.list(base))).length, 1, 'replacing leaves exactly one object');
    });

    test('missing objects: get and getRange throw NOT_FOUND, head is undefined', async (t) => {
      const { io, base } = await opts.setup(t);
      const loc = `${base}nothing/here`;
      await assertFileIOError(io.get(loc), 'NOT_FOUND');
      await assertFileIOError(io.getRange(loc, 0, 10), 'NOT_FOUND');
      await assertFileIOError(io.getRange(loc, 0, 0), 'NOT_FOUND');
      assert.equal(await io.head(loc), undefined);
      assert.deepEqual(await collect(io.list(`${base}nothing/`)), []);
    });

    test('delete removes an object and is idempotent', async (t) => {
      const { io, base } = await opts.setup(t);
      const loc = `${base}dir/victim`;
      const keep = `${base}dir/keeper`;
      await io.put(loc, Buffer.from('x'));
      await io.put(keep, Buffer.from('y'));
      await io.delete(loc);
      assert.equal(await io.head(loc), undefined);
      await assertFileIOError(io.get(loc), 'NOT_FOUND');
      await io.delete(loc);
      await io.delete(`${base}never/existed`);
      assert.deepEqual(
        (await collect(io.list(base))).map((i) => i.location),
        [keep],
      );
    });

    test('list is recursive, ordered by location, and filters by any string prefix', async (t) => {
      const { io, base } = await opts.setup(t);
      // Nested "folders" sort by their full key: 'x/a/...' < 'x/a0' < 'x/ab' because '/' < '0' < 'b'.
      // (Siblings such as 'x/a-c' and 'x/a.txt', which sort before 'x/a/', are checked in local.test.ts only:
      // s3rver walks its folders and returns them after 'x/a/...', unlike S3.)
      const keys = ['x/b', 'x/a/c/d', 'x/ab', 'x/a0', 'x/a/b', 'y/z'];
      for (const k of keys) await io.put(`${base}${k}`, Buffer.from(k));
      const names = async (p: string): Promise<string[]> =>
        (await collect(io.list(`${base}${p}`))).map((i) => i.location.slice(base.length));
      assert.deepEqual(await names(''), ['x/a/b', 'x/a/c/d', 'x/a0', 'x/ab', 'x/b', 'y/z']);
      assert.deepEqual(await names('x/a'), ['x/a/b', 'x/a/c/d', 'x/a0', 'x/ab']);
      assert.deepEqual(await names('x/a/'), ['x/a/b', 'x/a/c/d']);
      assert.deepEqual(await names('x/a/c'), ['x/a/c/d']);
      assert.deepEqual(await names('x/a/c/d'), ['x/a/c/d']);
      assert.deepEqual(await names('x/zz'), []);
      assert.deepEqual(await names('q/'), []);
      const all = await collect(io.list(base));
      for (const info of all) {
        const head = await io.head(info.location);
        assert.equal(info.etag, head?.etag, `list and head agree on the etag of ${info.location}`);
        assert.equal(info.size, Buffer.byteLength(info.location.slice(base.length)));
      }
    });

    test('list returns every object when there are more than one page of them', async (t) => {
      const { io, base } = await opts.setup(t);
      const expected: string[] = [];
      for (let i = 0; i < opts.manyObjects; i++) expected.push(`${base}many/${String(i).padStart(4, '0')}`);
      await Promise.all(expected.map((loc) => io.put(loc, Buffer.from(loc))));
      assert.deepEqual(
        (await collect(io.list(`${base}many/`))).map((i) => i.location),
        expected,
      );
    });

    test('a large object round-trips byte for byte', async (t) => {
      const { io, base } = await opts.setup(t);
      const data = binary(opts.largeObjectBytes);
      const loc = `${base}large.bin`;
      const put = await io.put(loc, data);
      assert.equal(put.size, data.length);
      const back = await io.get(loc);
      assert.equal(back.length, data.length);
      assert.ok(back.equals(data), 'large object content differs');
      const head = await io.head(loc);
      assert.equal(head?.etag, put.etag);
      assert.equal(head?.size, data.length);
      const mid = Math.floor(data.length / 2);
      assert.ok((await io.getRange(loc, mid - 1000, 2000)).equals(data.subarray(mid - 1000, mid + 1000)));
    });

    test('a location of another scheme is refused with INVALID_LOCATION', async (t) => {
      const { io } = await opts.setup(t);
      await assertFileIOError(io.get(opts.foreignLocation), 'INVALID_LOCATION');
      await assertFileIOError(io.put(opts.foreignLocation, Buffer.from('x')), 'INVALID_LOCATION');
    });

    test('without conditional writes, putIfAbsent and putIfMatch refuse rather than pretend', async (t) => {
      const { io, base } = await opts.setup(t);
      if ((await conditionalWritesMissing(io, base)) === undefined) {
        t.skip('capability conditionalWrites=true: this store has atomic conditional writes, so there is no refusal to check');
        return;
      }
      const loc = `${base}cond`;
      await assertFileIOError(io.putIfAbsent(loc, Buffer.from('a')), 'UNSUPPORTED');
      const put = await io.put(loc, Buffer.from('b'));
      await assertFileIOError(io.putIfMatch(loc, Buffer.from('c'), put.etag), 'UNSUPPORTED');
      assert.equal((await io.get(loc)).toString(), 'b', 'a refused conditional write wrote nothing');
    });

    test('putIfAbsent creates once; a second call fails ALREADY_EXISTS and changes nothing', async (t) => {
      const { io, base } = await opts.setup(t);
      const reason = await conditionalWritesMissing(io, base);
      if (reason !== undefined) return void t.skip(reason);
      const loc = `${base}meta/v1.json`;
      const first = await io.putIfAbsent(loc, Buffer.from('one'));
      assert.equal(first.size, 3);
      assert.equal((await io.head(loc))?.etag, first.etag);
      await assertFileIOError(io.putIfAbsent(loc, Buffer.from('two')), 'ALREADY_EXISTS');
      assert.equal((await io.get(loc)).toString(), 'one');
      await io.delete(loc);
      await io.putIfAbsent(loc, Buffer.from('three'));
      assert.equal((await io.get(loc)).toString(), 'three', 'after delete the name is free again');
    });

    test('putIfMatch succeeds with the current etag and fails PRECONDITION_FAILED with a stale or missing one', async (t) => {
      const { io, base } = await opts.setup(t);
      const reason = await conditionalWritesMissing(io, base);
      if (reason !== undefined) return void t.skip(reason);
      const loc = `${base}pointer`;
      const v1 = await io.put(loc, Buffer.from('v1'));
      const v2 = await io.putIfMatch(loc, Buffer.from('v2'), v1.etag);
      assert.notEqual(v2.etag, v1.etag);
      assert.equal((await io.head(loc))?.etag, v2.etag);
      await assertFileIOError(io.putIfMatch(loc, Buffer.from('stale'), v1.etag), 'PRECONDITION_FAILED');
      assert.equal((await io.get(loc)).toString(), 'v2');
      // Same size as v2: the etag must still tell the versions apart.
      const v3 = await io.putIfMatch(loc, Buffer.from('v3'), v2.etag);
      await assertFileIOError(io.putIfMatch(loc, Buffer.from('v4'), v2.etag), 'PRECONDITION_FAILED');
      assert.equal((await io.head(loc))?.etag, v3.etag);
      await assertFileIOError(io.putIfMatch(`${base}absent`, Buffer.from('x'), v3.etag), 'PRECONDITION_FAILED');
      assert.equal(await io.head(`${base}absent`), undefined);
    });

    test('concurrent putIfAbsent: exactly one writer wins and its bytes are stored', async (t) => {
      const { io, base } = await opts.setup(t);
      const reason = await conditionalWritesMissing(io, base);
      if (reason !== undefined) return void t.skip(reason);
      for (let round = 0; round < 3; round++) {
        const loc = `${base}race-${round}`;
        const results = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => io.putIfAbsent(loc, Buffer.from(`writer ${i} `.repeat(100 + i)))),
        );
        const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        assert.equal(winners.length, 1, `round ${round}: exactly one winner, got ${winners.length}`);
        for (const r of results) {
          if (r.status === 'rejected') {
            assert.ok(r.reason instanceof FileIOError && r.reason.code === 'ALREADY_EXISTS', String(r.reason));
          }
        }
        const w = winners[0] ?? -1;
        assert.equal((await io.get(loc)).toString(), `writer ${w} `.repeat(100 + w));
      }
    });

    test('concurrent putIfMatch on the same etag: exactly one writer wins', async (t) => {
      const { io, base } = await opts.setup(t);
      const reason = await conditionalWritesMissing(io, base);
      if (reason !== undefined) return void t.skip(reason);
      const loc = `${base}cas`;
      let current = await io.put(loc, Buffer.from('start'));
      for (let round = 0; round < 3; round++) {
        const etag = current.etag;
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) => io.putIfMatch(loc, Buffer.from(`round ${round} writer ${i}`), etag)),
        );
        const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        assert.equal(winners.length, 1, `round ${round}: exactly one winner, got ${winners.length}`);
        for (const r of results) {
          if (r.status === 'rejected') {
            assert.ok(r.reason instanceof FileIOError && r.reason.code === 'PRECONDITION_FAILED', String(r.reason));
          }
        }
        const winner = winners[0];
        assert.ok(winner);
        assert.equal((await io.head(loc))?.etag, winner.etag);
        current = winner;
      }
    });
  });
}
