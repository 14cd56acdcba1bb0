// The admin HTTP server's route table on its own: a failing handler answers 500 with a JSON body (and the
// server keeps serving), a route can be registered once, and several methods share a path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AdminServer, json } from '../../../broker/admin/admin-server.js';
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
