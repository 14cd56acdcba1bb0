import type { ApiSpec } from '../schema/types.js';
import { CREATE_ACLS, DELETE_ACLS, DESCRIBE_ACLS } from './acls.js';
import { ADD_OFFSETS_TO_TXN } from './add-offsets-to-txn.js';
import { ADD_PARTITIONS_TO_TXN } from './add-partitions-to-txn.js';
import { ALTER_CLIENT_QUOTAS } from './alter-client-quotas.js';
import { CONSUMER_GROUP_HEARTBEAT } from './consumer-group-heartbeat.js';
import { DELETE_GROUPS } from './delete-groups.js';
import { DESCRIBE_CLIENT_QUOTAS } from './describe-client-quotas.js';
import { DESCRIBE_GROUPS } from './describe-groups.js';
import { DESCRIBE_PRODUCERS } from './describe-producers.js';
import { DESCRIBE_TRANSACTIONS } from './describe-transactions.js';
import { END_TXN } from './end-txn.js';
import { FIND_COORDINATOR } from './find-coordinator.js';
import { HEARTBEAT } from './heartbeat.js';
import { JOIN_GROUP } from './join-group.js';
import { LEAVE_GROUP } from './leave-group.js';
import { LIST_GROUPS } from './list-groups.js';
import { LIST_TRANSACTIONS } from './list-transactions.js';
import { OFFSET_COMMIT } from './offset-commit.js';
import { OFFSET_DELETE } from './offset-delete.js';
import { OFFSET_FETCH } from './offset-fetch.js';
import { SASL_AUTHENTICATE } from './sasl-authenticate.js';
import { SASL_HANDSHAKE } from './sasl-handshake.js';
import { SYNC_GROUP } from './sync-group.js';
import { TXN_OFFSET_COMMIT } from './txn-offset-commit.js';
import { ALTER_USER_SCRAM_CREDENTIALS, DESCRIBE_USER_SCRAM_CREDENTIALS } from './user-scram-credentials.js';
import { WRITE_TXN_MARKERS } from './write-txn-markers.js';

/** Declarations of the group, offset, SASL, ACL and transaction APIs. Add each API here as it is declared. */
export const API_SPECS_B: readonly ApiSpec[] = [
  OFFSET_COMMIT, // 8
  OFFSET_FETCH, // 9
  FIND_COORDINATOR, // 10
  JOIN_GROUP, // 11
  HEARTBEAT, // 12
  LEAVE_GROUP, // 13
  SYNC_GROUP, // 14
  DESCRIBE_GROUPS, // 15
  LIST_GROUPS, // 16
  SASL_HANDSHAKE, // 17
  ADD_PARTITIONS_TO_TXN, // 24
  ADD_OFFSETS_TO_TXN, // 25
  END_TXN, // 26
  WRITE_TXN_MARKERS, // 27
  TXN_OFFSET_COMMIT, // 28
  DESCRIBE_ACLS, // 29
  CREATE_ACLS, // 30
  DELETE_ACLS, // 31
  SASL_AUTHENTICATE, // 36
  DELETE_GROUPS, // 42
  OFFSET_DELETE, // 47
  DESCRIBE_CLIENT_QUOTAS, // 48
  ALTER_CLIENT_QUOTAS, // 49
  DESCRIBE_USER_SCRAM_CREDENTIALS, // 50
  ALTER_USER_SCRAM_CREDENTIALS, // 51
  DESCRIBE_PRODUCERS, // 61
  DESCRIBE_TRANSACTIONS, // 65
  LIST_TRANSACTIONS, // 66
  CONSUMER_GROUP_HEARTBEAT, // 68
];
