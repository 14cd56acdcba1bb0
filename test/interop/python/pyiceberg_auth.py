"""pyiceberg against an authenticated Floe REST catalog over HTTPS (test/interop/http-security.test.ts).

Reads one JSON command on stdin:
  {"uri": "https://...", "cabundle": "/path/ca.pem", "table": "kafka.orders",
   "attempts": [{"name": "...", "auth": {"credential": "user:password"} | {"token": "..."} | {}}, ...]}
and prints {"<name>": {"tables": [...], "rows": N} or {"error": "<exception class>", "message": "..."}}: for
each attempt a new RestCatalog (so a credential goes through POST /v1/oauth/tokens), list_tables of the
table's namespace, then load_table and a full scan.
"""
import json
import os
import sys

from pyiceberg.catalog.rest import RestCatalog


def attempt(cmd, auth):
    try:
        catalog = RestCatalog('floe', **{'uri': cmd['uri'], 'ssl': {'cabundle': cmd['cabundle']}, **auth})
        namespace = cmd['table'].rsplit('.', 1)[0]
        tables = sorted('.'.join(t) for t in catalog.list_tables(namespace))
        out = {'tables': tables}
        try:
            out['rows'] = catalog.load_table(cmd['table']).scan().to_arrow().num_rows
        except Exception as e:  # noqa: BLE001 - the test asserts on the refusal's class
            out['load_error'] = type(e).__name__
            out['message'] = str(e)
        return out
    except Exception as e:  # noqa: BLE001
        return {'error': type(e).__name__, 'message': str(e)}


def main():
    cmd = json.load(sys.stdin)
    # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override a session's verify (psf/requests#3829), so a
    # machine that sets them would make pyiceberg ignore ssl.cabundle: the catalog property must decide.
    for var in ('REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'):
        os.environ.pop(var, None)
    print(json.dumps({a['name']: attempt(cmd, a['auth']) for a in cmd['attempts']}))


if __name__ == '__main__':
    main()
