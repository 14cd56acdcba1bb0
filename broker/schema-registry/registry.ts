/**
 * The built-in schema registry: a broker HTTP service (default port 8081) speaking Confluent Schema
 * Registry's REST API, whose state lives in the broker's own `_schemas` topic. Started by the broker after
 * its logs are open (it replays the topic), stopped before they close. In-process readers (tiering) use
 * `view`, which answers synchronously and changes only after a change is durable.
 */
import type { Logger } from '../logger.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import type { RemoteLogReader } from '../tiering/broker-tiering.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { RegistryHttpServer, type RegistryHttpOptions } from './http.js';
import type { SchemaRegistryView } from './model.js';
import { TopicRegistryLog } from './schema-log.js';
import { SchemaStore } from './store.js';

export interface SchemaRegistryOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly topics: TopicManager;
  readonly appender: PartitionAppender;
  readonly tiering?: RemoteLogReader;
  readonly log: Logger;
  readonly maxBodyBytes?: number;
  /** HTTPS and authentication (broker/security/http-auth.ts builds them from the config). */
  readonly createServer?: RegistryHttpOptions['createServer'];
  readonly auth?: RegistryHttpOptions['auth'];
}

export class SchemaRegistry {
  private constructor(
    readonly store: SchemaStore,
    private readonly http: RegistryHttpServer,
    /** The bound port. */
    readonly port: number,
    readonly host: string,
  ) {}

  static async start(options: SchemaRegistryOptions): Promise<SchemaRegistry> {
    const started = Date.now();
    const log = await TopicRegistryLog.open({ topics: options.topics, appender: options.appender, log: options.log, ...(options.tiering ? { tiering: options.tiering } : {}) });
    const { store, records } = await SchemaStore.open(log);
    const http = new RegistryHttpServer(store, {
      host: options.host,
      port: options.port,
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
      ...(options.createServer ? { createServer: options.createServer } : {}),
      ...(options.auth ? { auth: options.auth } : {}),
    });
    let bound;
    try {
      bound = await http.start();
    } catch (err) {
      throw new Error(`cannot start the schema registry on ${options.host}:${options.port} (${(err as Error).message}); free the port, pick another with schema.registry.port, or set it to -1`, { cause: err });
    }
    options.log.info('schema registry started', {
      url: `${bound.tls ? 'https' : 'http'}://${bound.host.includes(':') ? `[${bound.host}]` : bound.host}:${bound.port}`,
      replayedRecords: records,
      subjects: store.state.subjectNames().length,
      maxId: store.state.maxId,
      ms: Date.now() - started,
    });
    return new SchemaRegistry(store, http, bound.port, bound.host);
  }

  /** The registry as in-process code reads it. */
  get view(): SchemaRegistryView {
    return this.store.state;
  }

  stop(): Promise<void> {
    return this.http.close();
  }
}
