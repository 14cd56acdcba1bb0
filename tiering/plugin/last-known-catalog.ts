/**
 * Keeps the Kafka path independent of an external catalog. Wraps the catalog tiering uses and, after every
 * table create, load, register and commit that the catalog answered, stores the table's metadata location in
 * the warehouse: `<warehouse>/_floe/catalog-pointers/<namespace levels>/<table>.json`. When the catalog is
 * unreachable (CatalogError SERVICE_ERROR: connection refused, timeouts, 5xx), loads and existence checks are
 * answered from that pointer and the metadata file it names, read through the warehouse's FileIO. So a broker
 * that starts while the catalog is down still opens its tables and serves tiered Kafka fetches (the offset
 * index and partition manifests are in the warehouse too); commits still go to the catalog only, fail, and
 * are retried until it is back. Floe is the only writer of its tables (the `floe.owner` property), so the
 * pointer is at most one commit behind (a crash between the catalog's answer and the pointer write); a commit
 * from a stale base is refused by the catalog's requirements and retried from the reloaded table.
 *
 * The pointer is written before a commit resolves, so nothing in memory (committed offsets, hence the local
 * segment hand-off) is ever ahead of what a restart without the catalog would load.
 */
import { CatalogError, type Catalog, type CommitTableResult, type CreateTableRequest, type LoadTableResult, type Namespace, type TableIdentifier } from '../../iceberg/catalog/catalog.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { FileIOError } from '../../iceberg/io/file-io.js';
import { parseTableMetadata } from '../../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../../iceberg/table-metadata-builder.js';

export const POINTERS_FOLDER = '_floe/catalog-pointers';

/** The catalog could not be reached (as opposed to refusing the request). */
export function catalogUnreachable(err: unknown): boolean {
  return err instanceof CatalogError && err.code === 'SERVICE_ERROR';
}

export class LastKnownCatalog implements Catalog {
  readonly name: string;
  /** The location last written per pointer, so that a load that changes nothing writes nothing. */
  private readonly written = new Map<string, string>();

  constructor(
    private readonly inner: Catalog,
    private readonly io: FileIO,
    /** The warehouse root (a URL the FileIO serves). */
    private readonly warehouse: string,
    /** Told when an answer came from a pointer because the catalog was unreachable. */
    private readonly onFallback?: (id: TableIdentifier, err: unknown) => void,
  ) {
    this.name = inner.name;
  }

  private folder(ns: Namespace): string {
    return `${this.warehouse}/${POINTERS_FOLDER}/${ns.map(encodeURIComponent).join('/')}`;
  }

  private pointer(id: TableIdentifier): string {
    return `${this.folder(id.namespace)}/${encodeURIComponent(id.name)}.json`;
  }

  private async remember<T extends { metadataLocation: string }>(id: TableIdentifier, result: T): Promise<T> {
    const at = this.pointer(id);
    if (this.written.get(at) === result.metadataLocation) return result;
    const body = { 'metadata-location': result.metadataLocation, catalog: this.inner.name, 'written-at-ms': Date.now() };
    await this.io.put(at, Buffer.from(`${JSON.stringify(body)}\n`));
    this.written.set(at, result.metadataLocation);
    return result;
  }

  private async recall(id: TableIdentifier): Promise<string | undefined> {
    try {
      const json: unknown = JSON.parse((await this.io.get(this.pointer(id))).toString('utf8'));
      const loc = typeof json === 'object' && json !== null ? (json as Record<string, unknown>)['metadata-location'] : undefined;
      return typeof loc === 'string' ? loc : undefined;
    } catch (err) {
      if (err instanceof FileIOError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  }

  listNamespaces(parent?: Namespace): Promise<Namespace[]> {
    return this.inner.listNamespaces(parent);
  }

  createNamespace(namespace: Namespace, properties?: Readonly<Record<string, string>>): Promise<void> {
    return this.inner.createNamespace(namespace, properties);
  }

  loadNamespaceProperties(namespace: Namespace): Promise<Record<string, string>> {
    return this.inner.loadNamespaceProperties(namespace);
  }

  async namespaceExists(namespace: Namespace): Promise<boolean> {
    try {
      return await this.inner.namespaceExists(namespace);
    } catch (err) {
      if (!catalogUnreachable(err)) throw err;
      // A table of ours was seen in it: it exists (the table load that follows answers from the pointer).
      for await (const _ of this.io.list(`${this.folder(namespace)}/`)) return true;
      throw err;
    }
  }

  dropNamespace(namespace: Namespace): Promise<void> {
    return this.inner.dropNamespace(namespace);
  }

  listTables(namespace: Namespace): Promise<TableIdentifier[]> {
    return this.inner.listTables(namespace);
  }

  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadTableResult> {
    return this.remember(id, await this.inner.createTable(id, request));
  }

  async registerTable(id: TableIdentifier, metadataLocation: string): Promise<LoadTableResult> {
    return this.remember(id, await this.inner.registerTable(id, metadataLocation));
  }

  async loadTable(id: TableIdentifier): Promise<LoadTableResult> {
    try {
      return await this.remember(id, await this.inner.loadTable(id));
    } catch (err) {
      if (!catalogUnreachable(err)) throw err;
      const location = await this.recall(id);
      if (location === undefined) throw err;
      this.onFallback?.(id, err);
      return { metadataLocation: location, metadata: parseTableMetadata((await this.io.get(location)).toString('utf8')), config: {} };
    }
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    try {
      return await this.inner.tableExists(id);
    } catch (err) {
      if (!catalogUnreachable(err) || (await this.recall(id)) === undefined) throw err;
      return true;
    }
  }

  async dropTable(id: TableIdentifier, options?: { purge?: boolean }): Promise<void> {
    await this.inner.dropTable(id, options);
    this.written.delete(this.pointer(id));
    await this.io.delete(this.pointer(id));
  }

  async commitTable(id: TableIdentifier, requirements: readonly TableRequirement[], updates: readonly TableUpdate[]): Promise<CommitTableResult> {
    return this.remember(id, await this.inner.commitTable(id, requirements, updates));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
