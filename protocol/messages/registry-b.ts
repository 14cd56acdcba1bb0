import type { ApiSpec } from '../schema/types.js';
import { addOffsetsToTxnApi } from './add-offsets-to-txn.js';
import { addPartitionsToTxnApi } from './add-partitions-to-txn.js';
import { consumerGroupHeartbeatApi } from './consumer-group-heartbeat.js';
import { deleteGroupsApi } from './delete-groups.js';
import { describeGroupsApi } from './describe-groups.js';
import { describeProducersApi } from './describe-producers.js';
import { endTxnApi } from './end-txn.js';
import { findCoordinatorApi } from './find-coordinator.js';
import { heartbeatApi } from './heartbeat.js';
import { joinGroupApi } from './join-group.js';
import { leaveGroupApi } from './leave-group.js';
import { listGroupsApi } from './list-groups.js';
import { offsetCommitApi } from './offset-commit.js';
import { offsetDeleteApi } from './offset-delete.js';
import { offsetFetchApi } from './offset-fetch.js';
import { saslAuthenticateApi } from './sasl-authenticate.js';
import { saslHandshakeApi } from './sasl-handshake.js';
import { syncGroupApi } from './sync-group.js';
import { txnOffsetCommitApi } from './txn-offset-commit.js';
import { writeTxnMarkersApi } from './write-txn-markers.js';

/** Declarations of the group, offset, SASL and transaction APIs. Add each API here as it is declared. */
export const API_SPECS_B: readonly ApiSpec[] = [
  offsetCommitApi, // 8
  offsetFetchApi, // 9
  findCoordinatorApi, // 10
  joinGroupApi, // 11
  heartbeatApi, // 12
  leaveGroupApi, // 13
  syncGroupApi, // 14
  describeGroupsApi, // 15
  listGroupsApi, // 16
  saslHandshakeApi, // 17
  addPartitionsToTxnApi, // 24
  addOffsetsToTxnApi, // 25
  endTxnApi, // 26
  writeTxnMarkersApi, // 27
  txnOffsetCommitApi, // 28
  saslAuthenticateApi, // 36
  deleteGroupsApi, // 42
  offsetDeleteApi, // 47
  describeProducersApi, // 61
  consumerGroupHeartbeatApi, // 68
];
