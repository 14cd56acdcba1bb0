import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** TxnOffsetCommit (28): a transactional producer commits consumer offsets that become visible with its transaction. */
const REQUEST = message({
  apiKey: 28,
  name: 'TxnOffsetCommit',
  type: 'request',
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    field('transactionalId', 'string', '0+'),
    field('groupId', 'string', '0+'),
    field('producerId', 'int64', '0+'),
    field('producerEpoch', 'int16', '0+'),
    field('generationId', 'int32', '3+', { default: -1 }),
    field('memberId', 'string', '3+', { default: '' }),
    field('groupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
    field(
      'topics',
      array([
        field('name', 'string', '0+'),
        field(
          'partitions',
          array([
            field('partitionIndex', 'int32', '0+'),
            field('committedOffset', 'int64', '0+'),
            field('committedLeaderEpoch', 'int32', '2+', { default: -1, ignorable: true }),
            field('committedMetadata', 'string', '0+', { nullableVersions: '0+' }),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});

const RESPONSE = message({
  apiKey: 28,
  name: 'TxnOffsetCommit',
  type: 'response',
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field(
      'topics',
      array([
        field('name', 'string', '0+'),
        field('partitions', array([field('partitionIndex', 'int32', '0+'), field('errorCode', 'int16', '0+')]), '0+'),
      ]),
      '0+',
    ),
  ],
});

export const TXN_OFFSET_COMMIT: ApiSpec = api(REQUEST, RESPONSE);
