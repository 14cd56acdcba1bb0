import { api, array, field, message, struct, type ApiSpec } from '../schema/types.js';

/** ConsumerGroupHeartbeat (68): the KIP-848 consumer protocol's single call to join, stay in and leave a group (v1 is marked unstable in the reference). */

/** Partitions of one topic, by topic id; used by the request's owned partitions and the response's assignment. */
const topicPartitions = struct([field('topicId', 'uuid', '0+'), field('partitions', array('int32'), '0+')]);

const REQUEST = message({
  apiKey: 68,
  name: 'ConsumerGroupHeartbeat',
  type: 'request',
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    field('groupId', 'string', '0+'),
    field('memberId', 'string', '0+'),
    field('memberEpoch', 'int32', '0+'),
    field('instanceId', 'string', '0+', { nullableVersions: '0+', default: null }),
    field('rackId', 'string', '0+', { nullableVersions: '0+', default: null }),
    field('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
    field('subscribedTopicNames', array('string'), '0+', { nullableVersions: '0+', default: null }),
    field('subscribedTopicRegex', 'string', '1+', { nullableVersions: '1+', default: null }),
    field('serverAssignor', 'string', '0+', { nullableVersions: '0+', default: null }),
    field('topicPartitions', array(topicPartitions), '0+', { nullableVersions: '0+', default: null }),
  ],
});

const RESPONSE = message({
  apiKey: 68,
  name: 'ConsumerGroupHeartbeat',
  type: 'response',
  validVersions: '0-1',
  flexibleVersions: '0+',
  fields: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('errorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
    field('memberId', 'string', '0+', { nullableVersions: '0+', default: null }),
    field('memberEpoch', 'int32', '0+'),
    field('heartbeatIntervalMs', 'int32', '0+'),
    field('assignment', struct([field('topicPartitions', array(topicPartitions), '0+')]), '0+', {
      nullableVersions: '0+',
      default: null,
    }),
  ],
});

export const CONSUMER_GROUP_HEARTBEAT: ApiSpec = api(REQUEST, RESPONSE);
