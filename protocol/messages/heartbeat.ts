import { api, field, message, type ApiSpec } from '../schema/types.js';

/** Heartbeat (12): a classic group member tells the coordinator it is alive and learns of rebalances. */
const REQUEST = message({
  apiKey: 12,
  name: 'Heartbeat',
  type: 'request',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    field('groupId', 'string', '0+'),
    field('generationId', 'int32', '0+'),
    field('memberId', 'string', '0+'),
    field('groupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
  ],
});

const RESPONSE = message({
  apiKey: 12,
  name: 'Heartbeat',
  type: 'response',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [field('throttleTimeMs', 'int32', '1+', { ignorable: true }), field('errorCode', 'int16', '0+')],
});

export const HEARTBEAT: ApiSpec = api(REQUEST, RESPONSE);
