/**
 * For the codec tests: a Floe broker's schema registry (the independent serializers need one), and the
 * WriterSchema of a registered id read back over the registry's REST API (`/schemas/ids/{id}` and each
 * reference's subject version, transitively, dependencies first), as conversion will be handed it.
 */
import type { WriterSchema, WriterSchemaType } from '../../../tiering/typed/api.js';

interface SchemaReply {
  readonly schema: string;
  readonly schemaType?: WriterSchemaType;
  readonly references?: readonly { readonly name: string; readonly subject: string; readonly version: number }[];
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * `format` 'serialized': Protobuf schemas as base64 FileDescriptorProtos, the form Confluent's serializers
 * register (the registry's .proto text rendering of those is its own conversion).
 */
export async function writerSchemaFromRegistry(registryUrl: string, id: number, format?: 'serialized'): Promise<WriterSchema> {
  const query = format === undefined ? '' : `?format=${format}`;
  const top = await getJson<SchemaReply>(`${registryUrl}/schemas/ids/${id}${query}`);
  const references: { name: string; schema: string }[] = [];
  const seen = new Set<string>();
  const visit = async (refs: SchemaReply['references']): Promise<void> => {
    for (const ref of refs ?? []) {
      const key = `${ref.subject}/${ref.version}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const got = await getJson<SchemaReply>(`${registryUrl}/subjects/${encodeURIComponent(ref.subject)}/versions/${ref.version}${query}`);
      await visit(got.references);
      references.push({ name: ref.name, schema: got.schema });
    }
  };
  await visit(top.references);
  return { id, schemaType: top.schemaType ?? 'AVRO', schema: top.schema, references };
}
