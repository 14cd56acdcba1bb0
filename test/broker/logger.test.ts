import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../broker/logger.js';

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
