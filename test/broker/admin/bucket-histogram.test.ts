// BucketHistogram must render exactly what prom-client's own Histogram renders for the same observations
// (buckets cumulative with `le`, then _sum and _count, per label set), so that swapping one for the other on
// the request path changes no scrape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { BucketHistogram } from '../../../broker/admin/bucket-histogram.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];
const OBSERVED: readonly [string, number][] = [
  ['Produce', 0.0005],
  ['Produce', 0.001], // on a bound: counted in that bucket (le means "less than or equal")
  ['Produce', 0.05],
  ['Produce', 7], // above every bound: +Inf only
  ['Fetch', 0.2],
  ['Fetch', 0.2],
];

test('renders the same text as prom-client Histogram for the same observations, label sets and bounds', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const fast = new BucketHistogram<'api'>('h_seconds', 'A histogram.', BOUNDS, ['api'], [ours]);
  const slow = new Histogram({ name: 'h_seconds', help: 'A histogram.', labelNames: ['api'], buckets: BOUNDS, registers: [theirs] });
  const children = new Map<string, ReturnType<typeof fast.labels>>();
  for (const [api, v] of OBSERVED) {
    let child = children.get(api);
    if (child === undefined) children.set(api, (child = fast.labels({ api })));
    child.observe(v);
    slow.observe({ api }, v);
  }
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics());
  assert.match(text, /h_seconds_bucket\{le="0.001",api="Produce"\} 2\n/);
  assert.match(text, /h_seconds_bucket\{le="\+Inf",api="Produce"\} 4\n/);
  assert.match(text, /h_seconds_count\{api="Fetch"\} 2/);
});

test('an unlabelled histogram keeps one child, and labels() returns the same child for the same labels', async () => {
  const registry = new Registry();
  const h = new BucketHistogram('u_seconds', 'Unlabelled.', BOUNDS, [], [registry]);
  assert.equal(h.labels({}), h.labels({}));
  h.labels({}).observe(0.02);
  assert.match(await registry.metrics(), /u_seconds_bucket\{le="0.1"\} 1\nu_seconds_bucket\{le="1"\} 1\nu_seconds_bucket\{le="\+Inf"\} 1\nu_seconds_sum 0.02\nu_seconds_count 1/);
});

test('bounds that do not increase are refused', () => {
  assert.throws(() => new BucketHistogram('x_seconds', 'x', [0.1, 0.1], [], []), /must increase/);
});
