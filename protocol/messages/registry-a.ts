import type { ApiSpec } from '../schema/types.js';
import { ALTER_CONFIGS } from './alter-configs.js';
import { API_VERSIONS } from './api-versions.js';
import { CREATE_PARTITIONS } from './create-partitions.js';
import { CREATE_TOPICS } from './create-topics.js';
import { DELETE_RECORDS } from './delete-records.js';
import { DELETE_TOPICS } from './delete-topics.js';
import { DESCRIBE_CLUSTER } from './describe-cluster.js';
import { DESCRIBE_CONFIGS } from './describe-configs.js';
import { DESCRIBE_LOG_DIRS } from './describe-log-dirs.js';
import { DESCRIBE_TOPIC_PARTITIONS } from './describe-topic-partitions.js';
import { FETCH } from './fetch.js';
import { INCREMENTAL_ALTER_CONFIGS } from './incremental-alter-configs.js';
import { INIT_PRODUCER_ID } from './init-producer-id.js';
import { LIST_OFFSETS } from './list-offsets.js';
import { METADATA } from './metadata.js';
import { OFFSET_FOR_LEADER_EPOCH } from './offset-for-leader-epoch.js';
import { PRODUCE } from './produce.js';

/** Declarations of the produce/fetch/metadata/admin APIs. Add each API here as it is declared. */
export const API_SPECS_A: readonly ApiSpec[] = [
  PRODUCE,
  FETCH,
  LIST_OFFSETS,
  METADATA,
  CREATE_TOPICS,
  DELETE_TOPICS,
  API_VERSIONS,
  DELETE_RECORDS,
  INIT_PRODUCER_ID,
  OFFSET_FOR_LEADER_EPOCH,
  DESCRIBE_CONFIGS,
  ALTER_CONFIGS,
  CREATE_PARTITIONS,
  INCREMENTAL_ALTER_CONFIGS,
  DESCRIBE_CLUSTER,
  DESCRIBE_LOG_DIRS,
  DESCRIBE_TOPIC_PARTITIONS,
];
