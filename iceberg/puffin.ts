/**
 * Puffin files (Iceberg's "Puffin file format" spec), as far as Floe writes them: blobs one after another
 * between the magic and an uncompressed JSON footer. Integers of the footer are little endian.
 *
 *   Magic Blob₁ … Blobₙ Footer     Footer = Magic FooterPayload FooterPayloadSize(4) Flags(4) Magic
 *
 *   const { bytes, placed } = writePuffin([{ type: 'deletion-vector-v1', fields: [ROW_POSITION_ID], payload, properties }]);
 */
export const PUFFIN_MAGIC = Buffer.from([0x50, 0x46, 0x41, 0x31]);

export interface PuffinBlob {
  /** The blob type, e.g. `deletion-vector-v1`. */
  readonly type: string;
  /** Field ids the blob is about. */
  readonly fields: readonly number[];
  readonly payload: Buffer;
  /** -1 when the writer cannot know them (deletion vectors are written before their commit). */
  readonly snapshotId?: bigint;
  readonly sequenceNumber?: bigint;
  readonly properties?: Readonly<Record<string, string>>;
}

/** Where a blob landed in the file. */
export interface PlacedBlob {
  readonly offset: number;
  readonly length: number;
}

/** Serializes a Puffin file holding `blobs` (uncompressed), with file-level `properties` in its footer. */
export function writePuffin(blobs: readonly PuffinBlob[], properties: Readonly<Record<string, string>> = {}): { bytes: Buffer; placed: PlacedBlob[] } {
  const parts: Buffer[] = [PUFFIN_MAGIC];
  let offset = PUFFIN_MAGIC.length;
  const placed: PlacedBlob[] = [];
  const footerBlobs: Record<string, unknown>[] = [];
  for (const b of blobs) {
    parts.push(b.payload);
    placed.push({ offset, length: b.payload.length });
    // snapshot-id and sequence-number are JSON longs: written as integer literals, never rounded.
    footerBlobs.push({ type: b.type, fields: [...b.fields], 'snapshot-id': `@@${(b.snapshotId ?? -1n).toString()}@@`, 'sequence-number': `@@${(b.sequenceNumber ?? -1n).toString()}@@`, offset, length: b.payload.length, ...(b.properties ? { properties: b.properties } : {}) });
    offset += b.payload.length;
  }
  const json = JSON.stringify({ blobs: footerBlobs, properties }).replace(/"@@(-?\d+)@@"/g, '$1');
  const payload = Buffer.from(json, 'utf8');
  const tail = Buffer.alloc(8);
  tail.writeInt32LE(payload.length, 0);
  tail.writeInt32LE(0, 4); // flags: footer payload not compressed
  parts.push(PUFFIN_MAGIC, payload, tail, PUFFIN_MAGIC);
  return { bytes: Buffer.concat(parts), placed };
}
