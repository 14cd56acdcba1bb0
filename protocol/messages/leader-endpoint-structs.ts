import { field, struct, type StructType } from '../schema/types.js';

/**
 * Structs that several Produce/Fetch responses share (KIP-951 leader discovery). Their fields are declared
 * `'0+'`: a struct's fields only reach the wire in the versions where the enclosing field is present.
 */

/** The current leader of a partition, sent with NOT_LEADER_OR_FOLLOWER-style errors. */
export const LEADER_ID_AND_EPOCH: StructType = struct([
  field('leaderId', 'int32', '0+', { default: -1 }),
  field('leaderEpoch', 'int32', '0+', { default: -1 }),
]);

/** How to reach a broker named in a CurrentLeader struct. */
export const NODE_ENDPOINT: StructType = struct([
  field('nodeId', 'int32', '0+'),
  field('host', 'string', '0+'),
  field('port', 'int32', '0+'),
  field('rack', 'string', '0+', { nullableVersions: '0+', default: null }),
]);
