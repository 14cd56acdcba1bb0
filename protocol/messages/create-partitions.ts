import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** CreatePartitions (key 37): raise the partition count of existing topics. */
export const CREATE_PARTITIONS: ApiSpec = api(
  message({
    apiKey: 37,
    name: 'CreatePartitions',
    type: 'request',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      field('topics', array([
        field('name', 'string', '0+'),
        field('count', 'int32', '0+'),
        field('assignments', array([
          field('brokerIds', array('int32'), '0+'),
        ]), '0+', { nullableVersions: '0+' }),
      ]), '0+'),
      field('timeoutMs', 'int32', '0+'),
      field('validateOnly', 'bool', '0+'),
    ],
  }),
  message({
    apiKey: 37,
    name: 'CreatePartitions',
    type: 'response',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('results', array([
        field('name', 'string', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      ]), '0+'),
    ],
  }),
);
