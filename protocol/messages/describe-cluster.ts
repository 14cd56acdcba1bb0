import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/** DescribeCluster (key 60): the cluster id, controller and brokers (or controllers, by endpoint type). */
export const DESCRIBE_CLUSTER: ApiSpec = api(
  message({
    apiKey: 60,
    name: 'DescribeCluster',
    type: 'request',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      field('includeClusterAuthorizedOperations', 'bool', '0+'),
      field('endpointType', 'int8', '1+', { default: 1 }),
    ],
  }),
  message({
    apiKey: 60,
    name: 'DescribeCluster',
    type: 'response',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      field('endpointType', 'int8', '1+', { default: 1 }),
      field('clusterId', 'string', '0+'),
      field('controllerId', 'int32', '0+', { default: -1 }),
      field('brokers', array([
        field('brokerId', 'int32', '0+'),
        field('host', 'string', '0+'),
        field('port', 'int32', '0+'),
        field('rack', 'string', '0+', { nullableVersions: '0+', default: null }),
      ]), '0+'),
      field('clusterAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
    ],
  }),
);
