import { api, array, field, message, struct, type ApiSpec } from '../schema/types.js';
import { LEADER_ID_AND_EPOCH, NODE_ENDPOINT } from './leader-endpoint-structs.js';

/** Fetch (key 1): read record batches from partitions, optionally through an incremental fetch session. */
export const FETCH: ApiSpec = api(
  message({
    apiKey: 1,
    name: 'Fetch',
    type: 'request',
    validVersions: '0-17',
    flexibleVersions: '12+',
    fields: [
      field('clusterId', 'string', '12+', {
        nullableVersions: '12+',
        default: null,
        taggedVersions: '12+',
        tag: 0,
        ignorable: true,
      }),
      field('replicaId', 'int32', '0-14', { default: -1 }),
      field('replicaState', struct([
        field('replicaId', 'int32', '15+', { default: -1 }),
        field('replicaEpoch', 'int64', '15+', { default: -1n }),
      ]), '15+', { taggedVersions: '15+', tag: 1 }),
      field('maxWaitMs', 'int32', '0+'),
      field('minBytes', 'int32', '0+'),
      field('maxBytes', 'int32', '3+', { default: 0x7fffffff, ignorable: true }),
      field('isolationLevel', 'int8', '4+', { default: 0, ignorable: true }),
      field('sessionId', 'int32', '7+', { default: 0, ignorable: true }),
      field('sessionEpoch', 'int32', '7+', { default: -1, ignorable: true }),
      field('topics', array([
        field('topic', 'string', '0-12', { ignorable: true }),
        field('topicId', 'uuid', '13+', { ignorable: true }),
        field('partitions', array([
          field('partition', 'int32', '0+'),
          field('currentLeaderEpoch', 'int32', '9+', { default: -1, ignorable: true }),
          field('fetchOffset', 'int64', '0+'),
          field('lastFetchedEpoch', 'int32', '12+', { default: -1 }),
          field('logStartOffset', 'int64', '5+', { default: -1n, ignorable: true }),
          field('partitionMaxBytes', 'int32', '0+'),
          field('replicaDirectoryId', 'uuid', '17+', { taggedVersions: '17+', tag: 0, ignorable: true }),
        ]), '0+'),
      ]), '0+'),
      field('forgottenTopicsData', array([
        field('topic', 'string', '7-12', { ignorable: true }),
        field('topicId', 'uuid', '13+', { ignorable: true }),
        field('partitions', array('int32'), '7+'),
      ]), '7+'),
      field('rackId', 'string', '11+', { default: '', ignorable: true }),
    ],
  }),
  message({
    apiKey: 1,
    name: 'Fetch',
    type: 'response',
    validVersions: '0-17',
    flexibleVersions: '12+',
    fields: [
      field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
      field('errorCode', 'int16', '7+', { ignorable: true }),
      field('sessionId', 'int32', '7+', { default: 0 }),
      field('responses', array([
        field('topic', 'string', '0-12', { ignorable: true }),
        field('topicId', 'uuid', '13+', { ignorable: true }),
        field('partitions', array([
          field('partitionIndex', 'int32', '0+'),
          field('errorCode', 'int16', '0+'),
          field('highWatermark', 'int64', '0+'),
          field('lastStableOffset', 'int64', '4+', { default: -1n, ignorable: true }),
          field('logStartOffset', 'int64', '5+', { default: -1n, ignorable: true }),
          field('divergingEpoch', struct([
            field('epoch', 'int32', '12+', { default: -1 }),
            field('endOffset', 'int64', '12+', { default: -1n }),
          ]), '12+', { taggedVersions: '12+', tag: 0 }),
          field('currentLeader', LEADER_ID_AND_EPOCH, '12+', { taggedVersions: '12+', tag: 1 }),
          field('snapshotId', struct([
            field('endOffset', 'int64', '0+', { default: -1n }),
            field('epoch', 'int32', '0+', { default: -1 }),
          ]), '12+', { taggedVersions: '12+', tag: 2 }),
          field('abortedTransactions', array([
            field('producerId', 'int64', '4+'),
            field('firstOffset', 'int64', '4+'),
          ]), '4+', { nullableVersions: '4+', ignorable: true }),
          field('preferredReadReplica', 'int32', '11+', { default: -1 }),
          field('records', 'records', '0+', { nullableVersions: '0+' }),
        ]), '0+'),
      ]), '0+'),
      field('nodeEndpoints', array(NODE_ENDPOINT), '16+', { taggedVersions: '16+', tag: 0 }),
    ],
  }),
);
