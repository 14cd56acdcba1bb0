/**
 * The broker the ACL interop tests share: SASL PLAIN on one listener with an authorizer (Kafka's
 * StandardAuthorizer name), admin a super user and alice an ordinary one; its log lines are kept for the
 * tests' refusal and secret checks. Clients log in as either user: kafkajs, or Kafka's Java client through
 * a properties file of its security settings.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir, type TestBroker } from '../helpers/broker.js';
import { JavaClient } from './clients/java.js';

export const PW = { admin: 'admin-Pw-e91d', alice: 'alice-Pw-3f0c' };
export type AclUser = keyof typeof PW;

type After = { after(fn: () => unknown): void };

export interface AclBroker {
  readonly b: TestBroker;
  /** A folder of the test's own, removed after it. */
  readonly dir: string;
  /** The broker's log lines so far. */
  readonly lines: string[];
  readonly bootstrap: string;
}

export async function startAclBroker(t: After, name: string): Promise<AclBroker> {
  const dir = await tempDir(`floe-${name}-`);
  const lines: string[] = [];
  const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="${PW.admin}" user_alice="${PW.alice}";`;
  const b = await startBroker(
    ['--listeners=SASL_PLAINTEXT://127.0.0.1:0', `--sasl.plain.jaas.config=${jaas}`, '--authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer', '--super.users=User:admin', '--connection.failed.authentication.delay.ms=0'],
    { log: (l) => lines.push(l) },
  );
  t.after(async () => {
    await b.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { b, dir, lines, bootstrap: `127.0.0.1:${b.broker.listenerPort('SASL_PLAINTEXT')}` };
}

/** kafkajs logged in as `user`, retrying `retries` times. */
export function kafkajsAs(broker: AclBroker, user: AclUser, clientId: string, retries: number): Kafka {
  return new Kafka({ clientId, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries }, sasl: { mechanism: 'plain', username: user, password: PW[user] } });
}

/** Kafka's Java client logged in as `user`, closed after the test. */
export async function javaAs(t: After, broker: AclBroker, user: AclUser): Promise<JavaClient> {
  const props = join(broker.dir, `${user}.properties`);
  await writeFile(props, ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=PLAIN', `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${PW[user]}";`].join('\n') + '\n');
  const java = new JavaClient(broker.bootstrap, props);
  t.after(() => java.close());
  return java;
}
