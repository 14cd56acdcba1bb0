/**
 * The broker: wires configuration, cluster metadata, partition logs, request handlers and the Kafka listener,
 * and shuts them down in order (stop accepting, finish in-flight requests, flush and close logs). The admin
 * HTTP port (broker/admin: health, readiness, metrics) starts first and stops last, so both can be watched.
 */
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { setLogAppendTime } from '../protocol/record-batch/record-batch.js';
import { parseListeners, usesSasl, usesTls, type ListenerSpec } from './config/listeners.js';
import type { BrokerConfig } from './config/settings.js';
import { RateLimitedLog, type Logger } from './logger.js';
import { LogManager, type TopicPartition } from './log/log-manager.js';
import { InlineWrites } from './log/inline-writes.js';
import { LogCleaner } from './log/cleaner/log-cleaner.js';
import { EmbeddedMetadataStore } from './metadata/embedded-metadata-store.js';
import type { MetadataStore } from './metadata/metadata-store.js';
import { Router } from './router.js';
import { KafkaServer } from './server/server.js';
import { FramePool } from './server/frame-pool.js';
import { ConnectionLimits, parseConnectionOverrides, resolveConnectionOverrides } from './server/connection-limits.js';
import { TlsContext } from './security/tls.js';
import { httpServerFactory } from './security/http-auth.js';
import { anyAuthentication, anyHttps, authenticationOn, httpsEnabled, HttpSecurity } from './security/http-services.js';
import { adminGuard, startingAdminGuard } from './admin/admin-auth.js';
import type { Denial } from './security/acls/access.js';
import { SaslAuthenticator } from './security/sasl-authenticator.js';
import { SaslHandshakeHandler } from './handlers/sasl-handshake.js';
import { CreateAclsHandler, DeleteAclsHandler, DescribeAclsHandler } from './handlers/acls.js';
import { authorizerFor, type AclAuthorizer } from './security/acls/authorizer.js';
import { AlterClientQuotasHandler, DescribeClientQuotasHandler } from './handlers/describe-client-quotas.js';
import { ClientQuotas } from './quotas/client-quotas.js';
import { QuotaThrottledHandler } from './quotas/quota-throttle.js';
import { SaslAuthenticateHandler } from './handlers/sasl-authenticate.js';
import { AlterUserScramCredentialsHandler, DescribeUserScramCredentialsHandler } from './handlers/user-scram-credentials.js';
import { logConfigFor, TopicManager } from './topics/topic-manager.js';
import type { BrokerIdentity } from './handlers/common.js';
import type { ApiHandler } from './handlers/handler.js';
import { AlterConfigsHandler, IncrementalAlterConfigsHandler } from './handlers/alter-configs.js';
import { CreatePartitionsHandler } from './handlers/create-partitions.js';
import { CreateTopicsHandler } from './handlers/create-topics.js';
import { DeleteTopicsHandler } from './handlers/delete-topics.js';
import { DescribeClusterHandler } from './handlers/describe-cluster.js';
import { DescribeConfigsHandler } from './handlers/describe-configs.js';
import { DescribeLogDirsHandler } from './handlers/describe-log-dirs.js';
import { DescribeTopicPartitionsHandler } from './handlers/describe-topic-partitions.js';
import { localLogDir } from './log/log-dir.js';
import { MetadataHandler } from './handlers/metadata.js';
import { DeleteRecordsHandler } from './handlers/delete-records.js';
import { FetchHandler } from './handlers/fetch.js';
import { InitProducerIdHandler } from './handlers/init-producer-id.js';
import { ListOffsetsHandler, locateRecordByTimestamp } from './handlers/list-offsets.js';
import { OffsetForLeaderEpochHandler } from './handlers/offset-for-leader-epoch.js';
import { ProduceHandler } from './handlers/produce.js';
import { FetchWaiters } from './fetch/fetch-waiters.js';
import { PartitionAppender } from './producers/partition-appender.js';
import { Groups } from './groups/groups.js';
import { SingleBrokerLocator } from './groups/coordinator-locator.js';
import { FindCoordinatorHandler } from './handlers/find-coordinator.js';
import { JoinGroupHandler } from './handlers/join-group.js';
import { SyncGroupHandler } from './handlers/sync-group.js';
import { HeartbeatHandler } from './handlers/heartbeat.js';
import { LeaveGroupHandler } from './handlers/leave-group.js';
import { OffsetCommitHandler } from './handlers/offset-commit.js';
import { OffsetFetchHandler } from './handlers/offset-fetch.js';
import { DescribeGroupsHandler } from './handlers/describe-groups.js';
import { ListGroupsHandler } from './handlers/list-groups.js';
import { DeleteGroupsHandler } from './handlers/delete-groups.js';
import { OffsetDeleteHandler } from './handlers/offset-delete.js';
import { AddOffsetsToTxnHandler } from './handlers/add-offsets-to-txn.js';
import { AddPartitionsToTxnHandler } from './handlers/add-partitions-to-txn.js';
import { DescribeProducersHandler } from './handlers/describe-producers.js';
import { DescribeTransactionsHandler } from './handlers/describe-transactions.js';
import { EndTxnHandler } from './handlers/end-txn.js';
import { ListTransactionsHandler } from './handlers/list-transactions.js';
import { TxnOffsetCommitHandler } from './handlers/txn-offset-commit.js';
import { WriteTxnMarkersHandler } from './handlers/write-txn-markers.js';
import { Transactions } from './transactions/transactions.js';
import { BrokerTiering } from './tiering/broker-tiering.js';
import { defaultSegmentCodec } from '../tiering/plugin/convert-codec.js';
import { startAdminPort, type AdminPort } from './admin/admin-port.js';
import { Readiness } from './admin/readiness.js';
import { SchemaRegistry } from './schema-registry/registry.js';

