import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** LeaveGroup (13): one member (v0-2) or a batch of members (v3+) leave a classic group. */
const REQUEST = message({
  apiKey: 13,
  name: 'LeaveGroup',
  type: 'request',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0-2'),
    field(
      'members',
      array([
        field('memberId', 'string', '3+'),
        field('groupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
        field('reason', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      ]),
      '3+',
    ),
  ],
});

const RESPONSE = message({
  apiKey: 13,
  name: 'LeaveGroup',
  type: 'response',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
    field('errorCode', 'int16', '0+'),
    field(
      'members',
      array([
        field('memberId', 'string', '3+'),
        field('groupInstanceId', 'string', '3+', { nullableVersions: '3+' }),
        field('errorCode', 'int16', '3+'),
      ]),
      '3+',
    ),
  ],
});

export const LEAVE_GROUP: ApiSpec = api(REQUEST, RESPONSE);
