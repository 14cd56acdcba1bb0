/**
 * Writes to every partition of a topic while a group consumes it: one record per partition per round,
 * keys `k<n>` in send order, until stopped (or after `maxRounds`, so it always ends by itself). It remembers
 * the offset the broker acknowledged for each record, which is what consumers are checked against. The
 * producer is kafkajs in this process: the client under test is the consumer side.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';

export class BackgroundProducer {
  /** `partition:offset` -> key of every acknowledged record. */
  readonly produced = new Map<string, string>();
  private stopping = false;
  private loop: Promise<void> | undefined;
  private next = 0;

  private constructor(
    private readonly producer: Producer,
    private readonly topic: string,
    private readonly partitions: number,
  ) {}

  static async connect(bootstrap: string, topic: string, partitions: number): Promise<BackgroundProducer> {
    const producer = new Kafka({ brokers: [bootstrap], clientId: 'group-suite-producer', logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    return new BackgroundProducer(producer, topic, partitions);
  }

  /** Sends one round now and returns when it is acknowledged. */
  async round(): Promise<void> {
    const messages = Array.from({ length: this.partitions }, (_, partition) => ({ partition, key: `k${this.next++}`, value: 'v' }));
    const res = await this.producer.send({ topic: this.topic, acks: -1, messages });
    for (const m of messages) {
      const meta = res.find((r) => r.partition === m.partition);
      if (meta?.baseOffset === undefined) throw new Error(`no offset acknowledged for partition ${m.partition}`);
      this.produced.set(`${m.partition}:${meta.baseOffset}`, m.key);
    }
  }

  start(intervalMs: number, maxRounds: number): void {
    this.loop = (async () => {
      for (let i = 0; i < maxRounds && !this.stopping; i++) {
        await this.round();
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
  }

  /** Sends `count` more records to one partition. */
  async send(partition: number, count: number): Promise<void> {
    const messages = Array.from({ length: count }, () => ({ partition, key: `k${this.next++}`, value: 'v' }));
    const [meta] = await this.producer.send({ topic: this.topic, acks: -1, messages });
    if (meta?.baseOffset === undefined) throw new Error(`no offset acknowledged for partition ${partition}`);
    messages.forEach((m, i) => this.produced.set(`${partition}:${Number(meta.baseOffset) + i}`, m.key));
  }

  /** Stops the loop (rejecting if a send failed). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }

  async close(): Promise<void> {
    this.stopping = true;
    await this.loop?.catch(() => undefined);
    await this.producer.disconnect();
  }
}
