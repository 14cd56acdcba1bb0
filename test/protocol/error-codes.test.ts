import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  ErrorCode,
  KAFKA_ERRORS,
  KafkaError,
  errorInfo,
  errorInfoByName,
  errorName,
  isRetriable,
  type ErrorName,
} from '../../protocol/error-codes.js';

test('codes and names are unique', () => {
  const codes = KAFKA_ERRORS.map((e) => e.code);
  const names = KAFKA_ERRORS.map((e) => e.name);
  assert.equal(new Set(codes).size, codes.length, 'duplicate code');
  assert.equal(new Set(names).size, names.length, 'duplicate name');
});

test('the table covers every Kafka 3.9 code from -1 to 127 without gaps, in order', () => {
  const codes = KAFKA_ERRORS.map((e) => e.code);
  const expected = Array.from({ length: 129 }, (_, i) => i - 1);
  assert.deepEqual(codes, expected);
});

test('every entry has an UPPER_SNAKE name and a one-sentence message', () => {
  for (const e of KAFKA_ERRORS) {
    assert.match(e.name, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, `name of ${e.code}`);
    assert.ok(e.message.trim().length > 10, `message of ${e.name} is empty`);
    assert.match(e.message, /[.]$/, `message of ${e.name} should be a sentence`);
    assert.equal(typeof e.retriable, 'boolean');
  }
});

test('well-known codes have Kafka numbers and retriable flags', () => {
  const expected: ReadonlyArray<readonly [ErrorName, number, boolean]> = [
    ['UNKNOWN_SERVER_ERROR', -1, false],
    ['NONE', 0, false],
    ['OFFSET_OUT_OF_RANGE', 1, false],
    ['CORRUPT_MESSAGE', 2, true],
    ['UNKNOWN_TOPIC_OR_PARTITION', 3, true],
    ['LEADER_NOT_AVAILABLE', 5, true],
    ['NOT_LEADER_OR_FOLLOWER', 6, true],
    ['REQUEST_TIMED_OUT', 7, true],
    ['MESSAGE_TOO_LARGE', 10, false],
    ['COORDINATOR_LOAD_IN_PROGRESS', 14, true],
    ['COORDINATOR_NOT_AVAILABLE', 15, true],
    ['NOT_COORDINATOR', 16, true],
    ['NOT_ENOUGH_REPLICAS', 19, true],
    ['ILLEGAL_GENERATION', 22, false],
    ['INCONSISTENT_GROUP_PROTOCOL', 23, false],
    ['UNKNOWN_MEMBER_ID', 25, false],
    ['REBALANCE_IN_PROGRESS', 27, false],
    ['TOPIC_AUTHORIZATION_FAILED', 29, false],
    ['GROUP_AUTHORIZATION_FAILED', 30, false],
    ['UNSUPPORTED_SASL_MECHANISM', 33, false],
    ['ILLEGAL_SASL_STATE', 34, false],
    ['UNSUPPORTED_VERSION', 35, false],
    ['TOPIC_ALREADY_EXISTS', 36, false],
    ['NOT_CONTROLLER', 41, true],
    ['INVALID_REQUEST', 42, false],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 45, false],
    ['DUPLICATE_SEQUENCE_NUMBER', 46, false],
    ['INVALID_PRODUCER_EPOCH', 47, false],
    ['INVALID_TXN_STATE', 48, false],
    ['CONCURRENT_TRANSACTIONS', 51, false],
    ['KAFKA_STORAGE_ERROR', 56, true],
    ['SASL_AUTHENTICATION_FAILED', 58, false],
    ['UNKNOWN_PRODUCER_ID', 59, false],
    ['GROUP_ID_NOT_FOUND', 69, false],
    ['FETCH_SESSION_ID_NOT_FOUND', 70, true],
    ['FENCED_LEADER_EPOCH', 74, true],
    ['MEMBER_ID_REQUIRED', 79, false],
    ['FENCED_INSTANCE_ID', 82, false],
    ['UNSTABLE_OFFSET_COMMIT', 88, true],
    ['PRODUCER_FENCED', 90, false],
    ['UNKNOWN_TOPIC_ID', 100, true],
    ['OFFSET_MOVED_TO_TIERED_STORAGE', 109, false],
    ['FENCED_MEMBER_EPOCH', 110, false],
    ['STALE_MEMBER_EPOCH', 113, false],
    ['TRANSACTION_ABORTABLE', 120, false],
    ['SHARE_SESSION_NOT_FOUND', 122, true],
    ['VOTER_NOT_FOUND', 127, false],
  ];
  for (const [name, code, retriable] of expected) {
    assert.equal(ErrorCode[name], code, `${name} code`);
    const info = errorInfo(code);
    assert.ok(info, `no entry for ${code}`);
    assert.equal(info.name, name);
    assert.equal(info.retriable, retriable, `${name} retriable`);
    assert.equal(isRetriable(code), retriable);
    assert.equal(errorName(code), name);
    assert.deepEqual(errorInfoByName(name), info);
  }
});

