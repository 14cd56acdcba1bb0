import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** WriteTxnMarkers (27): the transaction coordinator asks partition leaders to write commit or abort markers. */
const REQUEST = message({
  apiKey: 27,
  name: 'WriteTxnMarkers',
  type: 'request',
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    field(
      'markers',
      array([
        field('producerId', 'int64', '0+'),
        field('producerEpoch', 'int16', '0+'),
        field('transactionResult', 'bool', '0+'),
        field('topics', array([field('name', 'string', '0+'), field('partitionIndexes', array('int32'), '0+')]), '0+'),
        field('coordinatorEpoch', 'int32', '0+'),
      ]),
      '0+',
    ),
  ],
});

const RESPONSE = message({
  apiKey: 27,
  name: 'WriteTxnMarkers',
  type: 'response',
  validVersions: '0-1',
  flexibleVersions: '1+',
  fields: [
    field(
      'markers',
      array([
        field('producerId', 'int64', '0+'),
        field(
          'topics',
          array([
            field('name', 'string', '0+'),
            field('partitions', array([field('partitionIndex', 'int32', '0+'), field('errorCode', 'int16', '0+')]), '0+'),
          ]),
          '0+',
        ),
      ]),
      '0+',
    ),
  ],
});

export const WRITE_TXN_MARKERS: ApiSpec = api(REQUEST, RESPONSE);
