import { api, array, field, message, type ApiSpec } from '../schema/types.js';

const ENTITY = array([field('entityType', 'string', '0+'), field('entityName', 'string', '0+', { nullableVersions: '0+' })]);

/**
 * AlterClientQuotas (49): sets or removes quota values (producer_byte_rate, consumer_byte_rate, ...) of
 * entities (user, client-id, ip; a null name is the default entity), as `kafka-configs --alter --add-config
 * producer_byte_rate=...` sends it.
 */
export const ALTER_CLIENT_QUOTAS: ApiSpec = api(
  message({
    apiKey: 49,
    name: 'AlterClientQuotas',
    type: 'request',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      field('entries', array([
        field('entity', ENTITY, '0+'),
        field('ops', array([field('key', 'string', '0+'), field('value', 'float64', '0+'), field('remove', 'bool', '0+')]), '0+'),
      ]), '0+'),
      field('validateOnly', 'bool', '0+'),
    ],
  }),
  message({
    apiKey: 49,
    name: 'AlterClientQuotas',
    type: 'response',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('entries', array([
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
        field('entity', ENTITY, '0+'),
      ]), '0+'),
    ],
  }),
);
