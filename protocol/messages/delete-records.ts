import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DeleteRecords (key 21): advance partitions' log start offsets, deleting the records before them. */
export const DELETE_RECORDS: ApiSpec = api(
  message({
    apiKey: 21,
    name: 'DeleteRecords',
    type: 'request',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      field('topics', array([
        field('name', 'string', '0+'),
        field('partitions', array([
          field('partitionIndex', 'int32', '0+'),
          field('offset', 'int64', '0+'),
        ]), '0+'),
      ]), '0+'),
      field('timeoutMs', 'int32', '0+'),
    ],
  }),
  message({
    apiKey: 21,
    name: 'DeleteRecords',
    type: 'response',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('topics', array([
        field('name', 'string', '0+'),
        field('partitions', array([
          field('partitionIndex', 'int32', '0+'),
          field('lowWatermark', 'int64', '0+'),
          field('errorCode', 'int16', '0+'),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
);
