import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** Kafka's "no authorized operations were requested" sentinel (INT32_MIN). */
const AUTHORIZED_OPERATIONS_UNKNOWN = -2147483648;

/** Metadata (key 3): brokers, controller, and the partitions and leaders of topics. */
export const METADATA: ApiSpec = api(
  message({
    apiKey: 3,
    name: 'Metadata',
    type: 'request',
    validVersions: '0-12',
    flexibleVersions: '9+',
    fields: [
      field('topics', array([
        field('topicId', 'uuid', '10+', { ignorable: true }),
        field('name', 'string', '0+', { nullableVersions: '10+' }),
      ]), '0+', { nullableVersions: '1+' }),
      field('allowAutoTopicCreation', 'bool', '4+', { default: true }),
      field('includeClusterAuthorizedOperations', 'bool', '8-10'),
      field('includeTopicAuthorizedOperations', 'bool', '8+'),
    ],
  }),
  message({
    apiKey: 3,
    name: 'Metadata',
    type: 'response',
    validVersions: '0-12',
    flexibleVersions: '9+',
    fields: [
      field('throttleTimeMs', 'int32', '3+', { ignorable: true }),
      field('brokers', array([
        field('nodeId', 'int32', '0+'),
        field('host', 'string', '0+'),
        field('port', 'int32', '0+'),
        field('rack', 'string', '1+', { nullableVersions: '1+', default: null, ignorable: true }),
      ]), '0+'),
      field('clusterId', 'string', '2+', { nullableVersions: '2+', default: null, ignorable: true }),
      field('controllerId', 'int32', '1+', { default: -1, ignorable: true }),
      field('topics', array([
        field('errorCode', 'int16', '0+'),
        field('name', 'string', '0+', { nullableVersions: '12+' }),
        field('topicId', 'uuid', '10+', { ignorable: true }),
        field('isInternal', 'bool', '1+', { default: false, ignorable: true }),
        field('partitions', array([
          field('errorCode', 'int16', '0+'),
          field('partitionIndex', 'int32', '0+'),
          field('leaderId', 'int32', '0+'),
          field('leaderEpoch', 'int32', '7+', { default: -1, ignorable: true }),
          field('replicaNodes', array('int32'), '0+'),
          field('isrNodes', array('int32'), '0+'),
          field('offlineReplicas', array('int32'), '5+', { ignorable: true }),
        ]), '0+'),
        field('topicAuthorizedOperations', 'int32', '8+', { default: AUTHORIZED_OPERATIONS_UNKNOWN }),
      ]), '0+'),
      field('clusterAuthorizedOperations', 'int32', '8-10', { default: AUTHORIZED_OPERATIONS_UNKNOWN }),
    ],
  }),
);
