import { api, field, message, type ApiSpec } from '../schema/types.js';

/** InitProducerId (key 22): allocate (or bump the epoch of) a producer id for idempotent/transactional producers. */
export const INIT_PRODUCER_ID: ApiSpec = api(
  message({
    apiKey: 22,
    name: 'InitProducerId',
    type: 'request',
    validVersions: '0-5',
    flexibleVersions: '2+',
    fields: [
      field('transactionalId', 'string', '0+', { nullableVersions: '0+' }),
      field('transactionTimeoutMs', 'int32', '0+'),
      field('producerId', 'int64', '3+', { default: -1n }),
      field('producerEpoch', 'int16', '3+', { default: -1 }),
    ],
  }),
  message({
    apiKey: 22,
    name: 'InitProducerId',
    type: 'response',
    validVersions: '0-5',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+', { ignorable: true }),
      field('errorCode', 'int16', '0+'),
      field('producerId', 'int64', '0+', { default: -1n }),
      field('producerEpoch', 'int16', '0+'),
    ],
  }),
);
