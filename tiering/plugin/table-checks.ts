/**
 * What a topic's table must be before Floe writes to it. Floe never takes over a table it did not create
 * for the topic (checkOwnership), and never writes data files whose field ids are not the table's
 * (checkFieldIds): Floe writes Parquet with fixed field ids (tiering/convert/schema.ts), and a REST catalog
 * may assign fresh ids when it creates a table (Project Nessie numbers nested fields depth-first, where
 * Iceberg's own catalogs keep Floe's ids). Data files with other ids than the table's would show engines the
 * wrong columns, so such a table is refused and the topic waits, with the reason in the log and the metric.
 */
import type { TableIdentifier } from '../../iceberg/catalog/catalog.js';
import { FLOE_OWNER_PROPERTY } from '../../iceberg/rest/server.js';
import { indexById, type Schema } from '../../iceberg/schema.js';
import { TieringError } from './api.js';

export const FLOE_OWNER = 'floe-tiering';
export const TOPIC_PROPERTY = 'floe.kafka.topic';

function tableName(id: TableIdentifier): string {
  return `${id.namespace.join('.')}.${id.name}`;
}

/**
 * A table Floe did not create for this topic is never taken over: no `floe.owner=floe-tiering` property
 * (someone else's table of that name), or made by Floe for another topic. Throws FOREIGN_TABLE.
 */
export function checkOwnership(topic: string, id: TableIdentifier, props: Readonly<Record<string, string>>, catalog: string): void {
  const name = tableName(id);
  if (props[FLOE_OWNER_PROPERTY] !== FLOE_OWNER) {
    throw new TieringError('FOREIGN_TABLE', `table ${name} in catalog ${catalog} exists but was not created by Floe (no ${FLOE_OWNER_PROPERTY}=${FLOE_OWNER} property): Floe never takes over a table, so topic ${topic} is not tiered; give the topic another table with the topic config iceberg.table.name (or iceberg.namespace), or rename or drop that table`);
  }
  const owner = props[TOPIC_PROPERTY];
  if (owner !== undefined && owner !== topic) {
    throw new TieringError('FOREIGN_TABLE', `table ${name} in catalog ${catalog} belongs to topic ${owner} (${TOPIC_PROPERTY}), not to ${topic}: topic ${topic} is not tiered; give it another table with the topic config iceberg.table.name`);
  }
}

/**
 * Every field of `written` (the schema Floe writes data files with) that the table's schema also has, by
 * its full name, must carry the same field id there (types are left to schema evolution, which may promote
 * them). Fields only one side has are fine: engines may add columns, and typed tables add their own. Throws
 * FOREIGN_TABLE naming the first fields that differ.
 */
export function checkFieldIds(topic: string, id: TableIdentifier, table: Schema, written: Schema, catalog: string): void {
  const byName = new Map([...indexById(table).values()].map((f) => [f.name, f]));
  const differ: string[] = [];
  for (const f of indexById(written).values()) {
    const t = byName.get(f.name);
    if (t === undefined) continue;
    if (t.id !== f.id) differ.push(`${f.name} has id ${t.id}, Floe writes ${f.id}`);
  }
  if (differ.length === 0) return;
  const shown = differ.slice(0, 3).join('; ') + (differ.length > 3 ? `; and ${differ.length - 3} more` : '');
  throw new TieringError('FOREIGN_TABLE', `table ${tableName(id)} in catalog ${catalog} does not have the field ids Floe writes its data files with (${shown}): engines would read the wrong columns, so topic ${topic} is not tiered; the catalog assigned its own ids when it created the table (Project Nessie does). Use a catalog that keeps the ids of the schema it is sent, or give the topic another table with iceberg.table.name`);
}
