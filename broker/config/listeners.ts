/**
 * Kafka listeners as Kafka names them: `listeners=PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093`, each
 * name mapped to a security protocol by `listener.security.protocol.map`, and `advertised.listeners` giving,
 * per name, the address clients are told in Metadata.
 */
export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];

export interface ListenerEndpoint {
  /** The listener name, upper case (PLAINTEXT, SASL_SSL, or a custom name such as INTERNAL). */
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

export interface ListenerSpec extends ListenerEndpoint {
  readonly protocol: SecurityProtocol;
}

/** Whether connections on a listener of this protocol speak TLS. */
export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

/** Whether clients on a listener of this protocol must authenticate with SASL before anything else. */
export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
}

/** Parses one NAME://host:port (IPv6 in brackets; an empty host means every address). */
export function parseEndpoint(value: string): ListenerEndpoint | undefined {
  const m = /^([A-Za-z][A-Za-z0-9_-]*):\/\/(\[[^\]]+\]|[^:/]*):(\d{1,5})$/.exec(value.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = (m[2] ?? '').replace(/^\[|\]$/g, '');
  return { name: (m[1] ?? '').toUpperCase(), host: host === '' ? '0.0.0.0' : host, port };
}

/** Parses `listener.security.protocol.map`; problems are pushed, in words a user can act on. */
export function parseProtocolMap(value: string, problems: string[]): Map<string, SecurityProtocol> {
  const map = new Map<string, SecurityProtocol>();
  for (const entry of value.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const [name, protocol, ...rest] = entry.split(':').map((p) => p.trim());
    const upper = (protocol ?? '').toUpperCase() as SecurityProtocol;
    if (!name || rest.length > 0 || !SECURITY_PROTOCOLS.includes(upper)) {
      problems.push(`listener.security.protocol.map entry '${entry}' must be NAME:PROTOCOL with PROTOCOL one of ${SECURITY_PROTOCOLS.join(', ')}`);
      continue;
    }
    map.set(name.toUpperCase(), upper);
  }
  return map;
}

/**
 * The listeners of a configuration, validated: names unique, each one mapped to a protocol, ports distinct
 * (except 0), advertised names known. Returns undefined when something is wrong (then problems says what).
 */
export function parseListeners(listeners: string, advertised: string, protocolMap: string, problems: string[]): { listeners: ListenerSpec[]; advertised: Map<string, ListenerEndpoint> } | undefined {
  const before = problems.length;
  const map = parseProtocolMap(protocolMap, problems);
  const out: ListenerSpec[] = [];
  const entries = listeners.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length === 0) problems.push('listeners must name at least one listener, such as PLAINTEXT://0.0.0.0:9092');
  for (const entry of entries) {
    const ep = parseEndpoint(entry);
    if (!ep) {
      problems.push(`listeners entry '${entry}' must look like NAME://host:port (PLAINTEXT://0.0.0.0:9092)`);
      continue;
    }
    const protocol = map.get(ep.name);
    if (!protocol) {
      problems.push(`listener ${ep.name} has no security protocol: add ${ep.name}:<PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL> to listener.security.protocol.map`);
      continue;
    }
    if (out.some((l) => l.name === ep.name)) problems.push(`listener name ${ep.name} appears twice in listeners; give each listener its own name`);
    if (ep.port !== 0 && out.some((l) => l.port === ep.port)) problems.push(`listeners ${ep.name} and ${out.find((l) => l.port === ep.port)?.name} share port ${ep.port}`);
    out.push({ ...ep, protocol });
  }
  const adv = new Map<string, ListenerEndpoint>();
  for (const entry of advertised.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const ep = parseEndpoint(entry);
    if (!ep) {
      problems.push(`advertised.listeners entry '${entry}' must look like NAME://host:port`);
      continue;
    }
    if (!entries.length || !out.some((l) => l.name === ep.name)) problems.push(`advertised.listeners names ${ep.name}, which is not in listeners`);
    adv.set(ep.name, ep);
  }
  return problems.length > before ? undefined : { listeners: out, advertised: adv };
}
