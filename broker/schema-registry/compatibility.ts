/**
 * Compatibility levels over a format's reader/writer check, as Confluent defines them:
 * - BACKWARD: the new schema reads data written with the latest one (FORWARD: the latest reads the new
 *   one's data; FULL: both);
 * - the _TRANSITIVE variants check against every earlier version instead of only the latest;
 * - NONE checks nothing.
 * "Earlier versions" are the subject's live (not soft-deleted) versions, oldest first.
 */
import type { CompatibilityLevel } from './model.js';
import type { ParsedSchema, SchemaFormat } from './formats/format.js';

export interface CompatibilityResult {
  readonly compatible: boolean;
  readonly messages: readonly string[];
}

export function checkCompatibility<P extends ParsedSchema>(format: SchemaFormat<P>, level: CompatibilityLevel, candidate: P, previous: readonly P[]): CompatibilityResult {
  if (level === 'NONE' || previous.length === 0) return { compatible: true, messages: [] };
  const against = level.endsWith('_TRANSITIVE') ? previous : previous.slice(-1);
  const backward = level.startsWith('BACKWARD') || level.startsWith('FULL');
  const forward = level.startsWith('FORWARD') || level.startsWith('FULL');
  const messages: string[] = [];
  for (const old of against) {
    if (old.schemaType !== candidate.schemaType) {
      messages.push(`the schema type changed from ${old.schemaType} to ${candidate.schemaType}`);
      continue;
    }
    if (backward) for (const m of format.readerIncompatibilities(candidate, old)) messages.push(`backward (new schema reading old data): ${m}`);
    if (forward) for (const m of format.readerIncompatibilities(old, candidate)) messages.push(`forward (old schema reading new data): ${m}`);
  }
  return { compatible: messages.length === 0, messages };
}
