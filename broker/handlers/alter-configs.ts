/**
 * AlterConfigs (key 33) and IncrementalAlterConfigs (key 44). AlterConfigs replaces a topic's whole set of
 * overrides; the incremental form sets, deletes, appends to or subtracts from single entries. Broker settings
 * are static (file, environment, flags) and cannot be altered at run time.
 */
import { ErrorCode, KafkaError } from '../../protocol/error-codes.js';
import { effectiveConfigs, topicConfigDef } from '../topics/topic-configs.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { Logger } from '../logger.js';
import type { ApiHandler, Body, HandlerContext } from './handler.js';
import { toErrorResult } from './common.js';
import { configsDenied, RESOURCE_BROKER, RESOURCE_TOPIC } from './describe-configs.js';

interface Resource {
  resourceType: number;
  resourceName: string;
  configs: { name: string; value: string | null; configOperation?: number }[];
}

const OP_SET = 0;
const OP_DELETE = 1;
const OP_APPEND = 2;
const OP_SUBTRACT = 3;

abstract class AlterConfigsBase implements ApiHandler {
  abstract readonly apiKey: number;
  readonly minVersion = 0;
  abstract readonly maxVersion: number;

  constructor(
    protected readonly topics: TopicManager,
    private readonly log: Logger,
  ) {}

  /** The override changes (null = remove) a resource asks for. */
  protected abstract changes(r: Resource): Record<string, string | null>;

  /** Kafka's broker-side checks before the controller sees a resource: no name twice, no null to set. */
  protected checkEntries(r: Resource, nullAllowed: (c: Resource['configs'][number]) => boolean): void {
    const names = new Set(r.configs.map((c) => c.name));
    if (names.size !== r.configs.length) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys: give each config at most once per resource.');
    const nulls = r.configs.filter((c) => c.value === null && !nullAllowed(c)).map((c) => c.name);
    if (nulls.length > 0) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nulls.join(', ')}. Give a value, or use IncrementalAlterConfigs DELETE to remove an override.`);
    }
  }

  async handle(body: Body, ctx: HandlerContext): Promise<Body> {
    const responses: Body[] = [];
    const seen = new Set<string>();
    for (const r of body.resources as Resource[]) {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      try {
        const key = `${r.resourceType}:${r.resourceName}`;
        if (seen.has(key)) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'The same resource appears twice in the request.');
        seen.add(key);
        const refusal = configsDenied(ctx, 'ALTER_CONFIGS', r);
        if (refusal !== undefined) throw new KafkaError(refusal.errorCode, refusal.errorMessage);
        if (r.resourceType === RESOURCE_BROKER) {
          throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Broker settings are static: change them in the config file, environment or flags and restart.');
        }
        if (r.resourceType !== RESOURCE_TOPIC) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Resource type ${r.resourceType} cannot be altered; use 2 (topic).`);
        if (!this.topics.getTopic(r.resourceName)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${r.resourceName}' does not exist.`);
        await this.topics.alterConfigs(r.resourceName, this.changes(r), body.validateOnly === true);
        responses.push({ ...base, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        responses.push({ ...base, ...toErrorResult(err, this.log, { resource: r.resourceName }) });
      }
    }
    return { throttleTimeMs: 0, responses };
  }
}

export class AlterConfigsHandler extends AlterConfigsBase {
  readonly apiKey = 33;
  readonly maxVersion = 2;

  protected changes(r: Resource): Record<string, string | null> {
    this.checkEntries(r, () => false);
    const current = this.topics.getTopic(r.resourceName)?.configs ?? {};
    const next: Record<string, string | null> = {};
    for (const k of Object.keys(current)) next[k] = null;
    for (const c of r.configs) next[c.name] = c.value;
    return next;
  }
}

export class IncrementalAlterConfigsHandler extends AlterConfigsBase {
  readonly apiKey = 44;
  readonly maxVersion = 1;

  protected changes(r: Resource): Record<string, string | null> {
    const topic = this.topics.getTopic(r.resourceName);
    const eff = effectiveConfigs(topic?.configs ?? {}, this.topics.config);
    this.checkEntries(r, (c) => c.configOperation === OP_DELETE);
    const out: Record<string, string | null> = {};
    for (const c of r.configs) {
      const list = () => (eff.get(c.name)?.value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');
      const opValues = () => (c.value ?? '').split(',').map((v) => v.trim());
      if ((c.configOperation === OP_APPEND || c.configOperation === OP_SUBTRACT) && topicConfigDef(c.name)?.kind !== 'list') {
        const op = c.configOperation === OP_APPEND ? 'APPEND' : 'SUBTRACT';
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `Can't ${op} to key ${c.name} because its type is not LIST; use SET.`);
      }
      switch (c.configOperation) {
        case OP_SET:
          out[c.name] = c.value;
          break;
        case OP_DELETE:
          out[c.name] = null;
          break;
        case OP_APPEND:
          out[c.name] = [...new Set([...list(), ...opValues()])].filter((v) => v !== '').join(',');
          break;
        case OP_SUBTRACT: {
          const remove = new Set(opValues());
          out[c.name] = list().filter((v) => !remove.has(v)).join(',');
          break;
        }
        default:
          throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown config operation ${String(c.configOperation)} for '${c.name}'.`);
      }
    }
    return out;
  }
}
