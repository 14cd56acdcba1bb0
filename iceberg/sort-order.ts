/**
 * Sort orders, shaped after the spec's JSON (Iceberg spec, "Sorting" and Appendix C):
 * `{ "order-id": 1, "fields": [{ "transform": "identity", "source-id": 2, "direction": "asc",
 * "null-order": "nulls-first" }] }`. Order id 0 is reserved for the unsorted order.
 */
import { isJsonObject } from './json.js';
import { indexById, isPrimitive, type Schema } from './schema.js';
import { parseTransform, resultType, transformToString, type TransformString } from './transforms.js';
import { IcebergError } from './types.js';

export type SortDirection = 'asc' | 'desc';
export type NullOrder = 'nulls-first' | 'nulls-last';

export interface SortField {
  readonly transform: TransformString;
  readonly 'source-id': number;
  /** v3 multi-argument transforms only. */
  readonly 'source-ids'?: readonly number[];
  readonly direction: SortDirection;
  readonly 'null-order': NullOrder;
}

export interface SortOrder {
  readonly 'order-id': number;
  readonly fields: readonly SortField[];
}

export const UNSORTED_ORDER_ID = 0;
export const UNSORTED_ORDER: SortOrder = Object.freeze({ 'order-id': UNSORTED_ORDER_ID, fields: Object.freeze([]) });

function fail(message: string): never {
  throw new IcebergError('INVALID_SORT_ORDER', message);
}

export function parseSortOrder(json: unknown): SortOrder {
  if (!isJsonObject(json)) fail('A sort order must be a JSON object');
  const id = json['order-id'];
  if (typeof id !== 'number' || !Number.isInteger(id)) fail("sort order is missing an integer 'order-id'");
  if (!Array.isArray(json.fields)) fail(`sort order ${id} is missing its 'fields' list`);
  const fields = json.fields.map((f: unknown, i): SortField => {
    const w = `sort order ${id} field ${i}`;
    if (!isJsonObject(f)) fail(`${w} must be an object`);
    if (typeof f.transform !== 'string') fail(`${w} needs a 'transform' string`);
    let transform: string;
    try {
      transform = transformToString(parseTransform(f.transform));
    } catch (e) {
      if (e instanceof IcebergError) fail(`${w}: ${e.message}`);
      throw e;
    }
    if (f.direction !== 'asc' && f.direction !== 'desc') fail(`${w} has direction ${JSON.stringify(f.direction)}; use "asc" or "desc"`);
    if (f['null-order'] !== 'nulls-first' && f['null-order'] !== 'nulls-last') {
      fail(`${w} has null-order ${JSON.stringify(f['null-order'])}; use "nulls-first" or "nulls-last"`);
    }
    const ids = f['source-ids'];
    if (ids !== undefined) {
      if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => typeof x === 'number' && Number.isInteger(x))) {
        fail(`${w} 'source-ids' must be a non-empty list of integers`);
      }
      const sourceIds = ids as number[];
      return { transform, 'source-id': sourceIds[0] ?? 0, 'source-ids': sourceIds, direction: f.direction, 'null-order': f['null-order'] };
    }
    const src = f['source-id'];
    if (typeof src !== 'number' || !Number.isInteger(src)) fail(`${w} is missing an integer 'source-id'`);
    return { transform, 'source-id': src, direction: f.direction, 'null-order': f['null-order'] };
  });
  if (id === UNSORTED_ORDER_ID && fields.length > 0) fail('sort order 0 is reserved for the unsorted order and must have no fields');
  return { 'order-id': id, fields };
}

export function sortOrderToJson(order: SortOrder): Record<string, unknown> {
  return {
    'order-id': order['order-id'],
    fields: order.fields.map((f) => {
      const src = f['source-ids'] !== undefined && f['source-ids'].length > 1 ? { 'source-ids': [...f['source-ids']] } : { 'source-id': f['source-id'] };
      return { transform: f.transform, ...src, direction: f.direction, 'null-order': f['null-order'] };
    }),
  };
}

/** Checks that every sort field's sources are primitive columns of the schema that accept the transform. */
export function validateSortOrder(order: SortOrder, schema: Schema): void {
  const byId = indexById(schema);
  for (const f of order.fields) {
    const t = parseTransform(f.transform);
    for (const id of f['source-ids'] ?? [f['source-id']]) {
      const src = byId.get(id);
      if (!src) fail(`sort order ${order['order-id']} sorts on source-id ${id}, which is not in schema ${schema['schema-id']}`);
      if (!isPrimitive(src.type)) fail(`sort order ${order['order-id']} sorts on '${src.name}', a ${src.type.type}; sort on primitives`);
      if (t.kind !== 'unknown') {
        try {
          resultType(t, src.type);
        } catch (e) {
          if (e instanceof IcebergError) fail(`sort order ${order['order-id']}: ${e.message}`);
          throw e;
        }
      }
    }
  }
}

export function isUnsorted(order: SortOrder): boolean {
  return order.fields.length === 0;
}

/** Same fields (transform, sources, direction, null order) in the same order; ids are ignored. */
export function sortOrdersEquivalent(a: SortOrder, b: SortOrder): boolean {
  return JSON.stringify(sortOrderToJson({ ...a, 'order-id': 0 })) === JSON.stringify(sortOrderToJson({ ...b, 'order-id': 0 }));
}
