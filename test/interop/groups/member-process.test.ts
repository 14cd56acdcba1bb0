import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemberProcess } from './member-process.js';

/** A member whose process only prints the given lines and exits. */
async function member(lines: readonly object[]): Promise<MemberProcess> {
  const script = `for (const l of ${JSON.stringify(lines.map((l) => JSON.stringify(l)))}) process.stdout.write(l + '\\n');`;
  const m = new MemberProcess('m', process.execPath, ['-e', script]);
  await m.exited;
  return m;
}

test('consumed(): a record counts as committed only if the member\'s commit past it came before its next assignment', async () => {
  const m = await member([
    { e: 'assigned', generation: 1, partitions: [0, 1] },
    { e: 'record', p: 0, o: 5, k: 'a' },
    { e: 'commit', p: 0, o: 6 },
    { e: 'record', p: 1, o: 7, k: 'b' },
    { e: 'commit', p: 0, o: 9 }, // another partition's commit does not cover 1:7
    { e: 'record', p: 0, o: 6, k: 'c' },
    { e: 'assigned', generation: 2, partitions: [0] },
    { e: 'commit', p: 0, o: 7 }, // a retried commit acknowledged in the next generation
    { e: 'commit', p: 1, o: 8 },
  ]);
  assert.deepEqual(
    m.consumed().map((c) => [c.partition, c.offset, c.key, c.committed]),
    [
      [0, 5, 'a', true],
      [1, 7, 'b', false],
      [0, 6, 'c', false],
    ],
  );
  assert.ok(m.consumed().every((c) => typeof c.at === 'number'));
});

test('consumed(): a member that prints no commits leaves committed undefined (the victim rule judges it)', async () => {
  const m = await member([{ e: 'record', p: 0, o: 1, k: 'a' }]);
  assert.deepEqual(m.consumed().map((c) => c.committed), [undefined]);
});

test('consumed(): a refused commit or a re-read ends the search for the record\'s commit (a member frozen past its session)', async () => {
  const m = await member([
    { e: 'record', p: 1, o: 8, k: 'a' },
    { e: 'commit_error', error: 'UNKNOWN_MEMBER_ID' },
    { e: 'record', p: 1, o: 8, k: 'a' },
    { e: 'commit', p: 1, o: 9 },
    { e: 'record', p: 2, o: 3, k: 'b' },
    { e: 'record', p: 2, o: 3, k: 'b' },
    { e: 'commit', p: 2, o: 4 },
  ]);
  assert.deepEqual(m.consumed().map((c) => [c.partition, c.offset, c.committed]), [
    [1, 8, false],
    [1, 8, true],
    [2, 3, false],
    [2, 3, true],
  ]);
});
