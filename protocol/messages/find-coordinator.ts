import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** FindCoordinator (10): which broker coordinates a group or transactional id; v4+ asks for several keys at once. */
const REQUEST = message({
  apiKey: 10,
  name: 'FindCoordinator',
  type: 'request',
  validVersions: '0-6',
  flexibleVersions: '3+',
  fields: [
    field('key', 'string', '0-3'),
    field('keyType', 'int8', '1+', { default: 0 }),
    field('coordinatorKeys', array('string'), '4+'),
  ],
});

const RESPONSE = message({
  apiKey: 10,
  name: 'FindCoordinator',
  type: 'response',
  validVersions: '0-6',
  flexibleVersions: '3+',
  fields: [
    field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
    field('errorCode', 'int16', '0-3'),
    field('errorMessage', 'string', '1-3', { nullableVersions: '1-3', ignorable: true }),
    field('nodeId', 'int32', '0-3'),
    field('host', 'string', '0-3'),
    field('port', 'int32', '0-3'),
    field(
      'coordinators',
      array([
        field('key', 'string', '4+'),
        field('nodeId', 'int32', '4+'),
        field('host', 'string', '4+'),
        field('port', 'int32', '4+'),
        field('errorCode', 'int16', '4+'),
        field('errorMessage', 'string', '4+', { nullableVersions: '4+', ignorable: true }),
      ]),
      '4+',
    ),
  ],
});

export const FIND_COORDINATOR: ApiSpec = api(REQUEST, RESPONSE);
