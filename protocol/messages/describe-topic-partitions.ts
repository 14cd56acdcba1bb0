import { api, array, field, message, struct, type ApiSpec } from '../schema/types.js';

/** Where a paginated DescribeTopicPartitions starts (request) or goes on (response). */
const cursor = struct([
  field('topicName', 'string', '0+'),
  field('partitionIndex', 'int32', '0+'),
]);

/**
 * DescribeTopicPartitions (key 75, KIP-966): topics and their partitions, paginated by a partition limit and
 * a cursor; what Apache Kafka's 4.x AdminClient.describeTopics asks for by name when the broker serves it.
 */
export const DESCRIBE_TOPIC_PARTITIONS: ApiSpec = api(
  message({
    apiKey: 75,
    name: 'DescribeTopicPartitions',
    type: 'request',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      field('topics', array([field('name', 'string', '0+')]), '0+'),
      field('responsePartitionLimit', 'int32', '0+', { default: 2000 }),
      field('cursor', cursor, '0+', { nullableVersions: '0+', default: null }),
    ],
  }),
  message({
    apiKey: 75,
    name: 'DescribeTopicPartitions',
    type: 'response',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      field('throttleTimeMs', 'int32', '0+', { ignorable: true }),
      field('topics', array([
        field('errorCode', 'int16', '0+'),
        field('name', 'string', '0+', { nullableVersions: '0+' }),
        field('topicId', 'uuid', '0+', { ignorable: true }),
        field('isInternal', 'bool', '0+', { default: false, ignorable: true }),
        field('partitions', array([
          field('errorCode', 'int16', '0+'),
          field('partitionIndex', 'int32', '0+'),
          field('leaderId', 'int32', '0+'),
          field('leaderEpoch', 'int32', '0+', { default: -1, ignorable: true }),
          field('replicaNodes', array('int32'), '0+'),
          field('isrNodes', array('int32'), '0+'),
          field('eligibleLeaderReplicas', array('int32'), '0+', { nullableVersions: '0+', default: null }),
          field('lastKnownElr', array('int32'), '0+', { nullableVersions: '0+', default: null }),
          field('offlineReplicas', array('int32'), '0+', { ignorable: true }),
        ]), '0+'),
        field('topicAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
      ]), '0+'),
      field('nextCursor', cursor, '0+', { nullableVersions: '0+', default: null }),
    ],
  }),
);
