import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DeleteGroups (42): an admin removes empty consumer groups and their committed offsets. */
const REQUEST = message({
  apiKey: 42,
  name: 'DeleteGroups',
  type: 'request',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [field('groupsNames', array('string'), '0+')],
});

const RESPONSE = message({
  apiKey: 42,
  name: 'DeleteGroups',
  type: 'response',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field('results', array([field('groupId', 'string', '0+'), field('errorCode', 'int16', '0+')]), '0+'),
  ],
});

export const DELETE_GROUPS: ApiSpec = api(REQUEST, RESPONSE);