/**
 * Request frames (or record sets) given back and waiting for reuse, in all, per pool (frame-pool.ts). In
 * flight there are at most queued.max.requests frames per connection, each up to socket.request.max.bytes.
 */
const FRAME_POOL_IDLE_BYTES = 64 * 1024 * 1024;

/** What handlers may be given: the broker's services, never its internals. */
export interface BrokerServices {
  readonly config: BrokerConfig;
  readonly identity: BrokerIdentity;
  readonly metadata: MetadataStore;
  readonly logs: LogManager;
  readonly topics: TopicManager;
  readonly log: Logger;
  /** The produce path: per-partition ordered appends with idempotent-producer checks. */
  readonly appender: PartitionAppender;
  /** Fetch long polls, woken by the appender. */
  readonly fetchWaiters: FetchWaiters;
  /** The group coordinator and committed offsets. */
  readonly groups: Groups;
  /** The transaction coordinator. */
  readonly transactions: Transactions;
  /** Tiered storage (Iceberg tables), when remote.log.storage.system.enable is on. */
  readonly tiering?: BrokerTiering;
  /** The built-in schema registry, unless schema.registry.port is -1 (started after the Kafka listener). */
  schemaRegistry?: SchemaRegistry;
  /** Log compaction of cleanup.policy=compact topics, unless log.cleaner.enable is false. */
  readonly cleaner?: LogCleaner;
  /** SASL authentication, when a listener uses SASL_PLAINTEXT or SASL_SSL. */
  readonly sasl?: SaslAuthenticator;
  /** ACL authorization, when authorizer.class.name is set (handlers see it through HandlerContext.access). */
  readonly authorizer?: AclAuthorizer;
  /** Client quotas (producer_byte_rate, consumer_byte_rate), stored in the metadata store. */
  readonly quotas: ClientQuotas;
  /** Memory Fetch reads record sets into; the connection gives it back once the response is written. */
  readonly recordSetBuffers: FramePool;
}

export interface BrokerStartOptions {
  /** Called as soon as the admin HTTP port listens, before recovery: `/ready` answers 503 until start resolves. */
  readonly onAdminListening?: (url: string) => void;
}

