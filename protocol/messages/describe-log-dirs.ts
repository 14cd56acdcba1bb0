import { api, array, field, message, type ApiSpec } from '../schema/types.js';

/**
 * DescribeLogDirs (key 35): the broker's log directories, with the size of every partition log in each and
 * (v4+) the volume's total and usable bytes. A null topic list means every partition.
 */
export const DESCRIBE_LOG_DIRS: ApiSpec = api(
  message({
    apiKey: 35,
    name: 'DescribeLogDirs',
    type: 'request',
    validVersions: '0-4',
    flexibleVersions: '2+',
    fields: [
      field('topics', array([
        field('topic', 'string', '0+'),
        field('partitions', array('int32'), '0+'),
      ]), '0+', { nullableVersions: '0+' }),
    ],
  }),
  message({
    apiKey: 35,
    name: 'DescribeLogDirs',
    type: 'response',
    validVersions: '0-4',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('errorCode', 'int16', '3+', { ignorable: true }),
      field('results', array([
        field('errorCode', 'int16', '0+'),
        field('logDir', 'string', '0+'),
        field('topics', array([
          field('name', 'string', '0+'),
          field('partitions', array([
            field('partitionIndex', 'int32', '0+'),
            field('partitionSize', 'int64', '0+'),
            field('offsetLag', 'int64', '0+'),
            field('isFutureKey', 'bool', '0+'),
          ]), '0+'),
        ]), '0+'),
        field('totalBytes', 'int64', '4+', { ignorable: true, default: -1n }),
        field('usableBytes', 'int64', '4+', { ignorable: true, default: -1n }),
      ]), '0+'),
    ],
  }),
);
