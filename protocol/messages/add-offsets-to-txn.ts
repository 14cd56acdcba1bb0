import { api, field, message, type ApiSpec } from '../schema/types.js';

/** AddOffsetsToTxn (25): a transactional producer adds a consumer group's offset commit to its transaction. */
const REQUEST = message({
  apiKey: 25,
  name: 'AddOffsetsToTxn',
  type: 'request',
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [
    field('transactionalId', 'string', '0+'),
    field('producerId', 'int64', '0+'),
    field('producerEpoch', 'int16', '0+'),
    field('groupId', 'string', '0+'),
  ],
});

const RESPONSE = message({
  apiKey: 25,
  name: 'AddOffsetsToTxn',
  type: 'response',
  validVersions: '0-4',
  flexibleVersions: '3+',
  fields: [field('throttleTimeMs', 'int32', '0+'), field('errorCode', 'int16', '0+')],
});

export const ADD_OFFSETS_TO_TXN: ApiSpec = api(REQUEST, RESPONSE);
