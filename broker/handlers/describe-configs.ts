/** DescribeConfigs (key 32): topic configs (with sources, types, synonyms, documentation) and broker settings. */
import { ErrorCode } from '../../protocol/error-codes.js';
import { SENSITIVE_SETTINGS, SETTINGS } from '../config/settings.js';
import type { BrokerConfig } from '../config/settings.js';
import { ConfigSource, ConfigType, brokerDefaultIsSet, configTypeOf, defaultValue, effectiveConfigs, topicConfigDef } from '../topics/topic-configs.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { allowed, allowedOnCluster } from '../security/acls/access.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import type { BrokerIdentity } from './common.js';

export const RESOURCE_TOPIC = 2;
export const RESOURCE_BROKER = 4;

interface Resource {
  resourceType: number;
  resourceName: string;
  configurationKeys: string[] | null;
}

interface Synonym {
  name: string;
  value: string | null;
  source: number;
}

interface Entry {
  name: string;
  value: string | null;
  readOnly: boolean;
  source: number;
  type: number;
  sensitive: boolean;
  doc: string;
  /** Where the value comes from, in Kafka's order of precedence (the entry itself first). */
  synonyms: Synonym[];
}

export class DescribeConfigsHandler implements ApiHandler {
  readonly apiKey = 32;
  readonly minVersion = 0;
  readonly maxVersion = 4;

  constructor(
    private readonly topics: TopicManager,
    private readonly identity: BrokerIdentity,
  ) {}

  handle(body: Body, ctx: HandlerContext): Body {
    const includeSynonyms = body.includeSynonyms === true;
    const includeDocs = body.includeDocumentation === true;
    const results = (body.resources as Resource[]).map((r) => {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      const refusal = configsDenied(ctx, 'DESCRIBE_CONFIGS', r);
      if (refusal !== undefined) return { ...base, ...refusal, configs: [] };
      const entries = this.entries(r);
      if (typeof entries === 'object' && 'errorCode' in entries) return { ...base, ...entries, configs: [] };
      const keys = r.configurationKeys;
      const selected = keys === null || keys.length === 0 ? entries : entries.filter((e) => keys.includes(e.name));
      return {
        ...base,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        configs: selected.map((e) => ({
          name: e.name,
          value: e.value,
          readOnly: e.readOnly,
          // isDefault is v0's, configSource v1+'s: the encoder leaves out what the request's version lacks.
          isDefault: e.source === ConfigSource.DEFAULT_CONFIG,
          configSource: e.source,
          isSensitive: e.sensitive,
          synonyms: includeSynonyms ? e.synonyms : [],
          configType: e.type,
          documentation: includeDocs ? e.doc : null,
        })),
      };
    });
    return { throttleTimeMs: 0, results };
  }

  private entries(r: Resource): Entry[] | { errorCode: number; errorMessage: string } {
    if (r.resourceType === RESOURCE_TOPIC) {
      const topic = this.topics.getTopic(r.resourceName);
      if (!topic) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic '${r.resourceName}' does not exist.` };
      const broker = this.topics.config;
      return [...effectiveConfigs(topic.configs, broker)].map(([name, { value, source }]) => {
        const def = topicConfigDef(name);
        const sensitive = def?.kind === 'password';
        const shown = sensitive ? null : value;
        // Kafka's synonyms of a topic config: the topic's override, then the broker setting behind the
        // default (when set), then the default itself, named after the broker setting when there is one.
        const synonyms: Synonym[] = [];
        if (source === ConfigSource.TOPIC_CONFIG) synonyms.push({ name, value: shown, source });
        if (def?.brokerKey !== undefined && brokerDefaultIsSet(def, broker)) {
          synonyms.push({ name: def.brokerKey, value: defaultValue(def, broker), source: ConfigSource.STATIC_BROKER_CONFIG });
        }
        if (def !== undefined && def.default !== null) synonyms.push({ name: def.brokerKey ?? name, value: def.default, source: ConfigSource.DEFAULT_CONFIG });
        return { name, value: shown, readOnly: false, source, type: def ? configTypeOf(def) : ConfigType.STRING, sensitive, doc: def?.doc ?? '', synonyms };
      });
    }
    if (r.resourceType === RESOURCE_BROKER) {
      if (r.resourceName !== '' && r.resourceName !== String(this.identity.nodeId)) {
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `This is broker ${this.identity.nodeId}, not '${r.resourceName}'.` };
      }
      return brokerEntries(this.topics.config);
    }
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Resource type ${r.resourceType} is not supported; use 2 (topic) or 4 (broker).` };
  }
}

function brokerEntries(config: BrokerConfig): Entry[] {
  return SETTINGS.map((s) => {
    const value: unknown = config[s.key];
    const isDefault = value === s.default;
    const type = s.type === 'int' ? ConfigType.INT : s.type === 'long' ? ConfigType.LONG : s.type === 'bool' ? ConfigType.BOOLEAN : ConfigType.STRING;
    const source = isDefault ? ConfigSource.DEFAULT_CONFIG : ConfigSource.STATIC_BROKER_CONFIG;
    // Secrets come back null with isSensitive, as Kafka describes password configs.
    const sensitive = SENSITIVE_SETTINGS.has(s.key);
    const shown = sensitive ? null : Array.isArray(value) ? value.join(',') : String(value);
    return { name: s.key, value: shown, readOnly: true, source, type: sensitive ? ConfigType.PASSWORD : type, sensitive, doc: s.doc, synonyms: [{ name: s.key, value: shown, source }] };
  });
}

/** DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic, or on the cluster for a broker resource, as Kafka asks. */
export function configsDenied(ctx: HandlerContext, op: 'DESCRIBE_CONFIGS' | 'ALTER_CONFIGS', r: { resourceType: number; resourceName: string }): { errorCode: number; errorMessage: string } | undefined {
  if (r.resourceType === RESOURCE_TOPIC && !allowed(ctx, op, 'TOPIC', r.resourceName)) {
    return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: `The principal may not ${op === 'ALTER_CONFIGS' ? 'alter' : 'describe'} the configs of topic '${r.resourceName}'; grant ${op} on it.` };
  }
  if (r.resourceType === RESOURCE_BROKER && !allowedOnCluster(ctx, op)) {
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: `The principal may not ${op === 'ALTER_CONFIGS' ? 'alter' : 'describe'} broker configs; grant ${op} on the cluster.` };
  }
  return undefined;
}
