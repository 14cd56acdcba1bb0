import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** ListGroups (16): every group the broker coordinates, optionally filtered by state (v4+) and type (v5+). */
const REQUEST = message({
  apiKey: 16,
  name: 'ListGroups',
  type: 'request',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [field('statesFilter', array('string'), '4+'), field('typesFilter', array('string'), '5+')],
});

const RESPONSE = message({
  apiKey: 16,
  name: 'ListGroups',
  type: 'response',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
    field('errorCode', 'int16', '0+'),
    field(
      'groups',
      array([
        field('groupId', 'string', '0+'),
        field('protocolType', 'string', '0+'),
        field('groupState', 'string', '4+', { ignorable: true }),
        field('groupType', 'string', '5+', { ignorable: true }),
      ]),
      '0+',
    ),
  ],
});

export const LIST_GROUPS: ApiSpec = api(REQUEST, RESPONSE);
