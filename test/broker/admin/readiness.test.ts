import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readiness } from '../../../broker/admin/readiness.js';

test('readiness: ready once every declared step is done, not ready again once stopping', () => {
  const r = new Readiness(['a', 'b']);
  assert.deepEqual(r.report(), { status: 'starting', pending: ['a', 'b'], done: [] });
  r.done('b');
  assert.deepEqual(r.report(), { status: 'starting', pending: ['a'], done: ['b'] });
  assert.equal(r.ready, false);
  r.done('a');
  assert.equal(r.ready, true);
  assert.deepEqual(r.report(), { status: 'ready', pending: [], done: ['a', 'b'] });
  assert.throws(() => r.done('c'), /not declared/);
  r.stopping();
  assert.equal(r.ready, false);
  assert.equal(r.report().status, 'stopping');
});
