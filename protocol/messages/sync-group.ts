import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** SyncGroup (14): the leader hands out partition assignments and every member receives its own. */
const REQUEST = message({
  apiKey: 14,
  name: 'SyncGroup',
  type: 'request',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '0+'),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
    field('protocolType', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
    field('protocolName', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
    field('assignments', array([field('memberId', 'string', '0+'), field('assignment', 'bytes', '0+')]), '0+'),
  ],
});

const RESPONSE = message({
  apiKey: 14,
  name: 'SyncGroup',
  type: 'response',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
    field('errorCode', 'int16', '0+'),
    field('protocolType', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
    field('protocolName', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
    field('assignment', 'bytes', '0+'),
  ],
});

export const SYNC_GROUP: ApiSpec = api(REQUEST, RESPONSE);
