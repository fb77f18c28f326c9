import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from '../process.js';

// Container images cannot be built on the machines the tests run on (no container engine), so
// these tests check what can be checked without one.
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

test('compose.yaml parses and runs PostgreSQL, Redis, two nodes sharing one configuration, and Caddy', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, any>; volumes: Record<string, unknown> };
  assert.deepEqual(Object.keys(compose.services).sort(), ['caddy', 'node1', 'node2', 'postgres', 'redis']);
  const nodes = [compose.services.node1, compose.services.node2];
  for (const node of nodes) {
    assert.equal(node.build.dockerfile, 'deploy/Dockerfile');
    assert.match(node.environment.DATABASE_URL, /^postgres:\/\/openalerts:.*@postgres:5432\/openalerts$/);
    assert.equal(node.environment.REDIS_URL, 'redis://redis:6379');
    assert.match(node.environment.SECRET_KEY, /^\$\{SECRET_KEY:\?/);
    assert.match(node.environment.PUBLIC_URL, /^https:\/\/\$\{DOMAIN/);
    assert.ok(node.environment.TRUST_PROXY, 'the nodes trust the one proxy in front of them');
    assert.equal(node.depends_on.postgres.condition, 'service_healthy');
    assert.equal(node.depends_on.redis.condition, 'service_healthy');
  }
  assert.deepEqual(nodes[0].environment, nodes[1].environment, 'every node gets the same settings');
  assert.ok(compose.services.caddy.volumes.includes('./Caddyfile:/etc/caddy/Caddyfile:ro'));
  assert.ok(compose.services.caddy.ports.includes('443:443'));
  assert.ok(compose.services.postgres.volumes.some((v: string) => v.startsWith('postgres:')), 'the database is on a volume');
});

test('the Caddyfile proxies to both nodes, health-checked on /readyz, and hides /metrics', () => {
  const caddyfile = read('deploy/Caddyfile');
  assert.match(caddyfile, /reverse_proxy node1:3000 node2:3000 \{/);
  assert.match(caddyfile, /health_uri \/readyz/);
  assert.match(caddyfile, /respond \/metrics 404/);
});

test("the Dockerfile installs and starts with the README's commands", () => {
  const dockerfile = read('deploy/Dockerfile');
  const readme = read('README.md');
  const run = [...dockerfile.matchAll(/^RUN (npm .+)$/gm)].map((m) => m[1]!.trim());
  assert.deepEqual(run, ['npm ci --omit=dev']);
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  assert.ok(cmd);
  const start = (JSON.parse(cmd[1]!) as string[]).join(' ');
  assert.equal(start, 'npx openalerts serve');
  assert.ok(readme.includes(`${run[0]} && ${start}`), `README shows "${run[0]} && ${start}"`);
  // What it copies is what the build needs, and exists.
  for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const source of m[1]!.split(' ')) assert.ok(fs.existsSync(path.join(ROOT, source)), `${source} exists`);
  }
});

test('the systemd unit starts the same command and stops with SIGTERM', () => {
  const unit = read('deploy/openalerts.service');
  assert.match(unit, /^ExecStart=\/usr\/bin\/npx openalerts serve$/m);
  assert.match(unit, /^KillSignal=SIGTERM$/m);
  assert.match(unit, /^Environment=DATA_DIR=\/var\/lib\/openalerts$/m);
  assert.match(unit, /^EnvironmentFile=-\/etc\/openalerts\.env$/m);
});
