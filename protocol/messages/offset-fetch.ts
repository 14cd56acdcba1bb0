import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** OffsetFetch (9): a consumer group reads back its committed offsets; v8+ asks for several groups at once. */
const REQUEST = message({
  apiKey: 9,
  name: 'OffsetFetch',
  type: 'request',
  validVersions: '0-9',
  flexibleVersions: '6+',
  fields: [
    field('groupId', 'string', '0-7'),
    field(
      'topics',
      array([field('name', 'string', '0-7'), field('partitionIndexes', array('int32'), '0-7')]),
      '0-7',
      { nullableVersions: '2-7' },
    ),
    field(
      'groups',
      array([
        field('groupId', 'string', '8+'),
        field('memberId', 'string', '9+', { nullableVersions: '9+', default: null, ignorable: true }),
        field('memberEpoch', 'int32', '9+', { default: -1, ignorable: true }),
        field(
          'topics',
          array([field('name', 'string', '8+'), field('partitionIndexes', array('int32'), '8+')]),
          '8+',
          { nullableVersions: '8+' },
        ),
      ]),
      '8+',
    ),
    field('requireStable', 'bool', '7+', { default: false }),
  ],
});

const RESPONSE = message({
  apiKey: 9,
  name: 'OffsetFetch',
  type: 'response',
  validVersions: '0-9',
  flexibleVersions: '6+',
  fields: [
    field('throttleTimeMs', 'int32', '3+', { ignorable: true }),
    field(
      'topics',
      array([
        field('name', 'string', '0-7'),
        field(
          'partitions',
          array([
            field('partitionIndex', 'int32', '0-7'),
            field('committedOffset', 'int64', '0-7'),
            field('committedLeaderEpoch', 'int32', '5-7', { default: -1, ignorable: true }),
            field('metadata', 'string', '0-7', { nullableVersions: '0-7' }),
            field('errorCode', 'int16', '0-7'),
          ]),
          '0-7',
        ),
      ]),
      '0-7',
    ),
    field('errorCode', 'int16', '2-7', { default: 0, ignorable: true }),
    field(
      'groups',
      array([
        field('groupId', 'string', '8+'),
        field(
          'topics',
          array([
            field('name', 'string', '8+'),
            field(
              'partitions',
              array([
                field('partitionIndex', 'int32', '8+'),
                field('committedOffset', 'int64', '8+'),
                field('committedLeaderEpoch', 'int32', '8+', { default: -1, ignorable: true }),
                field('metadata', 'string', '8+', { nullableVersions: '8+' }),
                field('errorCode', 'int16', '8+'),
              ]),
              '8+',
            ),
          ]),
          '8+',
        ),
        field('errorCode', 'int16', '8+', { default: 0 }),
      ]),
      '8+',
    ),
  ],
});

export const OFFSET_FETCH: ApiSpec = api(REQUEST, RESPONSE);
