import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, envName, formatHelp, loadConfig, parseListener } from '../../../broker/config/config.js';
import { SETTINGS } from '../../../broker/config/settings.js';

function load(argv: string[] = [], env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const res = loadConfig({
    argv,
    env,
    readFile: (p) => {
      const text = files[p];
      if (text === undefined) throw new Error('ENOENT');
      return text;
    },
  });
  if (res.help) throw new Error('unexpected help');
  return res.config;
}

test('defaults are complete and frozen', () => {
  const c = load();
  for (const s of SETTINGS) assert.deepEqual(c[s.key], s.default, s.key);
  assert.equal(c['listeners'], 'PLAINTEXT://0.0.0.0:9092');
  assert.ok(Object.isFrozen(c));
  assert.throws(() => {
    (c as Record<string, unknown>)['node.id'] = 7;
  }, TypeError);
});

test('precedence: file < environment < flags', () => {
  const files = { '/etc/floe.properties': '# comment\nnum.partitions=3\nlog.dirs = /from/file\nnode.id=5\n' };
  const c = load(
    ['--config', '/etc/floe.properties', '--num.partitions=9'],
    { FLOE_LOG_DIRS: '/from/env', PATH: '/usr/bin' },
    files,
  );
  assert.equal(c['num.partitions'], 9);
  assert.equal(c['log.dirs'], '/from/env');
  assert.equal(c['node.id'], 5);
});

test('JSON files and FLOE_CONFIG', () => {
  const c = load([], { FLOE_CONFIG: 'c.json' }, { 'c.json': '{"auto.create.topics.enable": false, "log.level": "warn"}' });
  assert.equal(c['auto.create.topics.enable'], false);
  assert.equal(c['log.level'], 'warn');
});

