/**
 * The catalog interface: where tables are found and how their metadata pointer moves. Two implementations:
 * `WarehouseCatalog` (built in; state lives in the warehouse itself) and `RestCatalogClient` (an external
 * Iceberg REST catalog). The REST server (`../rest/server.ts`) serves any `Catalog`.
 *
 * Commits follow the REST protocol's shape: `commitTable(id, requirements, updates)` checks the requirements
 * against the current metadata and applies the updates atomically, or throws `CommitConflictError` (a
 * requirement no longer holds: reload, re-apply, retry) or `CatalogError` 'COMMIT_STATE_UNKNOWN'.
 */
import type { TableMetadata } from '../table-metadata.js';
import type { TableRequirement, TableUpdate } from '../table-metadata-builder.js';
import type { Schema } from '../schema.js';
import type { PartitionSpec } from '../partition-spec.js';
import type { SortOrder } from '../sort-order.js';
import type { FormatVersion } from '../table-metadata.js';

/** A namespace: one or more levels, e.g. `['kafka']` or `['prod', 'events']`. */
export type Namespace = readonly string[];

export interface TableIdentifier {
  readonly namespace: Namespace;
  readonly name: string;
}

export interface LoadTableResult {
  /** The metadata file the catalog currently points at. */
  readonly metadataLocation: string;
  readonly metadata: TableMetadata;
  /** Per-table settings for engines (e.g. `s3.endpoint`); empty when none. */
  readonly config: Readonly<Record<string, string>>;
}

export interface CreateTableRequest {
  readonly schema: Schema;
  /** Default: the catalog's location for the identifier. */
  readonly location?: string;
  readonly partitionSpec?: PartitionSpec;
  readonly sortOrder?: SortOrder;
  readonly properties?: Readonly<Record<string, string>>;
  readonly formatVersion?: FormatVersion;
}

export interface CommitTableResult {
  readonly metadataLocation: string;
  readonly metadata: TableMetadata;
}

export interface Catalog {
  /** A name for messages and the REST config. */
  readonly name: string;

  listNamespaces(parent?: Namespace): Promise<Namespace[]>;
  createNamespace(namespace: Namespace, properties?: Readonly<Record<string, string>>): Promise<void>;
  /** The namespace's properties; throws CatalogError 'NO_SUCH_NAMESPACE'. */
  loadNamespaceProperties(namespace: Namespace): Promise<Record<string, string>>;
  namespaceExists(namespace: Namespace): Promise<boolean>;
  /** Throws 'NO_SUCH_NAMESPACE', or 'NAMESPACE_NOT_EMPTY' while it holds tables or namespaces. */
  dropNamespace(namespace: Namespace): Promise<void>;

  listTables(namespace: Namespace): Promise<TableIdentifier[]>;
  /** Creates the table with its first metadata file; throws 'ALREADY_EXISTS' or 'NO_SUCH_NAMESPACE'. */
  createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadTableResult>;
  /**
   * Registers an existing table by its metadata file (e.g. a Floe table in a user's system-of-record
   * catalog); throws 'ALREADY_EXISTS' or 'NO_SUCH_NAMESPACE'.
   */
  registerTable(id: TableIdentifier, metadataLocation: string): Promise<LoadTableResult>;
  /** Throws 'NO_SUCH_TABLE'. */
  loadTable(id: TableIdentifier): Promise<LoadTableResult>;
  tableExists(id: TableIdentifier): Promise<boolean>;
  /** Forgets the table (its files stay unless `purge`); throws 'NO_SUCH_TABLE'. */
  dropTable(id: TableIdentifier, options?: { purge?: boolean }): Promise<void>;
  /** Atomically applies `updates` if `requirements` hold. Throws CommitConflictError when they don't. */
  commitTable(id: TableIdentifier, requirements: readonly TableRequirement[], updates: readonly TableUpdate[]): Promise<CommitTableResult>;

  close(): Promise<void>;
}

export type CatalogErrorCode =
  | 'NO_SUCH_NAMESPACE'
  | 'NO_SUCH_TABLE'
  | 'ALREADY_EXISTS'
  | 'NAMESPACE_NOT_EMPTY'
  | 'INVALID_IDENTIFIER'
  | 'INVALID_REQUEST'
  | 'FORBIDDEN'
  | 'NOT_AUTHORIZED'
  | 'COMMIT_STATE_UNKNOWN'
  | 'UNSUPPORTED'
  | 'SERVICE_ERROR';

/** An error of a catalog operation. `code` is stable; the message says what to do. */
export class CatalogError extends Error {
  constructor(
    readonly code: CatalogErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CatalogError';
  }
}

function ignoreAlreadyExists(err: unknown): void {
  if (!(err instanceof CatalogError && err.code === 'ALREADY_EXISTS')) throw err;
}

/** Creates `namespace` unless it exists; another writer creating it at the same moment is not an error. */
export async function createNamespaceIfMissing(catalog: Catalog, namespace: Namespace): Promise<void> {
  if (await catalog.namespaceExists(namespace)) return;
  await catalog.createNamespace(namespace).catch(ignoreAlreadyExists);
}

/**
 * Creates table `id` unless it exists; another writer creating it at the same moment is not an error. The
 * caller loads the table afterwards and checks that it is the one it expects, whoever created it.
 */
export async function createTableIfMissing(catalog: Catalog, id: TableIdentifier, request: CreateTableRequest): Promise<void> {
  if (await catalog.tableExists(id)) return;
  await catalog.createTable(id, request).catch(ignoreAlreadyExists);
}

/** `a.b` for messages (levels joined with dots). */
export function namespaceToString(ns: Namespace): string {
  return ns.join('.');
}

export function identifierToString(id: TableIdentifier): string {
  return id.namespace.length === 0 ? id.name : `${namespaceToString(id.namespace)}.${id.name}`;
}

/** Checks a namespace: at least one level, no empty level, no control characters. */
export function checkNamespace(ns: Namespace): void {
  if (!Array.isArray(ns) || ns.length === 0) throw new CatalogError('INVALID_IDENTIFIER', 'A namespace needs at least one level, e.g. ["kafka"]');
  for (const level of ns) {
    if (typeof level !== 'string' || level === '' || /[\u0000-\u001f]/.test(level)) {
      throw new CatalogError('INVALID_IDENTIFIER', `Namespace level ${JSON.stringify(level)} is invalid: use non-empty names without control characters`);
    }
  }
}

export function checkIdentifier(id: TableIdentifier): void {
  checkNamespace(id.namespace);
  if (typeof id.name !== 'string' || id.name === '' || /[\u0000-\u001f/]/.test(id.name)) {
    throw new CatalogError('INVALID_IDENTIFIER', `Table name ${JSON.stringify(id.name)} is invalid: use a non-empty name without '/' or control characters`);
  }
}

export function sameNamespace(a: Namespace, b: Namespace): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
