import { api, field, message, type ApiSpec } from '../schema/types.js';

/** EndTxn (26): a transactional producer commits or aborts its transaction (v5 is marked unstable in the reference). */
const REQUEST = message({
  apiKey: 26,
  name: 'EndTxn',
  type: 'request',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    field('transactionalId', 'string', '0+'),
    field('producerId', 'int64', '0+'),
    field('producerEpoch', 'int16', '0+'),
    field('committed', 'bool', '0+'),
  ],
});

const RESPONSE = message({
  apiKey: 26,
  name: 'EndTxn',
  type: 'response',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('producerId', 'int64', '5+', { default: -1n, ignorable: true }),
    field('producerEpoch', 'int16', '5+', { default: -1, ignorable: true }),
  ],
});

export const END_TXN: ApiSpec = api(REQUEST, RESPONSE);
