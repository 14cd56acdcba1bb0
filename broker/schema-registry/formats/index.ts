/** The schema formats the registry serves, by Confluent's `schemaType`. */
import type { SchemaType } from '../model.js';
import { AVRO_FORMAT } from './avro.js';
import type { SchemaFormat } from './format.js';
import { JSON_SCHEMA_FORMAT } from './json-schema.js';
import { PROTOBUF_FORMAT } from './protobuf.js';

export const SCHEMA_FORMATS: Readonly<Record<SchemaType, SchemaFormat>> = Object.freeze({
  AVRO: AVRO_FORMAT as unknown as SchemaFormat,
  JSON: JSON_SCHEMA_FORMAT as unknown as SchemaFormat,
  PROTOBUF: PROTOBUF_FORMAT as unknown as SchemaFormat,
});

export type { ParsedSchema, ResolvedReference, SchemaFormat } from './format.js';
