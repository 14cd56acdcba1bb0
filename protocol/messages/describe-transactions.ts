import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DescribeTransactions (65): the coordinator's view of some transactional ids (KIP-664), for admin tools. */
const REQUEST = message({
  apiKey: 65,
  name: 'DescribeTransactions',
  type: 'request',
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [field('transactionalIds', array('string'), '0+')],
});

const RESPONSE = message({
  apiKey: 65,
  name: 'DescribeTransactions',
  type: 'response',
  validVersions: '0',
  flexibleVersions: '0+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field(
      'transactionStates',
      array([
        field('errorCode', 'int16', '0+'),
        field('transactionalId', 'string', '0+'),
        field('transactionState', 'string', '0+'),
        field('transactionTimeoutMs', 'int32', '0+'),
        field('transactionStartTimeMs', 'int64', '0+'),
        field('producerId', 'int64', '0+'),
        field('producerEpoch', 'int16', '0+'),
        field('topics', array([field('topic', 'string', '0+'), field('partitions', array('int32'), '0+')]), '0+'),
      ]),
      '0+',
    ),
  ],
});

export const DESCRIBE_TRANSACTIONS: ApiSpec = api(REQUEST, RESPONSE);
