/** One Protobuf value kind: how a field's type maps to Iceberg and how one value is read and written. */
import { TypedValueError, type MappedType } from './api.js';
import { WIRE_LEN, WireReader, WireWriter } from './protobuf-wire.js';

/** How one value of a field's type is mapped, read and written (the tag is the field's business). */
export interface Kind {
  readonly type: MappedType;
  readonly wire: number;
  /** Scalars that proto3 packs when repeated. */
  readonly packable: boolean;
  /** The value a proto3 field without presence holds when absent. */
  readonly defaultValue: unknown;
  read(r: WireReader): unknown;
  write(w: WireWriter, v: unknown): void;
  isDefault(v: unknown): boolean;
}

export function corrupt(why: string): TypedValueError {
  return new TypedValueError('CORRUPT_PAYLOAD', why);
}

/** A length-delimited kind (a message): `read` gets a reader over the field's bytes, `write` a fresh writer. */
export function delimitedKind(type: MappedType, read: (r: WireReader) => unknown, write: (w: WireWriter, v: unknown) => void): Kind {
  return {
    type,
    wire: WIRE_LEN,
    packable: false,
    defaultValue: null,
    read: (r) => {
      const [s, e] = r.delimited();
      return read(new WireReader(r.buf, s, e));
    },
    write: (w, v) => w.delimited((sub) => write(sub, v)),
    isDefault: () => false,
  };
}

