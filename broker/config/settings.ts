/**
 * Every broker setting, declared once: its Kafka-style key, type, default, bounds and documentation.
 * `loadConfig` validates sources against this table and `--help` prints it. Topic-level defaults use
 * Kafka's broker names (`log.segment.bytes` is the default of the topic config `segment.bytes`).
 */
export type SettingType = 'int' | 'long' | 'bool' | 'string' | 'list' | 'enum';

export interface Setting {
  readonly key: string;
  readonly type: SettingType;
  readonly default: string | number | boolean | readonly string[];
  readonly doc: string;
  readonly min?: number;
  readonly max?: number;
  readonly values?: readonly string[];
  /** A secret: never logged, shown in --help only as a name, described as null (DescribeConfigs isSensitive). */
  readonly sensitive?: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const GiB = 1024 * 1024 * 1024;

export const SETTINGS = Object.freeze([
  // Identity and listeners
  { key: 'node.id', type: 'int', default: 1, min: 0, doc: 'This broker\'s id, reported in Metadata.' },
  { key: 'cluster.id', type: 'string', default: '', doc: 'Cluster id; generated and persisted in the data directory when empty.' },
  { key: 'listeners', type: 'string', default: 'PLAINTEXT://0.0.0.0:9092', doc: 'Kafka listeners, comma-separated NAME://host:port (PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093); each name maps to a security protocol through listener.security.protocol.map; port 0 picks a free port.' },
  { key: 'advertised.listeners', type: 'string', default: '', doc: 'Addresses given to clients in Metadata, per listener name (NAME://host:port, comma-separated); a listener left out advertises its bound address, with 0.0.0.0 replaced by localhost. Clients are told the address of the listener they connected to.' },
  { key: 'listener.security.protocol.map', type: 'string', default: 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL', doc: 'Security protocol of each listener name (NAME:PROTOCOL, comma-separated; protocols PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).' },
  // TLS (SSL and SASL_SSL listeners)
  { key: 'ssl.keystore.type', type: 'enum', default: 'PKCS12', values: ['PKCS12', 'PEM'], doc: 'Format of the server certificate: PKCS12 (ssl.keystore.location, ssl.keystore.password) or PEM (ssl.keystore.location holding key and chain, or ssl.keystore.certificate.chain plus ssl.keystore.key).' },
  { key: 'ssl.keystore.location', type: 'string', default: '', doc: 'File with the server certificate and key (PKCS#12, or PEM with the private key and the certificate chain). Reloaded when it changes.' },
  { key: 'ssl.keystore.password', type: 'string', default: '', sensitive: true, doc: 'Password of the PKCS#12 keystore (sensitive: never logged or described).' },
  { key: 'ssl.key.password', type: 'string', default: '', sensitive: true, doc: 'Password of an encrypted PEM private key (sensitive).' },
  { key: 'ssl.keystore.certificate.chain', type: 'string', default: '', doc: 'The server certificate chain as PEM text (with ssl.keystore.type=PEM), instead of a file.' },
  { key: 'ssl.keystore.key', type: 'string', default: '', sensitive: true, doc: 'The server private key as PEM text (with ssl.keystore.type=PEM), instead of a file (sensitive).' },
  { key: 'ssl.truststore.type', type: 'enum', default: 'PEM', values: ['PEM'], doc: 'Format of the truststore holding the CAs that client certificates must chain to (PEM).' },
  { key: 'ssl.truststore.location', type: 'string', default: '', doc: 'File with the CA certificates client certificates are checked against (PEM). Reloaded when it changes.' },
  { key: 'ssl.truststore.password', type: 'string', default: '', sensitive: true, doc: 'Password of a PKCS#12 truststore (sensitive).' },
  { key: 'ssl.truststore.certificates', type: 'string', default: '', doc: 'The trusted CA certificates as PEM text, instead of a file.' },
  { key: 'ssl.client.auth', type: 'enum', default: 'none', values: ['none', 'requested', 'required'], doc: 'Client certificates on SSL listeners: none, requested (checked when given) or required. A client certificate makes the principal User:<its subject DN>.' },
  { key: 'ssl.enabled.protocols', type: 'list', default: ['TLSv1.2', 'TLSv1.3'], doc: 'TLS versions accepted (TLSv1.2, TLSv1.3).' },
  { key: 'ssl.reload.check.interval.ms', type: 'long', default: 30_000, min: 0, doc: 'How often keystore and truststore files are checked for changes; changed certificates apply to new connections without a restart (0: never reload).' },
  // SASL (SASL_PLAINTEXT and SASL_SSL listeners)
  { key: 'sasl.enabled.mechanisms', type: 'list', default: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'], doc: 'SASL mechanisms offered: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. SCRAM users are managed with kafka-configs --entity-type users (AlterUserScramCredentials).' },
  { key: 'sasl.plain.jaas.config', type: 'string', default: '', sensitive: true, doc: 'PLAIN users as Kafka\'s PlainLoginModule JAAS value: org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="secret"; Kafka\'s listener.name.<listener>.plain.sasl.jaas.config is accepted as this setting (sensitive; prefer sasl.plain.users.file).' },
  { key: 'sasl.plain.users.file', type: 'string', default: '', doc: 'File of PLAIN users, one user=password per line (# comments); re-read when it changes.' },
  { key: 'connection.failed.authentication.delay.ms', type: 'int', default: 100, min: 0, doc: 'Delay before the answer to a failed authentication, after which the connection is closed (one failure per connection, as in Kafka).' },
  { key: 'connections.max.reauth.ms', type: 'long', default: 0, min: 0, doc: 'Longest SASL session: a client must re-authenticate (KIP-368) within this long or its connection is closed; told to clients in SaslAuthenticate v1+ (0: sessions never expire).' },
  // Authorization (ACLs: kafka-acls, CreateAcls/DescribeAcls/DeleteAcls)
  { key: 'authorizer.class.name', type: 'enum', default: '', values: ['', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'kafka.security.authorizer.AclAuthorizer', 'kafka.security.auth.SimpleAclAuthorizer'], doc: 'Turns ACL authorization on: Kafka\'s authorizer names are accepted (org.apache.kafka.metadata.authorizer.StandardAuthorizer, kafka.security.authorizer.AclAuthorizer) and all mean Floe\'s ACL authorizer; ACLs are kept in the data directory. Empty: no authorization, every principal may do everything.' },
  { key: 'super.users', type: 'string', default: '', doc: 'Principals that pass every authorization check, semicolon-separated as in Kafka (User:admin;User:CN=ops,O=example).' },
  { key: 'allow.everyone.if.no.acl.found', type: 'bool', default: false, doc: 'With an authorizer: allow an operation on a resource that no ACL names at all (false: deny by default, as Kafka).' },
  // Client quotas (kafka-configs --entity-type users|clients: AlterClientQuotas)
  { key: 'quota.window.num', type: 'int', default: 11, min: 2, doc: 'Samples a client quota\'s byte rate is measured over (Kafka\'s quota.window.num): produce_byte_rate and consumer_byte_rate are enforced on the rate over these windows.' },
  { key: 'quota.window.size.seconds', type: 'int', default: 1, min: 1, doc: 'Length of each client quota sample window, in seconds (Kafka\'s quota.window.size.seconds).' },
  // Network
  { key: 'socket.request.max.bytes', type: 'int', default: 100 * 1024 * 1024, min: 1024, doc: 'Largest request frame accepted; a larger frame closes the connection.' },
  { key: 'connections.max.idle.ms', type: 'long', default: 600_000, min: 0, doc: 'Idle connections are closed after this long (0 disables).' },
  { key: 'queued.max.requests', type: 'int', default: 500, min: 1, doc: 'Requests in flight per connection before the broker stops reading from it (back-pressure).' },
  { key: 'max.connections.per.ip', type: 'int', default: 2147483647, min: 0, doc: 'Connections one client address may hold open across all listeners; a connection beyond it is closed at once (0 refuses every address not in max.connections.per.ip.overrides).' },
  { key: 'max.connections.per.ip.overrides', type: 'string', default: '', doc: 'Per-address exceptions to max.connections.per.ip, comma-separated host:count (127.0.0.1:1000,ci-runner:50); hostnames are resolved at start.' },
  { key: 'socket.send.buffer.max.bytes', type: 'int', default: 64 * 1024 * 1024, min: 65536, doc: 'Unsent response bytes per connection before the broker stops reading from it (back-pressure).' },
  // Storage
  { key: 'log.dirs', type: 'string', default: './data/log', doc: 'Directory holding partition logs and broker metadata.' },
  { key: 'num.partitions', type: 'int', default: 1, min: 1, max: 10000, doc: 'Partitions of an auto-created topic, and of CreateTopics with -1 partitions.' },
  { key: 'auto.create.topics.enable', type: 'bool', default: true, doc: 'Create unknown topics on Metadata and Produce requests.' },
  { key: 'message.max.bytes', type: 'int', default: 1048588, min: 0, doc: 'Default of the topic config max.message.bytes: largest record batch accepted.' },
  { key: 'log.segment.bytes', type: 'int', default: GiB, min: 14, doc: 'Default of segment.bytes: a segment rolls at this size.' },
  { key: 'log.roll.ms', type: 'long', default: 7 * DAY_MS, min: 1, doc: 'Default of segment.ms: a segment rolls at this age.' },
  { key: 'log.retention.ms', type: 'long', default: 7 * DAY_MS, min: -1, doc: 'Default of retention.ms (-1: keep forever).' },
  { key: 'log.retention.bytes', type: 'long', default: -1, min: -1, doc: 'Default of retention.bytes per partition (-1: no limit).' },
  { key: 'log.retention.check.interval.ms', type: 'long', default: 300_000, min: 1, doc: 'How often retention runs.' },
  { key: 'log.cleaner.enable', type: 'bool', default: true, doc: 'Run the log cleaner: partitions of topics whose cleanup.policy includes compact keep only the latest record per key (Kafka\'s log compaction).' },
  { key: 'log.cleaner.backoff.ms', type: 'long', default: 15_000, min: 1, doc: 'Pause of the log cleaner between checks when no partition needs cleaning.' },
  { key: 'log.cleaner.threads', type: 'int', default: 1, min: 1, max: 1, doc: 'Cleaner threads. Floe runs one cleaner that cleans one partition at a time; only 1 is accepted.' },
  { key: 'log.cleaner.io.max.bytes.per.second', type: 'long', default: Number.MAX_SAFE_INTEGER, min: 1, doc: 'Throttle on the bytes the log cleaner reads and writes per second.' },
  { key: 'log.flush.interval.messages', type: 'long', default: Number.MAX_SAFE_INTEGER, min: 1, doc: 'Default of flush.messages: fsync after this many records. The default leaves flushing to the OS: acknowledged data survives a broker crash (it is in the page cache) but not a power loss.' },
  { key: 'log.flush.interval.ms', type: 'long', default: Number.MAX_SAFE_INTEGER, min: 0, doc: 'Default of flush.ms: fsync when the oldest unflushed data is this old.' },
  { key: 'log.append.inline.max.bytes', type: 'int', default: 64 * 1024, min: 0, doc: 'Floe only: a log write of at most this many bytes (one or more appends to a partition) is made on the broker\'s thread while it has room; larger ones, and all of them while that thread is saturated, go to the thread pool, grouped. 0 sends every write to the pool.' },
  { key: 'log.index.interval.bytes', type: 'int', default: 4096, min: 0, doc: 'Default of index.interval.bytes: bytes between offset index entries.' },
  { key: 'log.message.timestamp.type', type: 'enum', default: 'CreateTime', values: ['CreateTime', 'LogAppendTime'], doc: 'Default of message.timestamp.type.' },
  // Tiered storage and Iceberg tables
  { key: 'remote.log.storage.system.enable', type: 'bool', default: true, doc: 'Start the tiering plugin and the Iceberg REST catalog: topics with remote.storage.enable (or iceberg.enabled) then become Iceberg tables, and their closed segments move to the warehouse. false runs a plain Kafka broker.' },
  { key: 'iceberg.enabled.default', type: 'bool', default: true, doc: 'Default of the topic config iceberg.enabled: with true (and remote.log.storage.system.enable) every topic is also an Iceberg table unless it sets iceberg.enabled=false.' },
  { key: 'iceberg.warehouse', type: 'string', default: './data/warehouse', doc: 'Where tables live: a local folder (path or file:///...) or s3://bucket/prefix.' },
  { key: 'iceberg.rest.port', type: 'int', default: 8181, min: -1, max: 65535, doc: 'Port of the built-in Iceberg REST catalog (0 picks a free port, -1 turns it off). With iceberg.catalog.type=rest it serves the external catalog\'s tables (a proxy: every request goes to that catalog).' },
  { key: 'iceberg.rest.token', type: 'string', default: '', sensitive: true, doc: 'Bearer token the Iceberg REST catalog requires on every request (empty: no authentication).' },
  { key: 'iceberg.rest.host', type: 'string', default: '0.0.0.0', doc: 'Address the Iceberg REST catalog binds to.' },
  { key: 'iceberg.rest.ssl.enabled', type: 'bool', default: false, doc: 'Serve the Iceberg REST catalog over HTTPS with the broker\'s certificate (ssl.keystore.*, reloaded as for the Kafka listeners).' },
  { key: 'iceberg.rest.authentication.method', type: 'enum', default: 'NONE', values: ['NONE', 'BASIC'], doc: 'BASIC: every catalog request needs HTTP Basic with a Floe user (PLAIN users of sasl.plain.jaas.config or sasl.plain.users.file, SCRAM users) or a bearer token from POST /v1/oauth/tokens (OAuth2 client credentials, as pyiceberg credential= and Spark\'s credential use) or iceberg.rest.token; answered 401 otherwise. With an authorizer, a topic\'s table is listed only with DESCRIBE and loaded only with READ on the topic. NONE: only iceberg.rest.token, when set.' },
  { key: 'iceberg.rest.oauth.token.lifetime.ms', type: 'long', default: 3_600_000, min: 1000, doc: 'Lifetime of the bearer tokens POST /v1/oauth/tokens issues (clients fetch a new one with their credential); tokens are kept in memory only, so a restart ends them.' },
  { key: 'iceberg.namespace', type: 'string', default: 'kafka', doc: 'Default of the topic config iceberg.namespace: the namespace (dots separate levels) of the topic tables, <namespace>.<table name>.' },
  // External Iceberg REST catalog (iceberg.catalog.type=rest)
  { key: 'iceberg.catalog.type', type: 'enum', default: 'builtin', values: ['builtin', 'rest'], doc: 'Where the tables are registered: builtin (Floe\'s own catalog, kept in the warehouse) or rest (an external Iceberg REST catalog at iceberg.catalog.uri: Polaris, Nessie, Gravitino, Unity, Apache Iceberg\'s REST server). Data files go to iceberg.warehouse either way.' },
  { key: 'iceberg.catalog.uri', type: 'string', default: '', doc: 'Base URI of the external REST catalog (http:// or https://; the /v1 paths are appended), with iceberg.catalog.type=rest.' },
  { key: 'iceberg.catalog.warehouse', type: 'string', default: '', doc: 'Warehouse the external catalog is asked for (GET /v1/config?warehouse=); a catalog that serves several names them (Polaris: the catalog name). Empty: the catalog\'s default.' },
  { key: 'iceberg.catalog.prefix', type: 'string', default: '', doc: 'Path prefix of the external catalog\'s endpoints (/v1/<prefix>/namespaces/...); empty uses the prefix the catalog\'s /v1/config announces.' },
  { key: 'iceberg.catalog.token', type: 'string', default: '', sensitive: true, doc: 'Bearer token sent to the external catalog with every request (sensitive). Use this or iceberg.catalog.credential.' },
  { key: 'iceberg.catalog.credential', type: 'string', default: '', sensitive: true, doc: 'OAuth2 client credentials client_id:client_secret for the external catalog (sensitive): Floe gets a token from iceberg.catalog.oauth2.server.uri with grant_type=client_credentials, as Iceberg\'s clients do, and gets a new one before it expires.' },
  { key: 'iceberg.catalog.oauth2.server.uri', type: 'string', default: '', doc: 'Token endpoint for iceberg.catalog.credential (Iceberg\'s oauth2-server-uri); empty: <iceberg.catalog.uri>/v1/oauth/tokens.' },
  { key: 'iceberg.catalog.scope', type: 'string', default: 'catalog', doc: 'OAuth2 scope asked for with iceberg.catalog.credential (Iceberg\'s default: catalog; Polaris: PRINCIPAL_ROLE:ALL).' },
  { key: 'iceberg.catalog.sigv4.enabled', type: 'bool', default: false, doc: 'Sign every request to the external catalog with AWS Signature Version 4, as Iceberg\'s rest.sigv4-enabled does: AWS Glue\'s Iceberg REST endpoint (https://glue.<region>.amazonaws.com/iceberg, signing name glue), S3 Tables\' (https://s3tables.<region>.amazonaws.com/iceberg, signing name s3tables), a catalog behind API Gateway (execute-api). The body\'s SHA-256 is signed (x-amz-content-sha256); a bearer token (iceberg.catalog.token or .credential) is then sent as Original-Authorization.' },
  { key: 'iceberg.catalog.signing.region', type: 'string', default: '', doc: 'Region SigV4 signatures are made for (Iceberg\'s rest.signing-region); empty: AWS_REGION, else AWS_DEFAULT_REGION.' },
  { key: 'iceberg.catalog.signing.name', type: 'string', default: 'glue', doc: 'Service name SigV4 signatures are made for (Iceberg\'s rest.signing-name): glue for Glue, s3tables for S3 Tables, execute-api for API Gateway.' },
  { key: 'iceberg.catalog.access.key.id', type: 'string', default: '', sensitive: true, doc: 'AWS access key id for SigV4 signing (sensitive); empty uses the AWS default credential chain (environment, profiles, SSO, web identity, container and instance roles).' },
  { key: 'iceberg.catalog.secret.access.key', type: 'string', default: '', sensitive: true, doc: 'AWS secret access key for SigV4 signing, with iceberg.catalog.access.key.id (sensitive).' },
  { key: 'iceberg.catalog.session.token', type: 'string', default: '', sensitive: true, doc: 'AWS session token of temporary credentials for SigV4 signing, with iceberg.catalog.access.key.id (sensitive).' },
  { key: 'iceberg.delete.on.topic.delete', type: 'bool', default: true, doc: 'Deleting a topic drops its table and purges its files, as Kafka deletes a deleted topic\'s data. false keeps the table (read-only, as before) for the lakehouse; a topic created again with that name continues after the table\'s offsets.' },
  { key: 'iceberg.maintenance.interval.ms', type: 'long', default: 300_000, min: 0, doc: 'How often each table\'s snapshots are expired (table properties history.expire.max-snapshot-age-ms and history.expire.min-snapshots-to-keep) and the files only they needed deleted; orphan files are looked for at most hourly. 0 turns it off.' },
  { key: 'iceberg.orphan.files.older.than.ms', type: 'long', default: 259_200_000, min: 0, doc: 'Files in a table\'s location that nothing references are deleted once they are this old (3 days, as Iceberg\'s remove_orphan_files suggests): the window must outlast any upload or commit in progress.' },
  { key: 'iceberg.commit.interval.ms', type: 'long', default: 60_000, min: 1, doc: 'Default of the topic config iceberg.commit.interval.ms: the active segment rolls and a table snapshot is committed at most this often, so tables lag the log by about this much.' },
  { key: 'iceberg.s3.endpoint', type: 'string', default: '', doc: 'S3 endpoint for S3-compatible stores (MinIO, Ceph, R2); empty for AWS.' },
  { key: 'iceberg.s3.region', type: 'string', default: '', doc: 'S3 region; empty uses AWS_REGION, then us-east-1.' },
  { key: 'iceberg.s3.path.style.access', type: 'bool', default: true, doc: 'Path-style S3 URLs (endpoint/bucket/key), which most non-AWS stores need; ignored without an endpoint.' },
  { key: 'iceberg.s3.access.key.id', type: 'string', default: '', doc: 'S3 access key; empty uses the AWS default credential chain (environment, profiles, instance roles).' },
  { key: 'iceberg.s3.secret.access.key', type: 'string', default: '', sensitive: true, doc: 'S3 secret key, with iceberg.s3.access.key.id.' },
  { key: 'remote.log.manager.copier.thread.pool.size', type: 'int', default: 2, min: 1, max: 64, doc: 'Segments converted to Parquet at once, across all partitions (bounds the CPU and memory tiering uses).' },
  { key: 'remote.log.manager.copy.max.bytes.per.second', type: 'long', default: Number.MAX_SAFE_INTEGER, min: 1, doc: 'Bytes of closed segments tiering converts per second at most, across all topics (Kafka\'s copy quota): a backfill of a long history then leaves the disk and CPU to live traffic. The default is no limit.' },
  { key: 'iceberg.convert.workers.enable', type: 'bool', default: true, doc: 'Convert segments to Parquet on worker threads (remote.log.manager.copier.thread.pool.size of them), so conversion never holds the thread serving produce and fetch and uses the other cores; false converts on that thread. Schema-mode (typed) topics always convert on it.' },
  { key: 'iceberg.convert.workers.nice', type: 'int', default: 10, min: 0, max: 19, doc: 'Nice value of the conversion worker threads (Linux; per thread), 0-19: above 0 the scheduler runs the thread serving produce and fetch first when both want a core, so conversion and compaction use the cores it leaves idle; 0 gives them the broker\'s priority.' },
  { key: 'iceberg.compaction.max.bytes.per.second', type: 'long', default: 32 * 1024 * 1024, min: 1, doc: 'Bytes per second background compaction reads at most, across all tables (one compaction runs at a time, and only while no segment waits to be tiered): the data-file bytes it copies for a conversion worker, or the log bytes it rebuilds on the broker\'s thread when conversion runs there.' },
  { key: 'remote.log.reader.threads', type: 'int', default: 0, min: 0, max: 64, doc: 'Worker threads serving fetches of tiered (Parquet) offsets, as Kafka\'s remote log reader pool (Kafka\'s default is 10): they decode Parquet and rebuild batches off the thread serving produce and fetch, and each reads one fetch ahead for a consumer moving forward; a partition\'s reads go to one of them, and the remote read caches are shared out among them. 0 (the default) reads on the broker\'s thread. Set it on a machine with cores to spare: a history read then takes about a third of the broker\'s thread it takes otherwise, for 20-70 % more CPU in all (bench/RESULTS.md, 2 cores).' },
  { key: 'remote.log.reader.cache.total.size.bytes', type: 'long', default: 128 * 1024 * 1024, min: 0, doc: 'Memory for record batches rebuilt from Parquet, so repeated fetches of the same remote range are served from memory: a range is kept from its second fetch on, so a one-pass scan of history neither fills nor evicts it (least recently used evicted first; 0 turns the cache off).' },
  { key: 'log.local.retention.ms', type: 'long', default: -2, min: -2, doc: 'Default of local.retention.ms: how long tiered segments stay on local disk (-2: as long as retention.ms).' },
  { key: 'log.local.retention.bytes', type: 'long', default: -2, min: -2, doc: 'Default of local.retention.bytes: local bytes kept per tiered partition (-2: as retention.bytes).' },
  // Schema registry
  { key: 'schema.registry.port', type: 'int', default: 8081, min: -1, max: 65535, doc: 'Port of the built-in schema registry (Confluent Schema Registry REST API; 0 picks a free port, -1 turns it off). Its state lives in the internal topic _schemas.' },
  { key: 'schema.registry.host', type: 'string', default: '0.0.0.0', doc: 'Address the schema registry binds to.' },
  { key: 'schema.registry.ssl.enabled', type: 'bool', default: false, doc: 'Serve the schema registry over HTTPS with the broker\'s certificate (ssl.keystore.*).' },
  { key: 'schema.registry.authentication.method', type: 'enum', default: 'NONE', values: ['NONE', 'BASIC'], doc: 'BASIC (Confluent\'s authentication.method): every request needs HTTP Basic with a Floe user (basic.auth.user.info in Confluent clients) or a bearer token from the REST catalog\'s /v1/oauth/tokens; 401 otherwise. With an authorizer, subject <topic>-key and <topic>-value follow the topic\'s ACLs (READ to read, WRITE to register or delete).' },
  // Groups
  { key: 'offsets.retention.minutes', type: 'long', default: 7 * 24 * 60, min: 1, doc: 'Committed offsets of an empty group expire after this long.' },
  { key: 'group.min.session.timeout.ms', type: 'int', default: 6000, min: 0, doc: 'Smallest session timeout a member may ask for.' },
  { key: 'group.max.session.timeout.ms', type: 'int', default: 1_800_000, min: 0, doc: 'Largest session timeout a member may ask for.' },
  { key: 'group.initial.rebalance.delay.ms', type: 'int', default: 3000, min: 0, doc: 'Wait for more members before the first rebalance of an empty group.' },
  { key: 'group.max.size', type: 'int', default: 2_147_483_647, min: 1, doc: 'Most members a consumer group may have; more joins are refused with GROUP_MAX_SIZE_REACHED.' },
  { key: 'offsets.retention.check.interval.ms', type: 'long', default: 600_000, min: 1, doc: 'How often expired committed offsets (see offsets.retention.minutes) are removed.' },
  { key: 'offset.metadata.max.bytes', type: 'int', default: 4096, min: 0, doc: 'Longest metadata string an offset commit may carry; longer ones get OFFSET_METADATA_TOO_LARGE.' },
  // Transactions
  { key: 'transaction.max.timeout.ms', type: 'int', default: 900_000, min: 1, doc: 'Longest transaction.timeout.ms a transactional producer may ask for; InitProducerId with a longer one gets INVALID_TRANSACTION_TIMEOUT.' },
  { key: 'transactional.id.expiration.ms', type: 'int', default: 604_800_000, min: 1, doc: 'A transactional id with no transaction in progress is forgotten after this long without use; its next InitProducerId gets a new producer id.' },
  { key: 'transaction.abort.timed.out.transaction.cleanup.interval.ms', type: 'int', default: 10_000, min: 1, doc: 'How often transactions open longer than their timeout are aborted (with an epoch bump that fences their producer).' },
  // Admin HTTP port (health, readiness, metrics)
  { key: 'admin.port', type: 'int', default: 9644, min: -1, max: 65535, doc: 'Port of the admin HTTP server: /health, /ready and /metrics (Prometheus text format); 0 picks a free port, -1 turns it off.' },
  { key: 'admin.host', type: 'string', default: '0.0.0.0', doc: 'Address the admin HTTP server binds to.' },
  { key: 'admin.ssl.enabled', type: 'bool', default: false, doc: 'Serve the admin port over HTTPS with the broker\'s certificate (ssl.keystore.*).' },
  { key: 'admin.authentication.method', type: 'enum', default: 'NONE', values: ['NONE', 'BASIC'], doc: 'BASIC: every admin request but /health and /ready (probes) needs HTTP Basic with a Floe user or a bearer token from the REST catalog\'s /v1/oauth/tokens; 401 otherwise. With an authorizer, GET and HEAD need DESCRIBE on the cluster, other methods ALTER.' },
  // Operations
  { key: 'log.level', type: 'enum', default: 'info', values: ['debug', 'info', 'warn', 'error', 'silent'], doc: 'Lowest level of structured log lines written to stdout.' },
  { key: 'shutdown.timeout.ms', type: 'long', default: 30_000, min: 0, doc: 'On SIGTERM/SIGINT, wait this long for in-flight requests before closing connections.' },
] as const satisfies readonly Setting[]);

/** The keys of secret settings (passwords, private keys, tokens). */
export const SENSITIVE_SETTINGS: ReadonlySet<string> = new Set(SETTINGS.filter((s) => (s as Setting).sensitive === true).map((s) => s.key));

export const SETTINGS_BY_KEY: ReadonlyMap<string, Setting> = new Map(SETTINGS.map((s) => [s.key, s as Setting]));

type ValueOf<T extends SettingType> = T extends 'int' | 'long'
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'list'
      ? readonly string[]
      : string;

/** The broker configuration: one validated, deep-frozen object keyed by the settings' names. */
export type BrokerConfig = { readonly [S in (typeof SETTINGS)[number] as S['key']]: ValueOf<S['type']> };
export type SettingKey = keyof BrokerConfig;
