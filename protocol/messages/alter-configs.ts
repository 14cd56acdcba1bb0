import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** AlterConfigs (key 33): replace the whole configuration of topics or brokers (legacy; see IncrementalAlterConfigs). */
export const ALTER_CONFIGS: ApiSpec = api(
  message({
    apiKey: 33,
    name: 'AlterConfigs',
    type: 'request',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      field('resources', array([
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        field('configs', array([
          field('name', 'string', '0+'),
          field('value', 'string', '0+', { nullableVersions: '0+' }),
        ]), '0+'),
      ]), '0+'),
      field('validateOnly', 'bool', '0+'),
    ],
  }),
  message({
    apiKey: 33,
    name: 'AlterConfigs',
    type: 'response',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('responses', array([
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
      ]), '0+'),
    ],
  }),
);
