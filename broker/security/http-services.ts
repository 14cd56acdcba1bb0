/**
 * The security of each HTTP service, built once from the config: which server factory (HTTP or HTTPS),
 * which authentication, and how topic ACLs apply.
 *
 * - Iceberg REST catalog (iceberg.rest.*): table `<namespace>.<name>` follows the ACLs of topic `<name>`
 *   (a dead-letter table `<name>~dlq` those of `<name>`): loading it needs READ, seeing it (lists, HEAD)
 *   DESCRIBE. A table no topic has the name of is governed the same way, so an authorizer denies by default
 *   there too (grant with an ACL on that topic name, a prefixed ACL, or super.users).
 * - Schema registry: subjects `<topic>-key` and `<topic>-value` (TopicNameStrategy) follow the topic's ACLs,
 *   READ to read and WRITE to register, delete or configure. Other subjects (record-name strategies) are
 *   open to any authenticated user; schemas by id likewise.
 * - Admin port: admin-auth.ts.
 */
import type { RequestListener, Server } from 'node:http';
import type { BrokerConfig } from '../config/settings.js';
import type { RateLimitedLog } from '../logger.js';
import type { RegistryAuth } from '../schema-registry/http.js';
import type { IcebergTieringSettings } from '../../tiering/plugin/open-iceberg-tiering.js';
import { clientHost, type Denial } from './acls/access.js';
import type { AclAuthorizer } from './acls/authorizer.js';
import { HTTP_CHALLENGE, httpServerFactory, HttpAuthenticator, TokenIssuer, type PasswordChecker } from './http-auth.js';
import type { TlsContext } from './tls.js';

type RestAuth = NonNullable<IcebergTieringSettings['rest']['auth']>;
export type HttpService = 'iceberg.rest' | 'schema.registry' | 'admin';

const DEAD_LETTER_SUFFIX = '~dlq';

/** Whether a service is on HTTPS (its `<service>.ssl.enabled`). */
export function httpsEnabled(config: BrokerConfig, service: HttpService): boolean {
  return config[`${service}.ssl.enabled`];
}

export function anyHttps(config: BrokerConfig): boolean {
  return (['iceberg.rest', 'schema.registry', 'admin'] as const).some((s) => httpsEnabled(config, s));
}

export function authenticationOn(config: BrokerConfig, service: HttpService): boolean {
  return config[`${service}.authentication.method`] === 'BASIC';
}

export function anyAuthentication(config: BrokerConfig): boolean {
  return (['iceberg.rest', 'schema.registry', 'admin'] as const).some((s) => authenticationOn(config, s));
}

/** The topic whose ACLs a table follows. */
export function topicOfTable(name: string): string {
  return name.endsWith(DEAD_LETTER_SUFFIX) ? name.slice(0, -DEAD_LETTER_SUFFIX.length) : name;
}

/** The topic whose ACLs a subject follows; undefined for subjects not named after a topic. */
export function topicOfSubject(subject: string): string | undefined {
  const m = /^(.+)-(key|value)$/.exec(subject);
  return m?.[1];
}

export class HttpSecurity {
  readonly authenticator: HttpAuthenticator | undefined;

  constructor(
    private readonly config: BrokerConfig,
    private readonly tls: TlsContext | undefined,
    passwords: PasswordChecker | undefined,
    private readonly authorizer: AclAuthorizer | undefined,
    failureLog: RateLimitedLog,
    private readonly onDenied?: (d: Denial) => void,
  ) {
    this.authenticator = passwords ? new HttpAuthenticator(passwords, new TokenIssuer(config['iceberg.rest.oauth.token.lifetime.ms']), failureLog) : undefined;
  }

  /** The server factory of a service: HTTPS with the broker's certificate when `<service>.ssl.enabled`. */
  createServer(service: HttpService): ((listener: RequestListener) => Server) | undefined {
    if (!httpsEnabled(this.config, service)) return undefined;
    if (this.tls === undefined) throw new Error(`${service}.ssl.enabled needs the broker's TLS settings (ssl.keystore.*)`);
    return httpServerFactory(this.tls);
  }

  private allowed(principal: string, remoteAddress: string, operation: 'READ' | 'WRITE' | 'DESCRIBE', topic: string, quiet: boolean): boolean {
    const authorizer = this.authorizer;
    if (authorizer === undefined) return true;
    const host = clientHost(remoteAddress);
    const ok = authorizer.authorize(principal, host, operation, 'TOPIC', topic);
    if (!ok && !quiet) this.onDenied?.({ principal, host, operation, resourceType: 'TOPIC', resource: topic });
    return ok;
  }

  /** The REST catalog's authentication and table ACLs; undefined with iceberg.rest.authentication.method=NONE. */
  restAuth(): RestAuth | undefined {
    const auth = this.authenticator;
    if (!authenticationOn(this.config, 'iceberg.rest') || auth === undefined) return undefined;
    const staticToken = this.config['iceberg.rest.token'];
    return {
      challenge: HTTP_CHALLENGE,
      authenticate: (header, remote) => auth.authenticate('iceberg.rest', header, remote, staticToken),
      issueToken: (id, secret, remote) => auth.issueToken('iceberg.rest', id, secret, remote),
      mayDescribe: (caller, id) => this.allowed(caller.principal, caller.remoteAddress, 'DESCRIBE', topicOfTable(id.name), true),
      mayLoad: (caller, id) => this.allowed(caller.principal, caller.remoteAddress, 'READ', topicOfTable(id.name), false),
    };
  }

  /** The registry's authentication and subject ACLs; undefined with schema.registry.authentication.method=NONE. */
  registryAuth(): RegistryAuth | undefined {
    const auth = this.authenticator;
    if (!authenticationOn(this.config, 'schema.registry') || auth === undefined) return undefined;
    return {
      challenge: HTTP_CHALLENGE,
      authenticate: (header, remote) => auth.authenticate('schema.registry', header, remote),
      maySubject: (principal, remote, subject, operation, quiet) => {
        const topic = topicOfSubject(subject);
        return topic === undefined || this.allowed(principal, remote, operation, topic, quiet);
      },
    };
  }
}
