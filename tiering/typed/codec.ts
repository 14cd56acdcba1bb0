// Lead's placeholder dispatcher until the codec branch lands its own codec.ts (take theirs on merge).
import type { ValueCodec, WriterSchema } from './api.js';
import { TypedValueError } from './api.js';
import { compileAvroCodec } from './avro-codec.js';

export function compileValueCodec(writer: WriterSchema, _options: { messageIndexes?: readonly number[] } = {}): ValueCodec {
  if (writer.schemaType === 'AVRO') return compileAvroCodec(writer);
  throw new TypedValueError('UNSUPPORTED_SCHEMA', `${writer.schemaType} codecs are not built yet`);
}