/** What `/ready` waits for, in start-up order. */
export function startupSteps(config: BrokerConfig): string[] {
  return [
    'metadata',
    'log-recovery',
    'groups',
    'transactions',
    ...(config['remote.log.storage.system.enable'] ? ['tiering-attach'] : []),
    ...(config['schema.registry.port'] !== -1 ? ['schema-registry'] : []),
    'kafka-listener',
  ];
}

export class Broker {
  private retentionTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly services: BrokerServices,
    private readonly servers: readonly KafkaServer[],
    private readonly tls: TlsContext | undefined,
    readonly router: Router,
    private readonly readiness: Readiness,
    private readonly admin: AdminPort | undefined,
  ) {}

  /**
   * Starts the admin HTTP port (health, readiness, metrics) first, so that start-up can be watched, then
   * opens storage, binds the Kafka listener and starts serving.
   */
  static async start(config: BrokerConfig, log: Logger, options: BrokerStartOptions = {}): Promise<Broker> {
    const problems: string[] = [];
    const parsed = parseListeners(config['listeners'], config['advertised.listeners'], config['listener.security.protocol.map'], problems);
    if (!parsed) throw new Error(`invalid listeners: ${problems.join('; ')}`);
    // Certificates and users are read before anything else opens, so a bad file stops start-up at once.
    const tls = parsed.listeners.some((l) => usesTls(l.protocol)) || anyHttps(config) ? new TlsContext(config, log.child({ logger: 'tls' }), config['ssl.reload.check.interval.ms']) : undefined;
    const readiness = new Readiness(startupSteps(config));
    let admin: AdminPort | undefined;
    try {
      const createServer = httpsEnabled(config, 'admin') && tls ? httpServerFactory(tls) : undefined;
      admin = await startAdminPort({ config, log: log.child({ logger: 'admin' }), readiness, ...(createServer ? { createServer } : {}), ...(authenticationOn(config, 'admin') ? { guard: startingAdminGuard } : {}) });
    } catch (err) {
      tls?.close();
      throw err;
    }
    if (admin !== undefined) options.onAdminListening?.(admin.url);
    try {
      return await Broker.open(config, log, parsed, tls, readiness, admin);
    } catch (err) {
      tls?.close();
      await admin?.close();
      throw err;
    }
  }

  private static async open(
    config: BrokerConfig,
    log: Logger,
    parsed: { listeners: readonly ListenerSpec[]; advertised: ReadonlyMap<string, { host: string; port: number }> },
    tls: TlsContext | undefined,
    readiness: Readiness,
    admin: AdminPort | undefined,
  ): Promise<Broker> {
    const metrics = admin?.metrics;
    const dataDir = config['log.dirs'];
    const metadata = await EmbeddedMetadataStore.open(dataDir, config['cluster.id']);
    readiness.done('metadata');
    const authorizer = authorizerFor(config, metadata);
    // Refusals are logged as Kafka's authorizer logs them, rate-limited: a client retrying a refused request is no flood.
    const deniedLog = new RateLimitedLog(log.child({ logger: 'authorizer' }));
    const onDenied = (d: Denial) => deniedLog.warn('authorization denied', { ...d });
    const sasl = parsed.listeners.some((l) => usesSasl(l.protocol)) ? new SaslAuthenticator(config, metadata, log.child({ logger: 'sasl' })) : undefined;
    // HTTP Basic checks the same users as SASL (PLAIN and SCRAM), whether or not a listener uses SASL.
    const passwords = sasl ?? (anyAuthentication(config) ? new SaslAuthenticator(config, metadata, log.child({ logger: 'sasl' })) : undefined);
    const http = new HttpSecurity(config, tls, passwords, authorizer, new RateLimitedLog(log.child({ logger: 'http-auth' })), onDenied);
    if (admin !== undefined && authenticationOn(config, 'admin') && http.authenticator) admin.server.setGuard(adminGuard(http.authenticator, authorizer, onDenied));
    const restCreateServer = http.createServer('iceberg.rest');
    const restAuth = http.restAuth();
    const codec = defaultSegmentCodec({
      batchCacheBytes: config['remote.log.reader.cache.total.size.bytes'],
      readers: config['remote.log.reader.threads'],
      workers: config['iceberg.convert.workers.enable'] ? config['remote.log.manager.copier.thread.pool.size'] : 0,
      workersNice: config['iceberg.convert.workers.nice'],
    });
    const tiering = await BrokerTiering.start({
      config,
      log,
      codec,
      ...(metrics ? { observer: metrics } : {}),
      restSecurity: { ...(restCreateServer ? { createServer: restCreateServer } : {}), ...(restAuth ? { auth: restAuth } : {}) },
    });
    const logs = await LogManager.open({
      dataDir: join(dataDir),
      configFor: (topic) => logConfigFor(metadata.getTopic(topic)?.configs ?? {}, config),
      setLogAppendTime: (buf, pos, ts) => setLogAppendTime(buf, BigInt(ts), pos),
      recordLocator: locateRecordByTimestamp,
      onError: (err) => log.error('partition log failure', { err }),
      ...(metrics ? { observer: metrics } : {}),
      inlineWrites: new InlineWrites({ maxBytes: config['log.append.inline.max.bytes'] }),
      ...(tiering ? { canDeleteSegment: tiering.canDeleteSegment, onSegmentClosed: tiering.onSegmentClosed } : {}),
    });
    const topics = new TopicManager(metadata, logs, config, log.child({ logger: 'topics' }));
    await topics.reconcile();
    readiness.done('log-recovery');
    if (tiering) {
      await tiering.attach(logs, metadata.listTopics());
      readiness.done('tiering-attach');
      topics.setPrepareHook(tiering.prepareNewTopic);
      topics.onChange((name, record) => {
        tiering.topicChanged(name, record).catch((err: unknown) => log.error('tiering could not follow a topic change', { err, topic: name }));
      });
    }

    const router = new Router(metrics, authorizer, onDenied);
    // The identity needs the bound port when the listener asks for port 0; handlers read it lazily.
    const endpoints = new Map<string, { host: string; port: number }>();
    const identity = { nodeId: config['node.id'], host: '', port: 0, clusterId: metadata.clusterId, endpoints };
    // Garbage from clients is logged, but a flood of it is not a flood of lines.
    const badInputLog = new RateLimitedLog(log.child({ logger: 'server' }));
    const limits = new ConnectionLimits(
      config['max.connections.per.ip'],
      await resolveConnectionOverrides(parseConnectionOverrides(config['max.connections.per.ip.overrides']).overrides, async (host) => (await lookup(host, { all: true })).map((a) => a.address)),
    );
    // Request frames of 4 KiB or more come from one pool for every listener; Produce frames go back to it.
    const framePool = new FramePool(FRAME_POOL_IDLE_BYTES);
    // Fetch reads the local log into a second pool, whose buffers go back once their response is written:
    // only what Fetch lent from it can be given back, whatever else a response holds.
    const recordSetBuffers = new FramePool(FRAME_POOL_IDLE_BYTES);
    const servers = parsed.listeners.map(
      (listener) =>
        new KafkaServer(
          sasl && usesSasl(listener.protocol) ? sasl.gate(router.handleFrame) : router.handleFrame,
          {
            host: listener.host,
            port: listener.port,
            listener,
            ...(tls && usesTls(listener.protocol) ? { tls } : {}),
            maxFrameBytes: config['socket.request.max.bytes'],
            maxInFlight: config['queued.max.requests'],
            maxUnsentBytes: config['socket.send.buffer.max.bytes'],
            idleMs: config['connections.max.idle.ms'],
            ...(metrics ? { traffic: metrics.traffic } : {}),
            badInputLog,
            limits,
            framePool,
            recyclable: router.recyclable,
            responsePool: recordSetBuffers,
          },
          log.child({ logger: 'server', listener: listener.name }),
        ),
    );
    const connectionCount = () => servers.reduce((n, s) => n + s.connectionCount, 0);
    const appender = new PartitionAppender({ log: log.child({ logger: 'producers' }), ...(tiering ? { logStartOffset: tiering.logStartOf } : {}) });
    // Tiering copies no segment before it can tell open and aborted transactions (broker-tiering.ts).
    tiering?.attachTransactions(appender);
    const fetchWaiters = new FetchWaiters();
    appender.onAppend((partitionLog) => fetchWaiters.notify(partitionLog));
    const groups = await Groups.open(dataDir, config, log.child({ logger: 'groups' }));
    readiness.done('groups');
    // Before the listener: transactions a crash left half-finished complete or abort first.
    const transactions = await Transactions.open({ dataDir, settings: config, metadata, topics, appender, offsets: groups.offsets.store, log: log.child({ logger: 'transactions' }) });
    readiness.done('transactions');
    const cleaner = config['log.cleaner.enable'] ? startLogCleaner(config, logs, appender, tiering, log.child({ logger: 'log-cleaner' })) : undefined;
    const quotas = new ClientQuotas(metadata, quotaWindows(config));
    const services: BrokerServices = { config, identity, metadata, logs, topics, log, appender, fetchWaiters, groups, transactions, quotas, recordSetBuffers, ...(tiering ? { tiering } : {}), ...(cleaner ? { cleaner } : {}), ...(sasl ? { sasl } : {}), ...(authorizer ? { authorizer } : {}) };
    const broker = new Broker(services, servers, tls, router, readiness, admin);
    for (const handler of defaultHandlers(services)) router.register(handler);
    admin?.attach({ logs, metadata, log: log.child({ logger: 'metrics' }), router, connections: connectionCount, connectionsRefused: () => limits.refused(), buffers: { requests: framePool, record_sets: recordSetBuffers }, quotas, authentication: () => ({ sasl: [...(sasl?.outcomes.values() ?? [])], tlsHandshakeFailures: servers.filter((sv) => sv.tls).map((sv) => ({ listener: sv.name, count: sv.tlsHandshakeFailures })) }), tiering, topics, cleaner });

    if (config['schema.registry.port'] !== -1) {
      const registryCreateServer = http.createServer('schema.registry');
      const registryAuth = http.registryAuth();
      try {
        services.schemaRegistry = await SchemaRegistry.start({
          host: config['schema.registry.host'],
          port: config['schema.registry.port'],
          topics,
          appender,
          log: log.child({ logger: 'schema-registry' }),
          ...(tiering ? { tiering } : {}),
          ...(registryCreateServer ? { createServer: registryCreateServer } : {}),
          ...(registryAuth ? { auth: registryAuth } : {}),
        });
      } catch (err) {
        await broker.stop();
        throw err;
      }
      readiness.done('schema-registry');
    }
    // Typed topics read the registry's schemas in process (their segments wait until this point).
    tiering?.plugin.attachSchemaRegistry?.(services.schemaRegistry?.view ?? null);

    const bound: { name: string; host: string; port: number }[] = [];
    try {
      for (const server of servers) bound.push({ name: server.name, ...(await server.listen()) });
    } catch (err) {
      await broker.stop();
      throw err;
    }
    readiness.done('kafka-listener');
    for (const b of bound) {
      const advertised = parsed.advertised.get(b.name);
      endpoints.set(b.name, {
        host: advertised?.host ?? (b.host === '0.0.0.0' || b.host === '::' ? 'localhost' : b.host),
        port: advertised && advertised.port !== 0 ? advertised.port : b.port,
      });
      broker.boundPorts.set(b.name, b.port);
    }
    const first = endpoints.get(bound[0]?.name ?? '') ?? { host: 'localhost', port: 0 };
    identity.host = first.host;
    identity.port = first.port;
    broker.retentionTimer = setInterval(() => {
      logs.enforceRetention().catch((err: unknown) => log.error('retention failed', { err }));
    }, config['log.retention.check.interval.ms']);
    broker.retentionTimer.unref();
    log.info('broker started', {
      nodeId: identity.nodeId,
      listeners: bound.map((b) => `${b.name}://${b.host}:${b.port}`).join(','),
      advertised: [...endpoints].map(([name, e]) => `${name}://${e.host}:${e.port}`).join(','),
      clusterId: identity.clusterId,
      dataDir,
    });
    return broker;
  }

  /** Port each listener is bound to, by listener name (useful with port 0). */
  readonly boundPorts = new Map<string, number>();

  /** The first listener's advertised port (its bound port unless advertised.listeners says otherwise). */
  get port(): number {
    return this.services.identity.port;
  }

  /** The bound port of the listener named `name` (PLAINTEXT, SASL_SSL, ...); throws for an unknown name. */
  listenerPort(name: string): number {
    const port = this.boundPorts.get(name.toUpperCase());
    if (port === undefined) throw new Error(`no listener named ${name}; listeners are ${[...this.boundPorts.keys()].join(', ')}`);
    return port;
  }

  /** The admin HTTP port as bound (useful with admin.port=0), -1 when admin.port is -1. */
  get adminPort(): number {
    return this.admin?.port ?? -1;
  }

  /** Whether `/ready` says ready: started and not stopping. */
  get ready(): boolean {
    return this.readiness.ready;
  }

  /** The schema registry's bound port, or undefined when it is off. */
  get schemaRegistryPort(): number | undefined {
    return this.services.schemaRegistry?.port;
  }

  /** Graceful stop: no new connections or requests, in-flight requests finish, logs are flushed and closed. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const { log, logs, metadata, config } = this.services;
      this.readiness.stopping(); // load balancers stop sending clients here first
      clearInterval(this.retentionTimer);
      this.services.fetchWaiters.close(); // long polls answer now instead of holding up shutdown
      await this.services.transactions.close(); // no more timeouts; running commits finish
      await this.services.groups.close(); // waiting joins answer NOT_COORDINATOR; acknowledged commits are on disk
      await this.services.schemaRegistry?.stop(); // no new registrations; acknowledged ones are on disk
      await Promise.all(this.servers.map((s) => s.close(config['shutdown.timeout.ms'])));
      this.tls?.close();
      await this.services.cleaner?.stop(); // a clean in progress finishes its swap; before the logs close
      await this.services.appender.close(); // producer state snapshots, before the logs close
      await this.services.tiering?.stop(); // commits what it copied; before the logs close under it
      await logs.close();
      await metadata.close();
      await this.admin?.close();
      log.info('broker stopped');
    })();
    return this.stopping;
  }
}

/**
 * The log cleaner, wired to the broker: cleaning stops at each partition's last stable offset (the
 * producer state's open transactions), and a tiered topic's segment is cleaned only once its table holds
 * it (the same gate as local deletion), so tiering never reads a cleaned segment: the table keeps every
 * record, and cleaning cannot make tiering convert a segment twice or skip one.
 */
