import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** SaslHandshake (17): the client names a SASL mechanism and learns which ones the broker enables. */
const REQUEST = message({
  apiKey: 17,
  name: 'SaslHandshake',
  type: 'request',
  validVersions: '0-1',
  flexibleVersions: 'none',
  fields: [field('mechanism', 'string', '0+')],
});

const RESPONSE = message({
  apiKey: 17,
  name: 'SaslHandshake',
  type: 'response',
  validVersions: '0-1',
  flexibleVersions: 'none',
  fields: [field('errorCode', 'int16', '0+'), field('mechanisms', array('string'), '0+')],
});

export const SASL_HANDSHAKE: ApiSpec = api(REQUEST, RESPONSE);
