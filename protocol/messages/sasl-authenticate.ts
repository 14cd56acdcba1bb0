import { api, field, message, type ApiSpec } from '../schema/types.js';

/** SaslAuthenticate (36): one round of SASL authentication bytes, framed as a Kafka request. */
const REQUEST = message({
  apiKey: 36,
  name: 'SaslAuthenticate',
  type: 'request',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [field('authBytes', 'bytes', '0+')],
});

const RESPONSE = message({
  apiKey: 36,
  name: 'SaslAuthenticate',
  type: 'response',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
    field('authBytes', 'bytes', '0+'),
    field('sessionLifetimeMs', 'int64', '1+', { default: 0n, ignorable: true }),
  ],
});

export const SASL_AUTHENTICATE: ApiSpec = api(REQUEST, RESPONSE);
