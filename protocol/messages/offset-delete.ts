import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** OffsetDelete (47): an admin removes a group's committed offsets for some partitions. */
const REQUEST = message({
  apiKey: 47,
  name: 'OffsetDelete',
  type: 'request',
  validVersions: '0',
  flexibleVersions: 'none',
  fields: [
    field('groupId', 'string', '0+'),
    field(
      'topics',
      array([field('name', 'string', '0+'), field('partitions', array([field('partitionIndex', 'int32', '0+')]), '0+')]),
      '0+',
    ),
  ],
});

const RESPONSE = message({
  apiKey: 47,
  name: 'OffsetDelete',
  type: 'response',
  validVersions: '0',
  flexibleVersions: 'none',
  fields: [
    field('errorCode', 'int16', '0+'),
    field('throttleTimeMs', 'int32', '0+', { ignorable: true }),
    field(
      'topics',
      array([
        field('name', 'string', '0+'),
        field('partitions', array([field('partitionIndex', 'int32', '0+'), field('errorCode', 'int16', '0+')]), '0+'),
      ]),
      '0+',
    ),
  ],
});

export const OFFSET_DELETE: ApiSpec = api(REQUEST, RESPONSE);
