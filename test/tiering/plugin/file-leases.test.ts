import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FileLeases } from '../../../tiering/plugin/file-leases.js';

test('a file is in use while any lease on it is held; releases are idempotent', async () => {
  const leases = new FileLeases();
  const a = leases.acquire(['x', 'y', 'x']);
  const b = leases.acquire(['y']);
  assert.ok(leases.inUse('x') && leases.inUse('y'));
  assert.equal(leases.inUse('z'), false);
  a();
  a();
  assert.equal(leases.inUse('x'), false);
  assert.ok(leases.inUse('y'), 'still held by the second lease');
  b();
  assert.equal(leases.size, 0);
  await assert.rejects(leases.with(['w'], async () => {
    assert.ok(leases.inUse('w'));
    throw new Error('read failed');
  }));
  assert.equal(leases.inUse('w'), false, 'released when the read fails too');
});
