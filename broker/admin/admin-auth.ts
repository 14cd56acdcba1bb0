/**
 * admin.authentication.method=BASIC on the admin port: every path but the probes (/health, /ready) needs a
 * Floe user (HTTP Basic) or a bearer token issued by the REST catalog, else 401 with WWW-Authenticate. With an
 * authorizer, the admin port is the cluster's: GET and HEAD need DESCRIBE on the cluster resource, any other
 * method ALTER (super users pass), else 403. Until the broker has loaded its users (the admin port starts
 * first, so that start-up can be watched), protected paths answer 503.
 */
import { CLUSTER_RESOURCE } from '../security/acls/acl.js';
import { clientHost, type Denial } from '../security/acls/access.js';
import type { AclAuthorizer } from '../security/acls/authorizer.js';
import { HTTP_CHALLENGE, type HttpAuthenticator } from '../security/http-auth.js';
import { httpError, type AdminGuard } from './admin-server.js';

/** Served without credentials: liveness and readiness probes reveal nothing. */
export const OPEN_ADMIN_PATHS: ReadonlySet<string> = new Set(['/health', '/ready']);

/** The guard until the broker's users are loaded. */
export const startingAdminGuard: AdminGuard = (req) =>
  OPEN_ADMIN_PATHS.has(req.path) ? undefined : httpError(503, 'starting', 'the broker is still loading its users; retry once /ready answers 200', { 'retry-after': '1' });

export function adminGuard(auth: HttpAuthenticator, authorizer: AclAuthorizer | undefined, onDenied?: (d: Denial) => void): AdminGuard {
  return (req) => {
    if (OPEN_ADMIN_PATHS.has(req.path)) return undefined;
    const principal = auth.authenticate('admin', req.headers.authorization, req.remoteAddress);
    if (principal === undefined) {
      const message = req.headers.authorization ? 'the credentials are not valid' : 'authentication required: send Authorization: Basic (a Floe user) or Bearer (a token from the REST catalog\'s POST /v1/oauth/tokens)';
      return httpError(401, 'unauthorized', message, { 'www-authenticate': HTTP_CHALLENGE });
    }
    if (authorizer === undefined) return undefined;
    const operation = req.method === 'GET' || req.method === 'HEAD' ? 'DESCRIBE' : 'ALTER';
    const host = clientHost(req.remoteAddress);
    if (authorizer.authorize(principal, host, operation, 'CLUSTER', CLUSTER_RESOURCE)) return undefined;
    onDenied?.({ principal, host, operation, resourceType: 'CLUSTER', resource: CLUSTER_RESOURCE });
    return httpError(403, 'forbidden', `${principal} may not ${req.method} ${req.path}: the admin port needs ${operation} on the cluster (kafka-acls --cluster --operation ${operation === 'DESCRIBE' ? 'Describe' : 'Alter'})`);
  };
}
