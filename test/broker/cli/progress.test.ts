// The progress line of long floe operations: drawn on stderr only when it is a terminal, redrawn in place
// with the steps done, bytes, rate and ETA, and ended with a newline; nothing at all elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Progress } from '../../../broker/cli/progress.js';

function io(tty: boolean) {
  const err: string[] = [];
  const out: string[] = [];
  return { err, out, io: { stdout: (s: string) => out.push(s), stderr: (s: string) => err.push(s), tty, env: {} } };
}

test('on a terminal the line shows steps, bytes, rate and ETA, redrawn in place', () => {
  const t = io(true);
  const p = new Progress(t.io, 'compacting kafka.orders', 4, 'partitions');
  p.tick(3 * 1024 * 1024);
  p.tick(6 * 1024 * 1024);
  p.done();
  assert.equal(t.err.length, 4, 'drawn at start, after each step, and ended');
  assert.match(t.err[0] ?? '', /^\rcompacting kafka\.orders \[\.{20}\] 0\/4 partitions, 0\.0 MiB read, [\d.]+ MiB\/s, ETA \?\u001b\[K$/);
  assert.match(t.err[2] ?? '', /^\rcompacting kafka\.orders \[#{10}\.{10}\] 2\/4 partitions, 6\.0 MiB read, [\d.]+ MiB\/s, ETA \d+ s\u001b\[K$/);
  assert.equal(t.err[3], '\n');
  assert.deepEqual(t.out, [], 'the summary is the command\'s to print');
});

test('elsewhere (pipes, CI) nothing is drawn', () => {
  const t = io(false);
  const p = new Progress(t.io, 'compacting', 2, 'partitions');
  p.tick(1);
  p.tick(2);
  p.done();
  assert.deepEqual(t.err, []);
  assert.ok(p.seconds() >= 0);
});
