import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** ApiVersions (key 18): the API version ranges and features the broker supports. */
export const API_VERSIONS: ApiSpec = api(
  message({
    apiKey: 18,
    name: 'ApiVersions',
    type: 'request',
    validVersions: '0-4',
    flexibleVersions: '3+',
    fields: [
      field('clientSoftwareName', 'string', '3+', { ignorable: true }),
      field('clientSoftwareVersion', 'string', '3+', { ignorable: true }),
    ],
  }),
  message({
    apiKey: 18,
    name: 'ApiVersions',
    type: 'response',
    validVersions: '0-4',
    flexibleVersions: '3+',
    fields: [
      field('errorCode', 'int16', '0+'),
      field('apiKeys', array([
        field('apiKey', 'int16', '0+'),
        field('minVersion', 'int16', '0+'),
        field('maxVersion', 'int16', '0+'),
      ]), '0+'),
      field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
      field('supportedFeatures', array([
        field('name', 'string', '3+'),
        field('minVersion', 'int16', '3+'),
        field('maxVersion', 'int16', '3+'),
      ]), '3+', { taggedVersions: '3+', tag: 0, ignorable: true }),
      field('finalizedFeaturesEpoch', 'int64', '3+', { taggedVersions: '3+', tag: 1, default: -1n, ignorable: true }),
      field('finalizedFeatures', array([
        field('name', 'string', '3+'),
        field('maxVersionLevel', 'int16', '3+'),
        field('minVersionLevel', 'int16', '3+'),
      ]), '3+', { taggedVersions: '3+', tag: 2, ignorable: true }),
      field('zkMigrationReady', 'bool', '3+', { taggedVersions: '3+', tag: 3, default: false, ignorable: true }),
    ],
  }),
);
