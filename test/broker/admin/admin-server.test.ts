// The admin HTTP server's route table on its own: a failing handler answers 500 with a JSON body (and the
// server keeps serving), a route can be registered once, and several methods share a path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AdminHttpError, AdminServer, json, MAX_ADMIN_BODY_BYTES } from '../../../broker/admin/admin-server.js';
import { createLogger } from '../../../broker/logger.js';

test('routes: a handler that throws answers 500 in JSON, methods share a path, duplicates are refused', async (t) => {
  const server = new AdminServer(createLogger('silent'));
  t.after(() => server.close());
  server
    .route({ method: 'GET', path: '/boom', handler: () => Promise.reject(new Error('disk on fire')) })
    .route({ method: 'GET', path: '/thing', handler: (req) => json(200, { got: req.query.get('id') }) })
    .route({ method: 'POST', path: '/thing', handler: () => json(201, { created: true }) });
  assert.throws(() => server.route({ method: 'GET', path: '/thing', handler: () => json(200, {}) }), /already registered/);
  const { url } = await server.listen(0, '127.0.0.1');
  assert.equal(url, `http://127.0.0.1:${server.port}`);

  const boom = await fetch(`${url}/boom`);
  assert.equal(boom.status, 500);
  assert.deepEqual(await boom.json(), { error: 'internal_error', message: '/boom failed: disk on fire; see the broker log' });
  const got = await fetch(`${url}/thing?id=7`);
  assert.equal(got.status, 200);
  assert.deepEqual(await got.json(), { got: '7' });
  const posted = await fetch(`${url}/thing`, { method: 'POST', body: '{}' });
  assert.equal(posted.status, 201);
  await posted.text();
  const put = await fetch(`${url}/thing`, { method: 'PUT', body: '{}' });
  assert.equal(put.status, 405);
  assert.equal(put.headers.get('allow'), 'GET, POST, HEAD');
  await put.text();
});

test('routes with {name} segments: URL-decoded params, exact paths win, bodies read up to the limit (413 past it), AdminHttpError statuses', async (t) => {
  const server = new AdminServer(createLogger('silent'));
  t.after(() => server.close());
  server
    .route({ method: 'GET', path: '/api/tables/{table}', handler: (req) => json(200, { table: req.params.table }) })
    .route({ method: 'GET', path: '/api/tables/special', handler: () => json(200, { exact: true }) })
    .route({ method: 'POST', path: '/api/tables/{table}/echo', handler: (req) => json(200, { table: req.params.table, body: req.body.toString() }) })
    .route({ method: 'GET', path: '/api/teapot', handler: () => Promise.reject(new AdminHttpError(418, 'teapot', 'brew coffee elsewhere')) });
  const { url } = await server.listen(0, '127.0.0.1');
  assert.deepEqual(await (await fetch(`${url}/api/tables/kafka.orders`)).json(), { table: 'kafka.orders' });
  assert.deepEqual(await (await fetch(`${url}/api/tables/a%2Fb%20c`)).json(), { table: 'a/b c' }, 'decoded');
  assert.deepEqual(await (await fetch(`${url}/api/tables/special`)).json(), { exact: true }, 'the exact path wins');
  const missing = await fetch(`${url}/api/tables/x/y/z`);
  assert.equal(missing.status, 404);
  assert.match(((await missing.json()) as { message: string }).message, /\/api\/tables\/\{table\}/, 'the 404 lists the patterns too');
  const bad = await fetch(`${url}/api/tables/%E0%A4%A`);
  assert.equal(bad.status, 404, 'a segment that does not decode matches nothing');
  await bad.text();
  assert.deepEqual(await (await fetch(`${url}/api/tables/t1/echo`, { method: 'POST', body: 'hello' })).json(), { table: 't1', body: 'hello' });
  const big = await fetch(`${url}/api/tables/t1/echo`, { method: 'POST', body: Buffer.alloc(MAX_ADMIN_BODY_BYTES + 1, 0x61) });
  assert.equal(big.status, 413);
  assert.equal(((await big.json()) as { error: string }).error, 'body_too_large');
  const exactly = await fetch(`${url}/api/tables/t1/echo`, { method: 'POST', body: Buffer.alloc(MAX_ADMIN_BODY_BYTES, 0x61) });
  assert.equal(exactly.status, 200, 'a body of exactly the limit is read');
  await exactly.text();
  const teapot = await fetch(`${url}/api/teapot`);
  assert.equal(teapot.status, 418);
  assert.deepEqual(await teapot.json(), { error: 'teapot', message: 'brew coffee elsewhere' });
});
