/**
 * The one piece of the "consumer" embedded protocol the coordinator reads: the topics a member subscribes
 * to (ConsumerProtocolSubscription, every version starts `int16 version, array<string> topics`). OffsetDelete
 * uses it to refuse deleting offsets of a topic the group still consumes. Everything else in member
 * metadata and assignments is relayed untouched.
 */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';

/** The subscribed topics, or undefined if the bytes are not a consumer subscription. */
export function subscribedTopics(metadata: Buffer): string[] | undefined {
  try {
    let pos = 0;
    const version = metadata.readInt16BE(pos);
    pos += 2;
    if (version < 0) return undefined;
    const count = metadata.readInt32BE(pos);
    pos += 4;
    if (count < 0 || count * 2 > metadata.length - pos) return undefined;
    const topics: string[] = [];
    for (let i = 0; i < count; i++) {
      const len = metadata.readInt16BE(pos);
      pos += 2;
      if (len < 0 || pos + len > metadata.length) return undefined;
      topics.push(metadata.toString('utf8', pos, pos + len));
      pos += len;
    }
    return topics;
  } catch {
    return undefined;
  }
}
