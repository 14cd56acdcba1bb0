import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DescribeGroups (15): state, protocol and members of classic groups, for admin tools. */
const REQUEST = message({
  apiKey: 15,
  name: 'DescribeGroups',
  type: 'request',
  validVersions: '0-5',
  flexibleVersions: '5+',
  fields: [field('groups', array('string'), '0+'), field('includeAuthorizedOperations', 'bool', '3+')],
});

const RESPONSE = message({
  apiKey: 15,
  name: 'DescribeGroups',
  type: 'response',
  validVersions: '0-5',
  flexibleVersions: '5+',
  fields: [
    field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
    field(
      'groups',
      array([
        field('errorCode', 'int16', '0+'),
        field('groupId', 'string', '0+'),
        field('groupState', 'string', '0+'),
        field('protocolType', 'string', '0+'),
        field('protocolData', 'string', '0+'),
        field(
          'members',
          array([
            field('memberId', 'string', '0+'),
            field('groupInstanceId', 'string', '4+', { nullableVersions: '4+', default: null, ignorable: true }),
            field('clientId', 'string', '0+'),
            field('clientHost', 'string', '0+'),
            field('memberMetadata', 'bytes', '0+'),
            field('memberAssignment', 'bytes', '0+'),
          ]),
          '0+',
        ),
        field('authorizedOperations', 'int32', '3+', { default: -2147483648 }),
      ]),
      '0+',
    ),
  ],
});

export const DESCRIBE_GROUPS: ApiSpec = api(REQUEST, RESPONSE);
