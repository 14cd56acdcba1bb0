import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** JoinGroup (11): a member joins (or rejoins) a classic consumer group and learns the generation and leader. */
const REQUEST = message({
  apiKey: 11,
  name: 'JoinGroup',
  type: 'request',
  validVersions: '0-9',
  flexibleVersions: '6+',
  fields: [
    field('groupId', 'string', '0+'),
    field('sessionTimeoutMs', 'int32', '0+'),
    field('rebalanceTimeoutMs', 'int32', '1+', { default: -1, ignorable: true }),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '5+', { nullableVersions: '5+', default: null }),
    field('protocolType', 'string', '0+'),
    field('protocols', array([field('name', 'string', '0+'), field('metadata', 'bytes', '0+')]), '0+'),
    field('reason', 'string', '8+', { nullableVersions: '8+', default: null, ignorable: true }),
  ],
});

const RESPONSE = message({
  apiKey: 11,
  name: 'JoinGroup',
  type: 'response',
  validVersions: '0-9',
  flexibleVersions: '6+',
  fields: [
    field('throttleTimeMs', 'int32', '2+', { ignorable: true }),
    field('errorCode', 'int16', '0+'),
    field('generationId', 'int32', '0+', { default: -1 }),
    field('protocolType', 'string', '7+', { nullableVersions: '7+', default: null, ignorable: true }),
    field('protocolName', 'string', '0+', { nullableVersions: '7+' }),
    field('leader', 'string', '0+'),
    field('skipAssignment', 'bool', '9+', { default: false }),
    field('memberId', 'string', '0+'),
    field(
      'members',
      array([
        field('memberId', 'string', '0+'),
        field('groupInstanceId', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
        field('metadata', 'bytes', '0+'),
      ]),
      '0+',
    ),
  ],
});

export const JOIN_GROUP: ApiSpec = api(REQUEST, RESPONSE);
