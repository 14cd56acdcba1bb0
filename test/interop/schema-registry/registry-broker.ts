/** A Floe broker with its schema registry on a free port of 127.0.0.1, for the registry interop tests. */
import { startBroker, type TestBroker } from '../../helpers/broker.js';

export interface RegistryBroker extends TestBroker {
  /** Base URL of the schema registry. */
  readonly registryUrl: string;
}

export async function startRegistryBroker(flags: string[] = []): Promise<RegistryBroker> {
  const b = await startBroker(['--schema.registry.port=0', '--schema.registry.host=127.0.0.1', ...flags]);
  const port = b.broker.schemaRegistryPort;
  if (port === undefined) throw new Error('the schema registry did not start');
  return Object.assign(b, { registryUrl: `http://127.0.0.1:${port}` });
}
