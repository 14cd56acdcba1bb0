import { api, array, field, message, struct, type ApiSpec } from '../schema/types.js';

/** AddPartitionsToTxn (24): a transactional producer registers the partitions it will write; v4+ batches transactions. */

/** A topic and the partitions to add; shared by the v0-3 and v4+ layouts. */
const topic = struct([field('name', 'string', '0+'), field('partitions', array('int32'), '0+')]);

const REQUEST = message({
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  type: 'request',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    field(
      'transactions',
      array([
        field('transactionalId', 'string', '4+'),
        field('producerId', 'int64', '4+'),
        field('producerEpoch', 'int16', '4+'),
        field('verifyOnly', 'bool', '4+', { default: false }),
        field('topics', array(topic), '4+'),
      ]),
      '4+',
    ),
    field('v3AndBelowTransactionalId', 'string', '0-3'),
    field('v3AndBelowProducerId', 'int64', '0-3'),
    field('v3AndBelowProducerEpoch', 'int16', '0-3'),
    field('v3AndBelowTopics', array(topic), '0-3'),
  ],
});

/** Per-topic results; shared by the v0-3 and v4+ layouts. */
const topicResult = struct([
  field('name', 'string', '0+'),
  field('resultsByPartition', array([field('partitionIndex', 'int32', '0+'), field('partitionErrorCode', 'int16', '0+')]), '0+'),
]);

const RESPONSE = message({
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  type: 'response',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '4+', { ignorable: true }),
    field(
      'resultsByTransaction',
      array([field('transactionalId', 'string', '4+'), field('topicResults', array(topicResult), '4+')]),
      '4+',
    ),
    field('resultsByTopicV3AndBelow', array(topicResult), '0-3'),
  ],
});

export const ADD_PARTITIONS_TO_TXN: ApiSpec = api(REQUEST, RESPONSE);