test('ErrorCode and the ordered table agree on every entry', () => {
  assert.equal(Object.keys(ErrorCode).length, KAFKA_ERRORS.length);
  for (const e of KAFKA_ERRORS) assert.equal(ErrorCode[e.name], e.code);
  assert.ok(Object.isFrozen(ErrorCode));
  assert.ok(Object.isFrozen(KAFKA_ERRORS));
});

test('codes outside the table are reported as unknown, not retriable', () => {
  assert.equal(errorInfo(128), undefined);
  assert.equal(errorInfo(-2), undefined);
  assert.equal(isRetriable(999), false);
  assert.equal(errorName(999), 'UNKNOWN_ERROR_CODE_999');
});

test('KafkaError carries code, name, retriable flag and the table message', () => {
  const err = new KafkaError(ErrorCode.NOT_COORDINATOR);
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'KafkaError');
  assert.equal(err.code, 16);
  assert.equal(err.errorName, 'NOT_COORDINATOR');
  assert.equal(err.retriable, true);
  assert.equal(err.message, errorInfo(16)?.message);
});

test('KafkaError keeps a specific message and a cause', () => {
  const cause = new Error('disk full');
  const err = new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, 'member m-1 is not in group g', { cause });
  assert.equal(err.message, 'member m-1 is not in group g');
  assert.equal(err.retriable, false);
  assert.equal(err.cause, cause);
});

test('KafkaError refuses NONE and names codes it does not know', () => {
  assert.throws(() => new KafkaError(ErrorCode.NONE), RangeError);
  const unknown = new KafkaError(500);
  assert.equal(unknown.errorName, 'UNKNOWN_ERROR_CODE_500');
  assert.equal(unknown.retriable, false);
  assert.match(unknown.message, /500/);
});

test('KafkaError.from keeps KafkaErrors and wraps anything else as UNKNOWN_SERVER_ERROR', () => {
  const original = new KafkaError(ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal(KafkaError.from(original), original);
  const thrown = new TypeError('boom');
  const wrapped = KafkaError.from(thrown);
  assert.equal(wrapped.code, ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal(wrapped.cause, thrown);
  assert.equal(KafkaError.from('a string').code, -1);
});

/** The reference message definitions live in shared/ beside the repository (CI lays it out the same way). */
function findReferenceMessages(): string {
  let dir = process.cwd();
  for (;;) {
    for (const candidate of [join(dir, 'shared', 'kafka-protocol', 'messages'), join(dir, '..', 'shared', 'kafka-protocol', 'messages')]) {
      if (existsSync(candidate)) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error('shared/kafka-protocol/messages not found beside the repository; run the tests from the checkout next to shared/');
}

test('every error name the reference message definitions mention is in the table', () => {
  const dir = findReferenceMessages();
  // Upper-case words in the reference that are not error codes: isolation levels, an API name, and
  // INVALID_SUBSCRIPTION_REGEX, a draft name that shipped in Kafka 4.0 as INVALID_REGULAR_EXPRESSION (128).
  const notErrors = new Set(['READ_COMMITTED', 'READ_UNCOMMITTED', 'SASL_AUTHENTICATE', 'INVALID_SUBSCRIPTION_REGEX']);
  const known = new Set<string>(KAFKA_ERRORS.map((e) => e.name));
  const mentioned = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    for (const word of readFileSync(join(dir, file), 'utf8').match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []) {
      if (!notErrors.has(word)) mentioned.add(word);
    }
  }
  assert.ok(mentioned.size > 30, `expected the reference to mention many error names, found ${mentioned.size}`);
  const missing = [...mentioned].filter((name) => !known.has(name));
  assert.deepEqual(missing, []);
});
