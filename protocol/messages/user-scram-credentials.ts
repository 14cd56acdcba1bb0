import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/**
 * DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): the SCRAM credentials of users, as
 * `kafka-configs --entity-type users` manages them. Mechanism 1 is SCRAM-SHA-256, 2 SCRAM-SHA-512. An
 * upsertion carries the salted password (Hi(password, salt, iterations)), never the password itself.
 */
export const DESCRIBE_USER_SCRAM_CREDENTIALS: ApiSpec = api(
  message({
    apiKey: 50,
    name: 'DescribeUserScramCredentials',
    type: 'request',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [field('users', array([field('name', 'string', '0+')]), '0+', { nullableVersions: '0+' })],
  }),
  message({
    apiKey: 50,
    name: 'DescribeUserScramCredentials',
    type: 'response',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
      field('results', array([
        field('user', 'string', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
        field('credentialInfos', array([field('mechanism', 'int8', '0+'), field('iterations', 'int32', '0+')]), '0+'),
      ]), '0+'),
    ],
  }),
);

export const ALTER_USER_SCRAM_CREDENTIALS: ApiSpec = api(
  message({
    apiKey: 51,
    name: 'AlterUserScramCredentials',
    type: 'request',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      field('deletions', array([field('name', 'string', '0+'), field('mechanism', 'int8', '0+')]), '0+'),
      field('upsertions', array([
        field('name', 'string', '0+'),
        field('mechanism', 'int8', '0+'),
        field('iterations', 'int32', '0+'),
        field('salt', 'bytes', '0+'),
        field('saltedPassword', 'bytes', '0+'),
      ]), '0+'),
    ],
  }),
  message({
    apiKey: 51,
    name: 'AlterUserScramCredentials',
    type: 'response',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('results', array([
        field('user', 'string', '0+'),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
      ]), '0+'),
    ],
  }),
);
