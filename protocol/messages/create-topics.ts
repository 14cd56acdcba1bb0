import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** CreateTopics (key 19): create topics with a partition count/replication factor or explicit assignments. */
export const CREATE_TOPICS: ApiSpec = api(
  message({
    apiKey: 19,
    name: 'CreateTopics',
    type: 'request',
    validVersions: '0-7',
    flexibleVersions: '5+',
    fields: [
      field('topics', array([
        field('name', 'string', '0+'),
        field('numPartitions', 'int32', '0+'),
        field('replicationFactor', 'int16', '0+'),
        field('assignments', array([
          field('partitionIndex', 'int32', '0+'),
          field('brokerIds', array('int32'), '0+'),
        ]), '0+'),
        field('configs', array([
          field('name', 'string', '0+'),
          field('value', 'string', '0+', { nullableVersions: '0+' }),
        ]), '0+'),
      ]), '0+'),
      field('timeoutMs', 'int32', '0+', { default: 60000 }),
      field('validateOnly', 'bool', '1+', { default: false }),
    ],
  }),
  message({
    apiKey: 19,
    name: 'CreateTopics',
    type: 'response',
    validVersions: '0-7',
    flexibleVersions: '5+',
    fields: [
      field('throttleTimeMs', 'int32', '2+', { ignorable: true }),
      field('topics', array([
        field('name', 'string', '0+'),
        field('topicId', 'uuid', '7+', { ignorable: true }),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '1+', { nullableVersions: '0+', ignorable: true }),
        field('topicConfigErrorCode', 'int16', '5+', { taggedVersions: '5+', tag: 0, ignorable: true }),
        field('numPartitions', 'int32', '5+', { default: -1, ignorable: true }),
        field('replicationFactor', 'int16', '5+', { default: -1, ignorable: true }),
        field('configs', array([
          field('name', 'string', '5+'),
          field('value', 'string', '5+', { nullableVersions: '5+' }),
          field('readOnly', 'bool', '5+'),
          field('configSource', 'int8', '5+', { default: -1, ignorable: true }),
          field('isSensitive', 'bool', '5+'),
        ]), '5+', { nullableVersions: '5+', ignorable: true }),
      ]), '0+'),
    ],
  }),
);
