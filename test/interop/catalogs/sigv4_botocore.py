"""botocore's SigV4 signature of requests, to compare Floe's signer with (test/iceberg/catalog/sigv4.test.ts).

Reads on stdin a JSON list of requests {method, url, headers, body, time, key, secret, token, region, service}
and prints a JSON list of the headers botocore's SigV4Auth adds to each, signed at `time` (YYYYMMDDTHHMMSSZ).
The headers given are the ones the client sends before signing, as Apache Iceberg's RESTSigV4Signer prepares
them; x-amz-content-sha256 is computed here from the body, with hashlib.
"""

import hashlib
import json
import sys
from datetime import datetime

import botocore.auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

out = []
for r in json.loads(sys.stdin.read()):
    body = r["body"].encode("utf-8") if r["body"] is not None else b""
    headers = dict(r["headers"])
    headers["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()
    request = AWSRequest(method=r["method"], url=r["url"], headers=headers, data=body)
    at = datetime.strptime(r["time"], "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *args, **kwargs: at
    SigV4Auth(Credentials(r["key"], r["secret"], r["token"]), r["service"], r["region"]).add_auth(request)
    out.append({name.lower(): value for name, value in request.headers.items()})
print(json.dumps(out))
