import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** IncrementalAlterConfigs (key 44): set, delete, append to or subtract from individual config entries. */
export const INCREMENTAL_ALTER_CONFIGS: ApiSpec = api(
  message({
    apiKey: 44,
    name: 'IncrementalAlterConfigs',
    type: 'request',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      field('resources', array([
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        field('configs', array([
          field('name', 'string', '0+'),
          field('configOperation', 'int8', '0+'),
          field('value', 'string', '0+', { nullableVersions: '0+' }),
        ]), '0+'),
      ]), '0+'),
      field('validateOnly', 'bool', '0+'),
    ],
  }),
  message({
    apiKey: 44,
    name: 'IncrementalAlterConfigs',
    type: 'response',
    validVersions: '0-1',
    flexibleVersions: '1+',
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
