import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FetchWaiters } from '../../../broker/fetch/fetch-waiters.js';
import { fetchContext } from '../../../broker/fetch/fetch-session.js';
import { checkCurrentLeaderEpoch } from '../../../broker/fetch/leader-epoch.js';
import { ErrorCode } from '../../../protocol/error-codes.js';

test('a waiter wakes when any of its keys is notified, and only then', async () => {
  const waiters = new FetchWaiters();
  const a = {};
  const b = {};
  const other = {};
  let woke: string | undefined;
  const waiting = waiters.wait([a, b], 60_000).then((r) => (woke = r));
  waiters.notify(other);
  await new Promise((r) => setImmediate(r));
  assert.equal(woke, undefined);
  assert.equal(waiters.waiting, 1);
  waiters.notify(b);
  assert.equal(await waiting, 'append');
  assert.equal(waiters.waiting, 0, 'the waiter is unregistered from every key');
});

test('a waiter resolves on timeout, on abort, and on close; waits after close return at once', async () => {
  const waiters = new FetchWaiters();
  const key = {};
  assert.equal(await waiters.wait([key], 5), 'timeout');
  const ac = new AbortController();
  const aborted = waiters.wait([key], 60_000, ac.signal);
  ac.abort();
  assert.equal(await aborted, 'aborted');
  const pending = [waiters.wait([key], 60_000), waiters.wait([{}], 60_000)];
  waiters.close();
  assert.deepEqual(await Promise.all(pending), ['shutdown', 'shutdown']);
  assert.equal(await waiters.wait([key], 60_000), 'shutdown');
  assert.equal(waiters.waiting, 0);
});

test('fetch sessions: full fetches get sessionId 0, incremental ones FETCH_SESSION_ID_NOT_FOUND', () => {
  assert.deepEqual(fetchContext(11, 0, -1), { kind: 'full', sessionId: 0 });
  assert.deepEqual(fetchContext(11, 0, 0), { kind: 'full', sessionId: 0 });
  assert.deepEqual(fetchContext(12, 123, 0), { kind: 'full', sessionId: 0 });
  assert.deepEqual(fetchContext(4, 5, 9), { kind: 'full', sessionId: 0 }, 'before v7 there are no sessions');
  const inc = fetchContext(12, 123, 4);
  assert.equal(inc.kind === 'error' ? inc.errorCode : undefined, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
});

test('leader epoch fencing: -1 and 0 pass, older is fenced, newer is unknown', () => {
  assert.equal(checkCurrentLeaderEpoch(-1), ErrorCode.NONE);
  assert.equal(checkCurrentLeaderEpoch(0), ErrorCode.NONE);
  assert.equal(checkCurrentLeaderEpoch(-2), ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(checkCurrentLeaderEpoch(3), ErrorCode.UNKNOWN_LEADER_EPOCH);
});
