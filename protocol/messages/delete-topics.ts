import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DeleteTopics (key 20): delete topics by name (v0-5) or by name or topic id (v6+). */
export const DELETE_TOPICS: ApiSpec = api(
  message({
    apiKey: 20,
    name: 'DeleteTopics',
    type: 'request',
    validVersions: '0-6',
    flexibleVersions: '4+',
    fields: [
      field('topics', array([
        field('name', 'string', '6+', { nullableVersions: '6+', default: null }),
        field('topicId', 'uuid', '6+'),
      ]), '6+'),
      field('topicNames', array('string'), '0-5', { ignorable: true }),
      field('timeoutMs', 'int32', '0+'),
    ],
  }),
  message({
    apiKey: 20,
    name: 'DeleteTopics',
    type: 'response',
    validVersions: '0-6',
    flexibleVersions: '4+',
    fields: [
      field('throttleTimeMs', 'int32', '1+', { ignorable: true }),
      field('responses', array([
        field('name', 'string', '0+', { nullableVersions: '6+' }),
        field('topicId', 'uuid', '6+', { ignorable: true }),
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      ]), '0+'),
    ],
  }),
);
