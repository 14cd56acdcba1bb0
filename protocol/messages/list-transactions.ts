import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/**
 * ListTransactions (66): the transactional ids a coordinator knows (KIP-664); v1 adds DurationFilter.
 * (kafka-clients 4.4 also has v2, TransactionalIdPattern; the project's reference definitions stop at v1.)
 */
const REQUEST = message({
  apiKey: 66,
  name: 'ListTransactions',
  type: 'request',
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    field('stateFilters', array('string'), '0+'),
    field('producerIdFilters', array('int64'), '0+'),
    field('durationFilter', 'int64', '1+', { default: -1n }),
  ],
});

const RESPONSE = message({
  apiKey: 66,
  name: 'ListTransactions',
  type: 'response',
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('unknownStateFilters', array('string'), '0+'),
    field('transactionStates', array([field('transactionalId', 'string', '0+'), field('producerId', 'int64', '0+'), field('transactionState', 'string', '0+')]), '0+'),
  ],
});

export const LIST_TRANSACTIONS: ApiSpec = api(REQUEST, RESPONSE);
