/**
 * The typers of one topic in a schema mode: its values (`iceberg.mode`), its keys (`iceberg.key.mode`), or
 * both, sharing the table's typed layout. The conversion, compaction and the dead-letter table are handed
 * this one object; `undefined` in their options means `key_value` rows with a binary key.
 */
import type { TypedLayout } from './table-layout.js';
import { keyPart, valuePart, ValueTyper, type RegistryReader, type SchemaRefusal, type TypedKeySettings, type TypedValueSettings } from './value-typer.js';

export type InvalidRecordAction = 'dlq_table' | 'drop';

/** A topic's schema modes: `iceberg.mode`, `iceberg.key.mode` (either may be absent) and `iceberg.invalid.record.action`. */
export interface TopicTypingSettings {
  readonly value?: TypedValueSettings | undefined;
  readonly key?: TypedKeySettings | undefined;
  /** Dead letters go to the `<topic>~dlq` table, or are only counted. */
  readonly invalidRecordAction: InvalidRecordAction;
}

export class RecordTypers {
  readonly value: ValueTyper | undefined;
  readonly key: ValueTyper | undefined;
  readonly invalidRecordAction: InvalidRecordAction;

  constructor(
    readonly layout: TypedLayout,
    readonly settings: TopicTypingSettings,
    /** undefined: not attached yet (conversion waits); null: the broker runs without a registry. */
    registry: () => RegistryReader | null | undefined,
    onRefused: (refusal: SchemaRefusal & { part: 'value' | 'key' }) => void = () => undefined,
  ) {
    this.invalidRecordAction = settings.invalidRecordAction;
    this.value = settings.value ? new ValueTyper(valuePart(settings.value), registry, layout, (r) => onRefused({ ...r, part: 'value' })) : undefined;
    if (settings.key) {
      layout.typeKeys();
      this.key = new ValueTyper(keyPart(settings.key), registry, layout, (r) => onRefused({ ...r, part: 'key' }));
    } else {
      this.key = undefined;
    }
  }
}
