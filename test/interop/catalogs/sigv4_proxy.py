"""A SigV4-checking reverse proxy in front of an Iceberg REST catalog, for the SigV4 tests (sigv4.test.ts).

It stands in for what AWS's endpoints (Glue's and S3 Tables' Iceberg REST APIs) do before a request reaches the
catalog: every request must carry an AWS Signature Version 4 `Authorization` header whose signature botocore
(the AWS SDK for Python, an implementation independent of Floe's) computes identically from the request as it
arrived, for a known access key, the expected region and service, a fresh x-amz-date, and an
x-amz-content-sha256 equal to the body's SHA-256. Requests that pass are forwarded to the catalog; the others
are answered 403 with an AWS-style body, and nothing reaches the catalog.

Configuration is one JSON object on stdin:
  {"upstream": "http://127.0.0.1:8181", "region": "us-east-1", "service": "glue",
   "keys": {"AKID": {"secret": "...", "token": "... or null"}}}
It prints `listening <port>` once it serves on 127.0.0.1. GET /_sigv4/stats (never forwarded) answers
{"verified": [...], "refused": [...]}: one entry per request, its method, path, signed headers or reason.
"""

import hashlib
import hmac
import http.client
import json
import sys
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

CONFIG = json.loads(sys.stdin.read())
UPSTREAM = urlsplit(CONFIG["upstream"])
LOCK = threading.Lock()
STATS = {"verified": [], "refused": []}
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "host", "content-length"}
# What the signature must cover when the request has it: a header left unsigned could be changed on the way.
MUST_SIGN_IF_PRESENT = {"content-type", "original-authorization", "x-amz-security-token"}
MAX_SKEW = timedelta(minutes=15)


class Refused(Exception):
    pass


def parse_authorization(value):
    algorithm, _, rest = value.partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        raise Refused(f"not a SigV4 Authorization header: {value[:40]!r}")
    parts = {}
    for piece in rest.split(","):
        key, _, val = piece.strip().partition("=")
        parts[key] = val
    if not {"Credential", "SignedHeaders", "Signature"} <= parts.keys():
        raise Refused("Authorization lacks Credential, SignedHeaders or Signature")
    return parts


def verify(method, raw_path, headers, body):
    """The signed header names when the request's signature is right, else raises Refused(reason)."""
    auth = headers.get("authorization")
    if auth is None:
        raise Refused("no Authorization header")
    parts = parse_authorization(auth)
    akid, date, region, service, terminator = (parts["Credential"].split("/") + [""] * 5)[:5]
    key = CONFIG["keys"].get(akid)
    if key is None:
        raise Refused(f"unknown access key {akid}")
    if region != CONFIG["region"] or service != CONFIG["service"] or terminator != "aws4_request":
        raise Refused(f"credential scope {region}/{service}/{terminator}, expected {CONFIG['region']}/{CONFIG['service']}/aws4_request")
    amz_date = headers.get("x-amz-date", "")
    try:
        when = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        raise Refused(f"bad x-amz-date {amz_date!r}")
    if date != amz_date[:8]:
        raise Refused("credential scope date differs from x-amz-date")
    if abs(datetime.now(timezone.utc) - when) > MAX_SKEW:
        raise Refused("signature expired (x-amz-date more than 15 minutes off)")
    signed = parts["SignedHeaders"].split(";")
    missing = ({"host", "x-amz-date", "x-amz-content-sha256"} | (MUST_SIGN_IF_PRESENT & headers.keys())) - set(signed)
    if missing:
        raise Refused(f"headers not signed: {sorted(missing)}")
    if headers.get("x-amz-content-sha256") != hashlib.sha256(body).hexdigest():
        raise Refused("x-amz-content-sha256 is not the body's SHA-256")
    if key.get("token") is not None and headers.get("x-amz-security-token") != key["token"]:
        raise Refused("missing or wrong x-amz-security-token")
    # botocore recomputes the signature from the request as it arrived: the signed headers only, the path
    # (which it URI-encodes again, as SigV4 wants for every service but S3), the query re-encoded per RFC 3986.
    split = urlsplit(raw_path)
    request = AWSRequest(
        method=method,
        url=f"http://{headers['host']}{split.path}",
        headers={name: headers[name] for name in signed if name in headers},
        data=body,
        params=parse_qsl(split.query, keep_blank_values=True),
    )
    request.context["timestamp"] = amz_date
    signer = SigV4Auth(Credentials(akid, key["secret"], key.get("token")), service, region)
    to_sign = signer.headers_to_sign(request)
    if signer.signed_headers(to_sign) != parts["SignedHeaders"]:
        raise Refused(f"SignedHeaders {parts['SignedHeaders']} name headers the request lacks")
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    if not hmac.compare_digest(expected, parts["Signature"]):
        raise Refused("signature mismatch: the request signature we calculated does not match the signature you provided")
    return signed


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet: the test reads /_sigv4/stats
        pass

    def reply(self, status, body, content_type="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        if self.command == "GET" and self.path == "/_sigv4/stats":
            with LOCK:
                self.reply(200, json.dumps(STATS).encode())
            return
        headers = {}
        for name, value in self.headers.items():
            headers[name.lower()] = value if name.lower() not in headers else f"{headers[name.lower()]},{value}"
        entry = {"method": self.command, "path": self.path}
        try:
            signed = verify(self.command, self.path, headers, body)
        except Refused as err:
            with LOCK:
                STATS["refused"].append({**entry, "reason": str(err)})
            self.reply(403, json.dumps({"message": str(err)}).encode())
            return
        with LOCK:
            STATS["verified"].append({**entry, "signed": signed})
        forward = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=60)
        try:
            conn.request(self.command, self.path, body=body if body or self.command in ("POST", "PUT") else None, headers=forward)
            res = conn.getresponse()
            data = res.read()
            extra = [(n, v) for n, v in res.getheaders() if n.lower() not in HOP_BY_HOP and n.lower() != "content-type"]
            self.reply(res.status, data, res.getheader("Content-Type") or "application/json", extra)
        except OSError as err:
            self.reply(502, json.dumps({"message": f"upstream catalog unreachable: {err}"}).encode())
        finally:
            conn.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
