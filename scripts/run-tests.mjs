#!/usr/bin/env node
// Runs every compiled test file under dist/test with node:test.
// Node 20's --test takes no globs, so the files are listed here. Extra arguments filter by path substring.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = walk('dist/test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// The output is passed through as it comes, and every failure (its TAP line and YAML block: the error and
// where) is printed again at the end: a long run's log is often read from its tail only.
// The JVMs the tests start (Kafka's tools and Java client, Spark, Trino, the Iceberg REST catalog, Nessie)
// each live for seconds to a minute: C1 alone starts them and runs their short work sooner than C1 then C2,
// and leaves more of the 2 cores to the test beside them (Trino's test alone: 49 s against 63 s, 71 against
// 90 CPU s; the 69 tests of test/interop together 1,233 s against 1,297 in a full run, the kill loops
// 12-33 s shorter each). A JAVA_TOOL_OPTIONS of the caller's own is kept.
const env = { ...process.env, JAVA_TOOL_OPTIONS: process.env.JAVA_TOOL_OPTIONS ?? '-XX:TieredStopAtLevel=1' };
// Three files at a time on the 2 cores: with two, the run used about 1.6 of them (much of a file's time is
// waits: for brokers it killed, for retention and commit intervals), and a third file fills some of it.
// Clean-clone runs in one session: 24m58s-27m02s with three against 27m43s with two; CI's limit is 30 minutes.
const child = spawn(process.execPath, ['--test', '--test-concurrency=3', ...files], { stdio: ['inherit', 'pipe', 'inherit'], env });
const failures = [];
let open; // the failure whose block is being read: { indent, lines }
const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
lines.on('line', (line) => {
  process.stdout.write(`${line}\n`);
  // A new failure starts a block even if the last one's end never came (a test file that died mid-block).
  const m = /^(\s*)not ok \d+ - /.exec(line);
  if (m) {
    open = { indent: m[1], lines: [line] };
    failures.push(open);
  } else if (open !== undefined) {
    if (open.lines.length < 60) open.lines.push(line);
    if (line === `${open.indent}  ...`) open = undefined;
  }
});
const [code, signal] = await once(child, 'close');
if (failures.length > 0) {
  process.stdout.write(`# ${failures.length} failed (subtests and the tests holding them), repeated from above:\n`);
  for (const f of failures) for (const l of f.lines) process.stdout.write(`# ${l}\n`);
}
process.exit(code ?? (signal ? 1 : 0));