function startLogCleaner(config: BrokerConfig, logs: LogManager, appender: PartitionAppender, tiering: BrokerTiering | undefined, log: Logger): LogCleaner {
  const rate = config['log.cleaner.io.max.bytes.per.second'];
  const cleaner = new LogCleaner({
    logs,
    backoffMs: config['log.cleaner.backoff.ms'],
    ioMaxBytesPerSecond: rate >= Number.MAX_SAFE_INTEGER ? Infinity : rate,
    lastStableOffset: async (_tp, plog) => (await appender.readState(plog)).txns.lastStableOffset(plog.logEndOffset),
    ...(tiering ? { mayClean: (tp: TopicPartition, base: number, last: number) => tiering.canDeleteSegment(tp, base, last) } : {}),
    onError: (err, tp) => log.warn('log cleaning failed; it will be retried', { err, topic: tp.topic, partition: tp.partition }),
    onCleaning: (tp, plan) => log.info('cleaning a compacted partition', { topic: tp.topic, partition: tp.partition, segments: plan.segments.length, dirtyRatio: plan.dirtyRatio, reason: plan.reason }),
    onCleaned: (tp, s) => log.info('cleaned a compacted partition', { topic: tp.topic, partition: tp.partition, ...s }),
  });
  cleaner.start();
  return cleaner;
}

