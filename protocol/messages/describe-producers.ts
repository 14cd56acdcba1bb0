import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DescribeProducers (61): the active idempotent and transactional producers of some partitions, for admin tools. */
const REQUEST = message({
  apiKey: 61,
  name: 'DescribeProducers',
  type: 'request',
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    field('topics', array([field('name', 'string', '0+'), field('partitionIndexes', array('int32'), '0+')]), '0+'),
  ],
});

const RESPONSE = message({
  apiKey: 61,
  name: 'DescribeProducers',
  type: 'response',
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field(
      'topics',
      array([
        field('name', 'string', '0+'),
        field(
          'partitions',
          array([
            field('partitionIndex', 'int32', '0+'),
            field('errorCode', 'int16', '0+'),
            field('errorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
            field(
              'activeProducers',
              array([
                field('producerId', 'int64', '0+'),
                field('producerEpoch', 'int32', '0+'),
                field('lastSequence', 'int32', '0+', { default: -1 }),
                field('lastTimestamp', 'int64', '0+', { default: -1n }),
                field('coordinatorEpoch', 'int32', '0+'),
                field('currentTxnStartOffset', 'int64', '0+', { default: -1n }),
              ]),
              '0+',
            ),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});

export const DESCRIBE_PRODUCERS: ApiSpec = api(REQUEST, RESPONSE);