test('every problem is reported at once, naming key and source', () => {
  let err: unknown;
  try {
    load(['--num.partitions=zero', '--no.such=1', '--log.level', 'loud'], { FLOE_NODE_ID: '-3', FLOE_LOG_DIRZ: 'x' });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ConfigError);
  assert.equal(err.code, 'INVALID_CONFIG');
  const text = err.message;
  assert.match(text, /flag --num.partitions: num.partitions must be a whole number, got 'zero'/);
  assert.match(text, /flag --no.such is not a setting/);
  assert.match(text, /log.level must be one of debug, info, warn, error, silent, got 'loud'/);
  assert.match(text, /environment FLOE_NODE_ID: node.id must be at least 0, got -3/);
  assert.match(text, /FLOE_LOG_DIRZ is not a setting \(did you mean one of log.dirs/);
  assert.equal(err.problems.length, 5);
});

test('listeners are validated', () => {
  assert.deepEqual(parseListener('PLAINTEXT://127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseListener('PLAINTEXT://[::1]:9092'), { host: '::1', port: 9092 });
  assert.deepEqual(parseListener('PLAINTEXT://:9092'), { host: '0.0.0.0', port: 9092 });
  assert.deepEqual(parseListener('SSL://h:1'), { host: 'h', port: 1 });
  assert.equal(parseListener('http:h:1'), undefined);
  assert.equal(parseListener('PLAINTEXT://h:70000'), undefined);
  assert.throws(() => load(['--listeners=localhost:9092']), /listeners entry 'localhost:9092' must look like NAME:\/\/host:port/);
});

test('several listeners: names map to security protocols, and TLS and SASL listeners are checked', () => {
  const c = load(['--listeners=PLAINTEXT://127.0.0.1:0,INTERNAL://:0', '--listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT']);
  assert.equal(c['listeners'], 'PLAINTEXT://127.0.0.1:0,INTERNAL://:0');
  assert.throws(() => load(['--listeners=PLAINTEXT://:0,CUSTOM://:0']), /listener CUSTOM has no security protocol: add CUSTOM:/);
  assert.throws(() => load(['--listeners=PLAINTEXT://:9000,SSL://:9000', '--ssl.keystore.location=k.p12']), /share port 9000/);
  assert.throws(() => load(['--listeners=SSL://:0']), /an SSL or SASL_SSL listener needs a server certificate/);
  assert.throws(() => load(['--listeners=SSL://:0', '--ssl.keystore.location=k.pem', '--ssl.client.auth=required']), /ssl.client.auth=required needs the CAs/);
  assert.throws(() => load(['--listeners=SASL_PLAINTEXT://:0', '--sasl.enabled.mechanisms=GSSAPI']), /GSSAPI not supported/);
  assert.throws(() => load(['--listeners=PLAINTEXT://:0', '--advertised.listeners=SSL://h:1']), /advertised.listeners names SSL, which is not in listeners/);
  assert.throws(() => load(['--listener.security.protocol.map=PLAINTEXT:TLS']), /PROTOCOL one of PLAINTEXT, SSL/);
});

test("Kafka's listener.name.<l>.plain.sasl.jaas.config is accepted as sasl.plain.jaas.config", () => {
  const jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="x";';
  const c = load(['--config', 'b.properties'], {}, { 'b.properties': `listeners=SASL_SSL://:0\nssl.keystore.location=k.p12\nlistener.name.sasl_ssl.plain.sasl.jaas.config=${jaas}\n` });
  assert.equal(c['sasl.plain.jaas.config'], jaas);
  assert.equal(load([`--listener.name.sasl_plaintext.plain.sasl.jaas.config=${jaas}`])['sasl.plain.jaas.config'], jaas);
});

test('a secret setting with a wrong value is reported without its value', () => {
  assert.throws(() => load(['--config', 's.json'], {}, { 's.json': '{"ssl.keystore.password": 987654321}' }), (err: Error) => {
    assert.match(err.message, /ssl.keystore.password must be a string \(its value is secret and not shown\)/);
    assert.ok(!err.message.includes('987654321'));
    return true;
  });
});

test('bad files and flags without values are clear errors', () => {
  assert.throws(() => load(['--config', 'missing.properties']), /config file missing.properties: cannot read it/);
  assert.throws(() => load(['--config', 'x.json'], {}, { 'x.json': '[1]' }), /must hold a JSON object/);
  assert.throws(() => load(['--config', 'x.properties'], {}, { 'x.properties': 'novalue\n' }), /x.properties:1: expected key=value/);
  assert.throws(() => load(['--node.id']), /flag --node.id needs a value/);
  assert.throws(() => load(['stray']), /unexpected argument 'stray'/);
  assert.throws(
    () => load(['--group.min.session.timeout.ms=10', '--group.max.session.timeout.ms=5']),
    /must not exceed group.max.session.timeout.ms/,
  );
});

test('--help lists every setting with its environment name', () => {
  assert.deepEqual(loadConfig({ argv: ['--help'] }), { help: true });
  const help = formatHelp();
  for (const s of SETTINGS) {
    assert.ok(help.includes(`--${s.key} `), s.key);
    assert.ok(help.includes(envName(s.key)), s.key);
  }
});

test('schema registry port: 8081 by default, -1 off, 0 any; clashes with other listeners are refused', () => {
  assert.equal(load([])?.['schema.registry.port'], 8081);
  assert.equal(load([])?.['schema.registry.host'], '0.0.0.0');
  assert.equal(load(['--schema.registry.port=-1'])?.['schema.registry.port'], -1);
  assert.equal(load(['--schema.registry.port=0', '--schema.registry.host=127.0.0.1'])?.['schema.registry.host'], '127.0.0.1');
  assert.throws(() => loadConfig({ argv: ['--schema.registry.port=-2'], env: {} }), /schema\.registry\.port must be at least -1/);
  assert.throws(() => loadConfig({ argv: ['--schema.registry.port=70000'], env: {} }), /at most 65535/);
  assert.throws(() => loadConfig({ argv: ['--listeners=PLAINTEXT://:9000', '--schema.registry.port=9000'], env: {} }), /Kafka listener's port/);
  assert.throws(() => loadConfig({ argv: ['--iceberg.rest.port=9100', '--schema.registry.port=9100'], env: {} }), /also iceberg\.rest\.port/);
  assert.equal(load(['--remote.log.storage.system.enable=false', '--iceberg.rest.port=9100', '--schema.registry.port=9100'])?.['schema.registry.port'], 9100, 'no catalog runs without tiering');
});

test('admin.port: 9644 by default, 0 and -1 allowed, anything outside -1..65535 refused naming the setting', () => {
  assert.equal(load()['admin.port'], 9644);
  assert.equal(load()['admin.host'], '0.0.0.0');
  assert.equal(load(['--admin.port=0'])['admin.port'], 0);
  assert.equal(load([], { FLOE_ADMIN_PORT: '-1' })['admin.port'], -1);
  for (const bad of ['-2', '65536', 'http']) {
    assert.throws(() => load([`--admin.port=${bad}`]), (err: unknown) => err instanceof ConfigError && /admin\.port/.test(err.message), bad);
  }
  assert.throws(() => load(['--listeners=PLAINTEXT://:9000', '--admin.port=9000']), /admin\.port 9000 is also a Kafka listener's port/);
  assert.throws(() => load(['--schema.registry.port=9200', '--admin.port=9200']), /admin\.port 9200 is also schema\.registry\.port/);
  assert.throws(() => load(['--iceberg.rest.port=9300', '--admin.port=9300']), /admin\.port 9300 is also iceberg\.rest\.port/);
});

test("authorization settings: Kafka's authorizer names, super.users as principals, deny by default", () => {
  const load = (argv: string[]) => {
    const r = loadConfig({ argv, env: {} });
    assert.ok(!r.help);
    return r.config;
  };
  const defaults = load([]);
  assert.equal(defaults['authorizer.class.name'], '');
  assert.equal(defaults['allow.everyone.if.no.acl.found'], false);
  for (const name of ['org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'kafka.security.authorizer.AclAuthorizer']) {
    assert.equal(load([`--authorizer.class.name=${name}`])['authorizer.class.name'], name);
  }
  assert.throws(() => load(['--authorizer.class.name=com.example.MyAuthorizer']), /authorizer\.class\.name must be one of/);
  assert.equal(load(['--super.users=User:admin;User:CN=ops,O=acme'])['super.users'], 'User:admin;User:CN=ops,O=acme');
  assert.throws(() => load(['--super.users=User:admin;ops']), /super\.users: 'ops' is not a principal/);
});

test('long settings take any 64-bit value, as Kafka does: Long.MAX_VALUE ("no limit") is accepted, beyond it is refused', () => {
  const r = loadConfig({ argv: ['--remote.log.manager.copy.max.bytes.per.second=9223372036854775807', '--log.cleaner.io.max.bytes.per.second=9223372036854775807'], env: {} });
  assert.ok(!r.help);
  assert.equal(r.config['remote.log.manager.copy.max.bytes.per.second'], Number.MAX_SAFE_INTEGER);
  assert.throws(() => loadConfig({ argv: ['--remote.log.manager.copy.max.bytes.per.second=9223372036854775808'], env: {} }), /must fit in a 64-bit integer/);
  assert.throws(() => loadConfig({ argv: ['--remote.log.manager.copy.max.bytes.per.second=0'], env: {} }), /must be at least 1/);
});

test('external catalog: builtin by default; rest needs an http(s) URI; token or credential, never both; secrets never echoed', () => {
  const d = load();
  assert.equal(d['iceberg.catalog.type'], 'builtin');
  assert.equal(d['iceberg.catalog.scope'], 'catalog');
  assert.equal(d['iceberg.namespace'], 'kafka');
  const c = load(['--iceberg.catalog.type=rest', '--iceberg.catalog.uri=http://catalog:8181', '--iceberg.catalog.warehouse=lake', '--iceberg.catalog.credential=floe:s3cr3t'], { FLOE_ICEBERG_CATALOG_OAUTH2_SERVER_URI: 'https://idp/token' });
  assert.equal(c['iceberg.catalog.uri'], 'http://catalog:8181');
  assert.equal(c['iceberg.catalog.oauth2.server.uri'], 'https://idp/token');
  assert.equal(c['iceberg.catalog.credential'], 'floe:s3cr3t');
  assert.throws(() => load(['--iceberg.catalog.type=rest']), /needs iceberg\.catalog\.uri/);
  assert.throws(() => load(['--iceberg.catalog.type=rest', '--iceberg.catalog.uri=catalog:8181']), /must be an http:\/\/ or https:\/\/ URI/);
  assert.throws(() => load(['--iceberg.catalog.type=glue']), /must be one of builtin, rest/);
  assert.throws(() => load(['--iceberg.catalog.uri=http://catalog:8181']), /apply only to an external catalog: set iceberg\.catalog\.type=rest/);
  const both = ['--iceberg.catalog.type=rest', '--iceberg.catalog.uri=http://c', '--iceberg.catalog.token=t0ken', '--iceberg.catalog.credential=id:secretvalue'];
  assert.throws(() => load(both), /not both/);
  assert.throws(() => load(['--iceberg.catalog.type=rest', '--iceberg.catalog.uri=http://c', '--iceberg.catalog.credential=nocolonsecret']), (err: Error) => /client_id:client_secret/.test(err.message) && !err.message.includes('nocolonsecret'));
});

test('external catalog SigV4: off by default, signing name glue; keys only with signing, in pairs; secrets never echoed', () => {
  const d = load();
  assert.equal(d['iceberg.catalog.sigv4.enabled'], false);
  assert.equal(d['iceberg.catalog.signing.name'], 'glue');
  const rest = ['--iceberg.catalog.type=rest', '--iceberg.catalog.uri=https://glue.eu-west-1.amazonaws.com/iceberg'];
  const c = load([...rest, '--iceberg.catalog.sigv4.enabled=true', '--iceberg.catalog.signing.region=eu-west-1', '--iceberg.catalog.access.key.id=AKIDX'], { FLOE_ICEBERG_CATALOG_SECRET_ACCESS_KEY: 'wJalrSECRET' });
  assert.equal(c['iceberg.catalog.sigv4.enabled'], true);
  assert.equal(c['iceberg.catalog.secret.access.key'], 'wJalrSECRET');
  assert.equal(load([...rest, '--iceberg.catalog.sigv4.enabled=true'])['iceberg.catalog.access.key.id'], '', 'no keys: the AWS default chain');
  assert.throws(() => load(['--iceberg.catalog.sigv4.enabled=true']), /iceberg\.catalog\.sigv4\.enabled apply only to an external catalog/);
  assert.throws(() => load([...rest, '--iceberg.catalog.signing.region=eu-west-1']), /apply only to SigV4 signing: set iceberg\.catalog\.sigv4\.enabled=true/);
  const secretOnly = [...rest, '--iceberg.catalog.sigv4.enabled=true', '--iceberg.catalog.secret.access.key=wJalrSECRET'];
  assert.throws(() => load(secretOnly), (err: Error) => /go together/.test(err.message) && !err.message.includes('wJalrSECRET'));
  assert.throws(() => load([...rest, '--iceberg.catalog.sigv4.enabled=true', '--iceberg.catalog.session.token=TOKENVALUE']), (err: Error) => /session\.token needs/.test(err.message) && !err.message.includes('TOKENVALUE'));
  assert.throws(() => load([...rest, '--iceberg.catalog.sigv4.enabled=true', '--iceberg.catalog.signing.name=']), /signing\.name must name the service/);
});
