import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, RateLimitedLog } from '../../broker/logger.js';

test('structured lines, level filter, child fields, bigint and errors', () => {
  const lines: string[] = [];
  const log = createLogger('info', (l) => lines.push(l)).child({ logger: 'produce' });
  log.debug('hidden');
  log.info('appended', { offset: 12345678901234567890n });
  log.error('failed', { err: Object.assign(new Error('disk full'), { code: 'ENOSPC' }) });
  assert.equal(lines.length, 2);
  const first = JSON.parse(lines[0] ?? '');
  assert.equal(first.level, 'info');
  assert.equal(first.logger, 'produce');
  assert.equal(first.msg, 'appended');
  assert.equal(first.offset, '12345678901234567890');
  assert.ok(!Number.isNaN(Date.parse(first.ts)));
  assert.deepEqual(JSON.parse(lines[1] ?? '').err, { name: 'Error', message: 'disk full', code: 'ENOSPC' });
  assert.equal(log.enabled('debug'), false);
  assert.equal(createLogger('silent', (l) => lines.push(l)).enabled('error'), false);
});

test('rate-limited warnings: a burst goes out, then one line per interval carrying the count of those held back, and a summary after a flood', async () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
  let now = 1_000_000;
  const limited = new RateLimitedLog(log, { burst: 3, perSecond: 1, summaryAfterMs: 50 }, () => now);
  for (let i = 0; i < 100; i++) limited.warn('bad frame', { i });
  limited.warn('request failed');
  assert.deepEqual(lines.map((l) => [l['msg'], l['i']]), [['bad frame', 0], ['bad frame', 1], ['bad frame', 2], ['request failed', undefined]], 'each message has its own burst');
  assert.equal(limited.suppressedTotal, 97);
  now += 1000;
  limited.warn('bad frame', { i: 100 });
  assert.deepEqual([lines.at(-1)?.['i'], lines.at(-1)?.['suppressed']], [100, 97], 'the next line says how many were held back');
  limited.warn('bad frame', { i: 101 });
  assert.equal(lines.length, 5);
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual([lines.at(-1)?.['msg'], lines.at(-1)?.['suppressed']], ['bad frame (repeated; similar lines were not logged)', 1], 'a flood that stops still gets its count written');
  assert.equal(lines.length, 6);
});
