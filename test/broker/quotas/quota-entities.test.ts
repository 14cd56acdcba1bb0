// Quota entities as Kafka defines them: validation (ClientQuotaControlManager), which stored quota applies
// to a request (DefaultQuotaCallback's order) and DescribeClientQuotas filters (ClientQuotasImage.describe).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { ClientQuotaRecord, QuotaEntityPart } from '../../../broker/metadata/metadata-store.js';
import { canonicalEntity, matchQuotas, QuotaFilterError, QuotaIndex, validateQuotaValue } from '../../../broker/quotas/quota-entities.js';

const user = (name: string | null): QuotaEntityPart => ({ entityType: 'user', entityName: name });
const client = (name: string | null): QuotaEntityPart => ({ entityType: 'client-id', entityName: name });
const rec = (entity: QuotaEntityPart[], values: Record<string, number>): ClientQuotaRecord => {
  const c = canonicalEntity(entity);
  assert.ok('entity' in c);
  return { entity: c.entity, values };
};

test('entities Kafka refuses get INVALID_REQUEST with a message; good ones come back sorted by type', () => {
  const refused: [QuotaEntityPart[], RegExp][] = [
    [[], /empty client quota entity/],
    [[user('a'), user('b')], /duplicate entity entry user/],
    [[{ entityType: 'group', entityName: 'g' }], /Unhandled client quota entity type: group/],
    [[user('')], /Empty user not supported/],
    [[{ entityType: 'ip', entityName: '10.0.0.1' }, user('a')], /ip cannot be combined/],
    [[{ entityType: 'ip', entityName: 'not-an-ip' }], /not a valid IP/],
  ];
  for (const [entity, message] of refused) {
    const r = canonicalEntity(entity);
    assert.ok(!('entity' in r), JSON.stringify(entity));
    assert.equal(r.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(r.errorMessage, message);
  }
  assert.deepEqual(canonicalEntity([user('alice'), client(null)]), { entity: [client(null), user('alice')] });
  assert.ok('entity' in canonicalEntity([{ entityType: 'ip', entityName: null }]));
});

test('quota values are validated as Kafka: known keys per entity type, Long keys integral, nothing negative', () => {
  const u = [user('alice')];
  const ip = [{ entityType: 'ip', entityName: '127.0.0.1' }];
  assert.equal(validateQuotaValue(u, 'producer_byte_rate', 1024), null);
  assert.equal(validateQuotaValue(u, 'consumer_byte_rate', 0), null);
  assert.equal(validateQuotaValue(u, 'request_percentage', 12.5), null);
  assert.equal(validateQuotaValue(ip, 'connection_creation_rate', 10), null);
  const cases: [QuotaEntityPart[], string, number, RegExp][] = [
    [u, 'producer_bytes_rate', 1, /Invalid configuration key producer_bytes_rate/],
    [u, 'connection_creation_rate', 1, /Invalid configuration key connection_creation_rate/],
    [ip, 'producer_byte_rate', 1, /Invalid configuration key producer_byte_rate/],
    [u, 'producer_byte_rate', -1, /must not be negative/],
    [u, 'producer_byte_rate', 1.5, /must be a Long value/],
    [ip, 'connection_creation_rate', 2.5, /must be a Integer value|must be an Integer value/],
  ];
  for (const [entity, key, value, message] of cases) {
    const e = validateQuotaValue(entity, key, value);
    assert.ok(e, `${key}=${value}`);
    assert.equal(e.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(e.errorMessage, message);
  }
});

test('the quota that applies follows Kafka\'s order, and says who shares the rate', () => {
  const all = [
    rec([user('alice'), client('app')], { producer_byte_rate: 1 }),
    rec([user('alice'), client(null)], { producer_byte_rate: 2 }),
    rec([user('alice')], { producer_byte_rate: 3 }),
    rec([user(null), client('app')], { producer_byte_rate: 4 }),
    rec([user(null), client(null)], { producer_byte_rate: 5 }),
    rec([user(null)], { producer_byte_rate: 6 }),
    rec([client('app')], { producer_byte_rate: 7 }),
    rec([client(null)], { producer_byte_rate: 8 }),
  ];
  const expected = [
    { bound: 1, user: 'alice', clientId: 'app' },
    { bound: 2, user: 'alice', clientId: 'app' },
    { bound: 3, user: 'alice', clientId: '' },
    { bound: 4, user: 'alice', clientId: 'app' },
    { bound: 5, user: 'alice', clientId: 'app' },
    { bound: 6, user: 'alice', clientId: '' },
    { bound: 7, user: '', clientId: 'app' },
    { bound: 8, user: '', clientId: 'app' },
  ];
  for (let i = 0; i < all.length; i++) {
    const index = new QuotaIndex(all.slice(i));
    assert.deepEqual(index.resolve('producer_byte_rate', 'alice', 'app'), expected[i], `level ${i + 1}`);
  }
  const index = new QuotaIndex(all);
  assert.equal(index.resolve('consumer_byte_rate', 'alice', 'app'), undefined, 'each key is resolved on its own');
  assert.equal(index.resolve('producer_byte_rate', 'bob', 'other')?.bound, 5);
  assert.equal(new QuotaIndex([rec([user('alice')], { producer_byte_rate: 3 })]).resolve('producer_byte_rate', 'bob', 'app'), undefined);
});

test('DescribeClientQuotas filters match exact names, defaults and any entity; strict leaves out wider entities', () => {
  const stored = [
    rec([user('alice')], { producer_byte_rate: 1 }),
    rec([user('alice'), client('app')], { producer_byte_rate: 2 }),
    rec([user(null)], { producer_byte_rate: 3 }),
    rec([client('app')], { consumer_byte_rate: 4 }),
    rec([{ entityType: 'ip', entityName: '10.0.0.1' }], { connection_creation_rate: 5 }),
  ];
  const values = (rs: ClientQuotaRecord[]) => rs.map((r) => Object.values(r.values)[0]).sort();
  assert.deepEqual(values(matchQuotas(stored, [], false)), [1, 2, 3, 4, 5]);
  assert.deepEqual(values(matchQuotas(stored, [], true)), []);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'user', matchType: 0, match: 'alice' }], false)), [1, 2]);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'user', matchType: 0, match: 'alice' }], true)), [1]);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'user', matchType: 1, match: null }], false)), [3]);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'user', matchType: 2, match: null }], true)), [1, 3]);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'client-id', matchType: 2, match: null }], false)), [2, 4]);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'user', matchType: 2, match: null }, { entityType: 'client-id', matchType: 0, match: 'app' }], true)), [2]);
  assert.deepEqual(values(matchQuotas(stored, [{ entityType: 'ip', matchType: 2, match: null }], true)), [5]);
  const refused: [Parameters<typeof matchQuotas>[1], number, RegExp][] = [
    [[{ entityType: 'user', matchType: 0, match: null }], ErrorCode.INVALID_REQUEST, /MATCH_TYPE_EXACT/],
    [[{ entityType: 'user', matchType: 1, match: 'x' }], ErrorCode.INVALID_REQUEST, /MATCH_TYPE_DEFAULT/],
    [[{ entityType: 'user', matchType: 7, match: null }], ErrorCode.INVALID_REQUEST, /Unknown match type 7/],
    [[{ entityType: 'user', matchType: 2, match: null }, { entityType: 'user', matchType: 2, match: null }], ErrorCode.INVALID_REQUEST, /more than once/],
    [[{ entityType: 'ip', matchType: 2, match: null }, { entityType: 'user', matchType: 2, match: null }], ErrorCode.INVALID_REQUEST, /IP filter component/],
    [[{ entityType: 'group', matchType: 2, match: null }], ErrorCode.UNSUPPORTED_VERSION, /Unsupported entity type group/],
  ];
  for (const [components, code, message] of refused) {
    assert.throws(() => matchQuotas(stored, components, false), (err: unknown) => err instanceof QuotaFilterError && err.errorCode === code && message.test(err.message));
  }
});
