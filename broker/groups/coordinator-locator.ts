/**
 * Which broker coordinates a group or transactional id. The assignment is cluster-wide state: with one
 * broker it is always this broker; a multi-broker mode will answer from the metadata store (for example by
 * hashing the key over the brokers, as Kafka hashes it over __consumer_offsets partitions).
 */
export const CoordinatorKeyType = { GROUP: 0, TRANSACTION: 1 } as const;
export type CoordinatorKeyType = (typeof CoordinatorKeyType)[keyof typeof CoordinatorKeyType];

export interface CoordinatorNode {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

export interface CoordinatorLocator {
  /** The coordinator of `key`, or undefined when none is available right now. */
  coordinatorFor(key: string, keyType: CoordinatorKeyType, listener?: string): CoordinatorNode | undefined;
}

/** One broker coordinates everything. Reads the identity lazily: its port is known only after binding. */
export class SingleBrokerLocator implements CoordinatorLocator {
  constructor(private readonly self: CoordinatorNode & { readonly endpoints?: ReadonlyMap<string, { readonly host: string; readonly port: number }> }) {}

  /** This broker, at the address of the listener the client asked through. */
  coordinatorFor(_key?: string, _keyType?: CoordinatorKeyType, listener?: string): CoordinatorNode {
    const ep = listener === undefined ? undefined : this.self.endpoints?.get(listener);
    return { nodeId: this.self.nodeId, host: ep?.host ?? this.self.host, port: ep?.port ?? this.self.port };
  }
}