/** One handler per API; each gets only the services it needs. */
export function defaultHandlers(s: BrokerServices): ApiHandler[] {
  const child = (name: string) => s.log.child({ logger: name });
  return [
    new MetadataHandler(s.topics, s.identity, child('metadata')),
    new DescribeTopicPartitionsHandler(s.topics, s.identity),
    new CreateTopicsHandler(s.topics, s.identity, child('create-topics')),
    new DeleteTopicsHandler(s.topics, child('delete-topics')),
    new CreatePartitionsHandler(s.topics, s.identity, child('create-partitions')),
    new DescribeConfigsHandler(s.topics, s.identity),
    new AlterConfigsHandler(s.topics, child('alter-configs')),
    new IncrementalAlterConfigsHandler(s.topics, child('incremental-alter-configs')),
    new DescribeClusterHandler(s.identity),
    new DescribeLogDirsHandler(s.topics, localLogDir(s.config['log.dirs']), child('describe-log-dirs')),
    new QuotaThrottledHandler(new ProduceHandler(s.topics, s.appender, s.config, child('produce'), s.transactions.coordinator), s.quotas, quotaWindows(s.config)),
    new QuotaThrottledHandler(new FetchHandler(s.topics, s.fetchWaiters, child('fetch'), Date.now, s.tiering, s.appender, (n) => s.recordSetBuffers.lend(n)), s.quotas, quotaWindows(s.config)),
    new ListOffsetsHandler(s.topics, child('list-offsets'), s.tiering, s.appender),
    new InitProducerIdHandler(s.metadata, s.transactions.coordinator, child('init-producer-id')),
    new DeleteRecordsHandler(s.topics, child('delete-records'), s.tiering),
    new OffsetForLeaderEpochHandler(s.topics),
    new FindCoordinatorHandler(new SingleBrokerLocator(s.identity)),
    new JoinGroupHandler(s.groups.coordinator),
    new SyncGroupHandler(s.groups.coordinator),
    new HeartbeatHandler(s.groups.coordinator),
    new LeaveGroupHandler(s.groups.coordinator),
    new OffsetCommitHandler(s.groups.offsets, s.topics),
    new OffsetFetchHandler(s.groups.offsets, (group, topic, partition) => s.transactions.coordinator.hasPendingOffset(group, topic, partition)),
    new DescribeGroupsHandler(s.groups.coordinator),
    new ListGroupsHandler(s.groups.coordinator),
    new DeleteGroupsHandler(s.groups.offsets),
    new OffsetDeleteHandler(s.groups.offsets, s.topics),
    new AddPartitionsToTxnHandler(s.transactions.coordinator),
    new AddOffsetsToTxnHandler(s.transactions.coordinator),
    new EndTxnHandler(s.transactions.coordinator),
    new TxnOffsetCommitHandler(s.transactions.coordinator, s.groups.offsets, s.topics),
    new WriteTxnMarkersHandler(s.topics, s.appender, child('write-txn-markers')),
    new DescribeProducersHandler(s.topics, s.appender, child('describe-producers')),
    new DescribeTransactionsHandler(s.transactions.coordinator),
    new ListTransactionsHandler(s.transactions.coordinator),
    new SaslHandshakeHandler(s.sasl),
    new SaslAuthenticateHandler(s.sasl),
    new DescribeAclsHandler(s.authorizer),
    new CreateAclsHandler(s.authorizer, child('acls')),
    new DeleteAclsHandler(s.authorizer, child('acls')),
    new DescribeClientQuotasHandler(s.quotas),
    new AlterClientQuotasHandler(s.quotas, child('client-quotas')),
    new DescribeUserScramCredentialsHandler(s.metadata),
    new AlterUserScramCredentialsHandler(s.metadata, child('scram-credentials')),
  ];
}

/** The sample windows client quotas measure rates over (quota.window.num, quota.window.size.seconds). */
function quotaWindows(config: BrokerConfig): { samples: number; windowMs: number } {
  return { samples: config['quota.window.num'], windowMs: config['quota.window.size.seconds'] * 1000 };
}
