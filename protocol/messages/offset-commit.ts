import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** OffsetCommit (8): a consumer group stores the offsets it has consumed up to, per partition. */
const REQUEST = message({
  apiKey: 8,
  name: 'OffsetCommit',
  type: 'request',
  validVersions: '0-9',
  flexibleVersions: '8+',
  fields: [
    field('groupId', 'string', '0+'),
    field('generationIdOrMemberEpoch', 'int32', '1+', { default: -1, ignorable: true }),
    field('memberId', 'string', '1+', { ignorable: true }),
    field('groupInstanceId', 'string', '7+', { nullableVersions: '7+', default: null }),
    field('retentionTimeMs', 'int64', '2-4', { default: -1n, ignorable: true }),
    field(
      'topics',
      array([
        field('name', 'string', '0+'),
        field(
          'partitions',
          array([
            field('partitionIndex', 'int32', '0+'),
            field('committedOffset', 'int64', '0+'),
            field('committedLeaderEpoch', 'int32', '6+', { default: -1, ignorable: true }),
            field('commitTimestamp', 'int64', '1', { default: -1n }),
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
  apiKey: 8,
  name: 'OffsetCommit',
  type: 'response',
  validVersions: '0-9',
  flexibleVersions: '8+',
  fields: [
    field('throttleTimeMs', 'int32', '3+', { ignorable: true }),
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

export const OFFSET_COMMIT: ApiSpec = api(REQUEST, RESPONSE);
