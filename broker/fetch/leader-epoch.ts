/**
 * Leader epochs on a single broker: every partition has had one leader, this broker, since it was created,
 * so its leader epoch is 0 forever. Requests that carry a current leader epoch are fenced as Kafka fences
 * them (Partition.getLocalLog / checkCurrentLeaderEpoch): -1 means "don't check".
 */
import { ErrorCode } from '../../protocol/error-codes.js';

export const LEADER_EPOCH = 0;
export const NO_EPOCH = -1;

/** NONE, FENCED_LEADER_EPOCH (the client's epoch is older) or UNKNOWN_LEADER_EPOCH (newer than ours). */
export function checkCurrentLeaderEpoch(currentLeaderEpoch: number): number {
  if (currentLeaderEpoch === NO_EPOCH) return ErrorCode.NONE;
  if (currentLeaderEpoch < LEADER_EPOCH) return ErrorCode.FENCED_LEADER_EPOCH;
  if (currentLeaderEpoch > LEADER_EPOCH) return ErrorCode.UNKNOWN_LEADER_EPOCH;
  return ErrorCode.NONE;
}
