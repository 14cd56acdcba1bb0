import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** OffsetForLeaderEpoch (key 23): the end offset of a leader epoch, used to detect log divergence. */
export const OFFSET_FOR_LEADER_EPOCH: ApiSpec = api(
  message({
    apiKey: 23,
    name: 'OffsetForLeaderEpoch',
    type: 'request',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      field('replicaId', 'int32', '3+', { default: -2, ignorable: true }),
      field('topics', array([
        field('topic', 'string', '0+'),
        field('partitions', array([
          field('partition', 'int32', '0+'),
          field('currentLeaderEpoch', 'int32', '2+', { default: -1, ignorable: true }),
          field('leaderEpoch', 'int32', '0+'),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
  message({
    apiKey: 23,
    name: 'OffsetForLeaderEpoch',
    type: 'response',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      field('throttleTimeMs', 'int32', '2+', { ignorable: true }),
      field('topics', array([
        field('topic', 'string', '0+'),
        field('partitions', array([
          field('errorCode', 'int16', '0+'),
          field('partition', 'int32', '0+'),
          field('leaderEpoch', 'int32', '1+', { default: -1, ignorable: true }),
          field('endOffset', 'int64', '0+', { default: -1n }),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
);
