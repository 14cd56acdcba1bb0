import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DescribeClientQuotas (48): the quotas matching entity filters (kafka-configs --describe lists them with SCRAM users). */
export const DESCRIBE_CLIENT_QUOTAS: ApiSpec = api(
  message({
    apiKey: 48,
    name: 'DescribeClientQuotas',
    type: 'request',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      field('components', array([
        field('entityType', 'string', '0+'),
        field('matchType', 'int8', '0+'),
        field('match', 'string', '0+', { nullableVersions: '0+' }),
      ]), '0+'),
      field('strict', 'bool', '0+'),
    ],
  }),
  message({
    apiKey: 48,
    name: 'DescribeClientQuotas',
    type: 'response',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
      field('entries', array([
        field('entity', array([field('entityType', 'string', '0+'), field('entityName', 'string', '0+', { nullableVersions: '0+' })]), '0+'),
        field('values', array([field('key', 'string', '0+'), field('value', 'float64', '0+')]), '0+'),
      ]), '0+', { nullableVersions: '0+' }),
    ],
  }),
);
