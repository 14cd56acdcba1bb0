/**
 * What the partition logs tell the broker's metrics about their disk work: how long appends waited for their
 * turn, how long each write into a segment took, and how long each fsync took. Split this way, a slow Produce
 * shows whether it queued behind its partition's earlier work (a roll, other appends' writes) or whether
 * the write itself was slow (the kernel, the thread pool, or the broker's thread seeing it late).
 */
export interface LogObserver {
  /** An append waited `seconds` from the call until its batches' write started (earlier writes and rolls of its partition). */
  appendWaited(seconds: number): void;
  /**
   * One write of `bytes` (one or more appends written together) into a segment took `seconds`, from the call
   * until the broker's thread saw it complete (the thread pool's queue and the event loop's delay included);
   * `inline` when the broker's thread made it itself (InlineWrites).
   */
  segmentWritten(bytes: number, seconds: number, inline: boolean): void;
  /** One fsync of a segment (with its indexes when it was sealed on a roll) took `seconds`. */
  flushed(seconds: number): void;
}
