import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalFileIO } from '../../../iceberg/io/local.js';
import { assertFileIOError, fileIOContract } from './contract.js';

async function tempRoot(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-local-io-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

fileIOContract('local folder', {
  setup: async (t) => {
    const root = await tempRoot(t);
    const io = new LocalFileIO({ root });
    t.after(() => io.close());
    return { io, base: `file://${root}/warehouse/` };
  },
  foreignLocation: 's3://bucket/key',
  largeObjectBytes: 20 * 1024 * 1024 + 17,
  manyObjects: 50,
});

test('locations outside the root, with . or .. segments, or reserved names are refused', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root: join(root, 'wh') });
  await writeFile(join(root, 'secret'), 'do not read');
  const bad = [
    `file://${root}/wh/../secret`,
    `file://${root}/wh/a/../../secret`,
    `file://${root}/wh/./a`,
    `file://${root}/wh//a`,
    `file://${root}/secret`,
    `file://${root}/wh2/x`,
    `file://${root}/wh`,
    `file://${root}/wh/dir/`,
    `file://otherhost${root}/wh/a`,
    `${root}/wh/a`,
    `file://${root}/wh/a.floe-lock`,
    `file://${root}/wh/.floe-tmp-1-abc`,
  ];
  for (const loc of bad) {
    await assertFileIOError(io.get(loc), 'INVALID_LOCATION');
    await assertFileIOError(io.put(loc, Buffer.from('x')), 'INVALID_LOCATION');
    await assertFileIOError(io.delete(loc), 'INVALID_LOCATION');
  }
  await assertFileIOError((async () => { for await (const _ of io.list(`file://${root}/other/`)) break; })(), 'INVALID_LOCATION');
  await assertFileIOError((async () => { for await (const _ of io.list(`file://${root}/wh/../`)) break; })(), 'INVALID_LOCATION');
  assert.deepEqual(await readdir(root), ['secret'], 'nothing was created outside the root');
});

test('list orders by UTF-8 bytes of the whole location, as S3 does, not folder by folder', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root });
  // '-' (2d) < '.' (2e) < '/' (2f) < '0' (30): 'a-c' and 'a.txt' come before everything under 'a/'.
  for (const k of ['x/b', 'x/a/c/d', 'x/ab', 'x/a-c', 'x/a0', 'x/a/b', 'x/a.txt', 'x/é', 'x/z']) {
    await io.put(`file://${root}/${k}`, Buffer.from(k));
  }
  const names: string[] = [];
  for await (const info of io.list(`file://${root}/x/a`)) names.push(info.location.slice(root.length + 10));
  assert.deepEqual(names, ['a-c', 'a.txt', 'a/b', 'a/c/d', 'a0', 'ab']);
  const all: string[] = [];
  for await (const info of io.list(`file://${root}/`)) all.push(info.location.slice(root.length + 10));
  assert.deepEqual(all, ['a-c', 'a.txt', 'a/b', 'a/c/d', 'a0', 'ab', 'b', 'z', 'é']);
});

test('a range read of an empty object is empty', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root });
  await io.put(`file://${root}/empty`, Buffer.alloc(0));
  assert.equal((await io.getRange(`file://${root}/empty`, 0, 10)).length, 0);
});

test('Hadoop-style file:/path locations name the same objects as file:///path', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root: `file://${root}` });
  const put = await io.put(`file:${root}/a/b.json`, Buffer.from('{}'));
  assert.equal((await io.head(`file://${root}/a/b.json`))?.etag, put.etag);
});

test('an object and a folder cannot share a name on disk: refused with INVALID_LOCATION', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root });
  await io.put(`file://${root}/a/b`, Buffer.from('x'));
  await assertFileIOError(io.put(`file://${root}/a`, Buffer.from('y')), 'INVALID_LOCATION');
  await assertFileIOError(io.put(`file://${root}/a/b/c`, Buffer.from('y')), 'INVALID_LOCATION');
  await assertFileIOError(io.get(`file://${root}/a`), 'NOT_FOUND');
  assert.equal(await io.head(`file://${root}/a`), undefined);
  assert.deepEqual(await readdir(join(root, 'a')), ['b'], 'failed writes leave no temp or lock files');
});

test('temp and lock files left by a crash are invisible to list and head', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root });
  await io.put(`file://${root}/t/real`, Buffer.from('x'));
  await writeFile(join(root, 't', '.floe-tmp-99999-deadbeef'), 'half written');
  await writeFile(join(root, 't', 'real.floe-lock'), '{}');
  const listed: string[] = [];
  for await (const info of io.list(`file://${root}/`)) listed.push(info.location);
  assert.deepEqual(listed, [`file://${root}/t/real`]);
});

test('an etag never repeats after delete and re-create with the same size (no A-B-A)', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root });
  const loc = `file://${root}/aba`;
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const info = await io.put(loc, Buffer.from('same-size'));
    assert.ok(!seen.has(info.etag), `etag ${info.etag} repeated at iteration ${i}`);
    seen.add(info.etag);
    if (i % 2 === 0) await io.delete(loc);
  }
});

test('a lock left by a dead process on this host is broken at once', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root, staleLockMs: 600_000, lockWaitMs: 30_000 });
  const loc = `file://${root}/locked`;
  await io.put(loc, Buffer.from('v1'));
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const deadPid = Number(dead.stdout);
  assert.ok(deadPid > 0);
  await writeFile(join(root, 'locked.floe-lock'), JSON.stringify({ pid: deadPid, host: hostname(), token: 'dead' }));
  const info = await io.put(loc, Buffer.from('v2'));
  assert.equal((await io.get(loc)).toString(), 'v2');
  assert.equal((await io.head(loc))?.etag, info.etag);
  assert.deepEqual(await readdir(root), ['locked'], 'the stale lock and the break marker are gone');
});

