import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DescribeConfigs (key 32): the configuration entries of topics and brokers, with sources and synonyms. */
export const DESCRIBE_CONFIGS: ApiSpec = api(
  message({
    apiKey: 32,
    name: 'DescribeConfigs',
    type: 'request',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      field('resources', array([
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        field('configurationKeys', array('string'), '0+', { nullableVersions: '0+' }),
      ]), '0+'),
      field('includeSynonyms', 'bool', '1+', { default: false }),
      field('includeDocumentation', 'bool', '3+', { default: false }),
    ],
  }),
  message({
    apiKey: 32,
    name: 'DescribeConfigs',
    type: 'response',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('results', array([
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        field('configs', array([
          field('name', 'string', '0+'),
          field('value', 'string', '0+', { nullableVersions: '0+' }),
          field('readOnly', 'bool', '0+'),
          field('isDefault', 'bool', '0'),
          field('configSource', 'int8', '1+', { default: -1, ignorable: true }),
          field('isSensitive', 'bool', '0+'),
          field('synonyms', array([
            field('name', 'string', '1+'),
            field('value', 'string', '1+', { nullableVersions: '0+' }),
            field('source', 'int8', '1+'),
          ]), '1+', { ignorable: true }),
          field('configType', 'int8', '3+', { default: 0, ignorable: true }),
          field('documentation', 'string', '3+', { nullableVersions: '0+', ignorable: true }),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
);
