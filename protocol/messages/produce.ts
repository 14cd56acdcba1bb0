import { api, array, field, message, type ApiSpec } from '../schema/types.js';
import { LEADER_ID_AND_EPOCH, NODE_ENDPOINT } from './leader-endpoint-structs.js';

/** Produce (key 0): append record batches to partitions. */
export const PRODUCE: ApiSpec = api(
  message({
    apiKey: 0,
    name: 'Produce',
    type: 'request',
    validVersions: '0-11',
    flexibleVersions: '9+',
    fields: [
      field('transactionalId', 'string', '3+', { nullableVersions: '3+', default: null }),
      field('acks', 'int16', '0+'),
      field('timeoutMs', 'int32', '0+'),
      field('topicData', array([
        field('name', 'string', '0+'),
        field('partitionData', array([
          field('index', 'int32', '0+'),
          field('records', 'records', '0+', { nullableVersions: '0+' }),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
  message({
    apiKey: 0,
    name: 'Produce',
    type: 'response',
    validVersions: '0-11',
    flexibleVersions: '9+',
    fields: [
      field('responses', array([
        field('name', 'string', '0+'),
        field('partitionResponses', array([
          field('index', 'int32', '0+'),
          field('errorCode', 'int16', '0+'),
          field('baseOffset', 'int64', '0+'),
          field('logAppendTimeMs', 'int64', '2+', { default: -1n, ignorable: true }),
          field('logStartOffset', 'int64', '5+', { default: -1n, ignorable: true }),
          field('recordErrors', array([
            field('batchIndex', 'int32', '8+'),
            field('batchIndexErrorMessage', 'string', '8+', { nullableVersions: '8+', default: null }),
          ]), '8+', { ignorable: true }),
          field('errorMessage', 'string', '8+', { nullableVersions: '8+', default: null, ignorable: true }),
          field('currentLeader', LEADER_ID_AND_EPOCH, '10+', { taggedVersions: '10+', tag: 0 }),
        ]), '0+'),
      ]), '0+'),
      field('throttleTimeMs', 'int32', '1+', { default: 0, ignorable: true }),
      field('nodeEndpoints', array(NODE_ENDPOINT), '10+', { taggedVersions: '10+', tag: 0 }),
    ],
  }),
);