test('a live lock blocks writers until lockWaitMs, then fails IO_ERROR; an aged one is broken', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root, staleLockMs: 60_000, lockWaitMs: 200 });
  const loc = `file://${root}/busy`;
  const lockFile = join(root, 'busy.floe-lock');
  await writeFile(lockFile, JSON.stringify({ pid: process.pid, host: hostname(), token: 'alive' }));
  const err = await assertFileIOError(io.put(loc, Buffer.from('x')), 'IO_ERROR');
  assert.match(err.message, /locked/);
  await assertFileIOError(io.delete(loc), 'IO_ERROR');
  assert.equal(await io.head(loc), undefined, 'nothing was written while the lock was held');
  const old = new Date(Date.now() - 120_000);
  await utimes(lockFile, old, old);
  await io.put(loc, Buffer.from('after'));
  assert.equal((await io.get(loc)).toString(), 'after');
});

interface ChildReply {
  readonly round?: number;
  readonly id: string;
  readonly ok?: boolean;
  readonly code?: string;
  readonly ready?: boolean;
}

function startChild(root: string, id: string): { child: ChildProcess; replies: ChildReply[]; wait: (n: number) => Promise<void> } {
  const here = fileURLToPath(import.meta.url);
  const compiled = here.endsWith('.js');
  const script = join(here, '..', compiled ? 'local-race-child.js' : 'local-race-child.ts');
  const child = fork(script, [root, id], { execArgv: compiled ? [] : ['--import', 'tsx'], stdio: 'inherit' });
  const replies: ChildReply[] = [];
  let notify: (() => void) | undefined;
  let exited: ((err: Error) => void) | undefined;
  child.on('message', (m: ChildReply) => {
    replies.push(m);
    notify?.();
  });
  child.on('exit', (code) => exited?.(new Error(`child ${id} exited with ${code}`)));
  const wait = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (replies.length >= n) resolve();
      };
      notify = check;
      exited = reject;
      check();
    });
  return { child, replies, wait };
}

test('across processes, exactly one of 4 racing writers wins each putIfAbsent and putIfMatch round', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root });
  const children = ['a', 'b', 'c', 'd'].map((id) => startChild(root, id));
  t.after(() => {
    for (const c of children) c.child.kill();
  });
  await Promise.all(children.map((c) => c.wait(1)));
  const rounds = 12;
  for (let round = 0; round < rounds; round++) {
    const mode = round % 2 === 0 ? 'absent' : 'match';
    const location = `file://${root}/race/${round}`;
    const etag = mode === 'match' ? (await io.put(location, Buffer.from('base'))).etag : undefined;
    for (const c of children) c.child.send({ round, location, mode, etag });
    await Promise.all(children.map((c) => c.wait(round + 2)));
    const replies = children.map((c) => c.replies[round + 1]);
    const winners = replies.filter((r) => r?.ok === true);
    assert.equal(winners.length, 1, `round ${round} (${mode}): ${JSON.stringify(replies)}`);
    const loserCode = mode === 'absent' ? 'ALREADY_EXISTS' : 'PRECONDITION_FAILED';
    for (const r of replies) if (r?.ok === false) assert.equal(r.code, loserCode);
    const content = (await io.get(location)).toString();
    assert.match(content, new RegExp(`^child ${winners[0]?.id} round ${round} `));
  }
  for (const c of children) c.child.send('exit');
  const entries = await readdir(join(root, 'race'));
  assert.deepEqual(entries.filter((e) => e.includes('.floe-')), [], 'no temp or lock files remain');
});

test('range reads through kept read handles see every overwrite and delete, by this or another FileIO', async (t) => {
  const root = await tempRoot(t);
  const io = new LocalFileIO({ root, readHandles: 2 });
  const other = new LocalFileIO({ root });
  t.after(() => Promise.all([io.close(), other.close()]));
  const loc = `file://${root}/wh/data.bin`;
  const version = (n: number, size: number): Buffer => Buffer.alloc(size, n);
  await io.put(loc, version(1, 100));
  assert.deepEqual(await io.getRange(loc, 10, 20), version(1, 20));
  await io.put(loc, version(2, 100));
  assert.deepEqual(await io.getRange(loc, 10, 20), version(2, 20), 'own put replaces the kept handle');
  await other.put(loc, version(3, 50));
  assert.deepEqual(await io.getRange(loc, 40, 20), version(3, 10), "another FileIO's put is seen, with its size");
  await other.delete(loc);
  await assertFileIOError(io.getRange(loc, 0, 10), 'NOT_FOUND');
  await other.putIfAbsent(loc, version(4, 30));
  assert.deepEqual(await io.getRange(loc, 0, 30), version(4, 30), 'a new object at a deleted location is read, not the old one');
  // More files than handles: the least recently used is closed, reads still see the right bytes.
  const locs = [0, 1, 2, 3].map((i) => `file://${root}/wh/f${i}`);
  for (const [i, l] of locs.entries()) await io.put(l, version(10 + i, 64));
  for (let round = 0; round < 3; round++) {
    const got = await Promise.all(locs.map((l) => io.getRange(l, 8, 8)));
    got.forEach((b, i) => assert.deepEqual(b, version(10 + i, 8)));
  }
  await io.close();
  assert.deepEqual(await io.getRange(locs[1]!, 0, 4), version(11, 4), 'a closed FileIO still reads, opening the file each time');
});
