import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** ListOffsets (key 2): find the offset for a timestamp, or the earliest/latest/max-timestamp offsets. */
export const LIST_OFFSETS: ApiSpec = api(
  message({
    apiKey: 2,
    name: 'ListOffsets',
    type: 'request',
    validVersions: '0-10',
    flexibleVersions: '6+',
    fields: [
      field('replicaId', 'int32', '0+'),
      field('isolationLevel', 'int8', '2+'),
      field('topics', array([
        field('name', 'string', '0+'),
        field('partitions', array([
          field('partitionIndex', 'int32', '0+'),
          field('currentLeaderEpoch', 'int32', '4+', { default: -1, ignorable: true }),
          field('timestamp', 'int64', '0+'),
          field('maxNumOffsets', 'int32', '0', { default: 1 }),
        ]), '0+'),
      ]), '0+'),
      field('timeoutMs', 'int32', '10+', { ignorable: true }),
    ],
  }),
  message({
    apiKey: 2,
    name: 'ListOffsets',
    type: 'response',
    validVersions: '0-10',
    flexibleVersions: '6+',
    fields: [
      field('throttleTimeMs', 'int32', '2+', { ignorable: true }),
      field('topics', array([
        field('name', 'string', '0+'),
        field('partitions', array([
          field('partitionIndex', 'int32', '0+'),
          field('errorCode', 'int16', '0+'),
          field('oldStyleOffsets', array('int64'), '0'),
          field('timestamp', 'int64', '1+', { default: -1n }),
          field('offset', 'int64', '1+', { default: -1n }),
          field('leaderEpoch', 'int32', '4+', { default: -1 }),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
);
