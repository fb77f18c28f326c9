import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { RevocationBus } from '../../src/security/revocation-bus.js';
import { Revocations, type Revocation } from '../../src/security/revocations.js';
import { REDIS_URL } from '../helper.js';
import { until } from '../wait.js';
import { redisOrSkip, uniquePrefix } from './helpers.js';

const redis = await redisOrSkip();

/**
 * The Redis revocation bus between two nodes' revocation hubs: what one node announces reaches the
 * other's listeners (and not its own twice); what arrives malformed on the channel is ignored.
 */
describe('revocation bus (Redis pub/sub)', { skip: !redis && 'Redis is not running' }, () => {
  const prefix = uniquePrefix('revocations');
  const nodeA = new Revocations();
  const nodeB = new Revocations();
  const heardA: Revocation[] = [];
  const heardB: Revocation[] = [];
  let busA: RevocationBus;
  let busB: RevocationBus;

  before(async () => {
    nodeA.on((r) => heardA.push(r));
    nodeB.on((r) => heardB.push(r));
    [busA, busB] = await Promise.all([RevocationBus.connect(nodeA, REDIS_URL, prefix), RevocationBus.connect(nodeB, REDIS_URL, prefix)]);
  });
  after(async () => {
    await Promise.all([busA?.close(), busB?.close()]);
    (redis as Redis | null)?.disconnect();
  });

  test('an announcement on node A reaches node B once; node A hears it once, locally', async () => {
    const grant: Revocation = { kind: 'grant', grantId: 41 };
    nodeA.announce(grant);
    assert.deepEqual(heardA, [grant], 'node A hears its own announcement at once');
    await until(() => heardB.length === 1, 20_000, 'node B to hear it');
    assert.deepEqual(heardB, [grant]);
    const widget: Revocation = { kind: 'widget', userId: 7, key: 'abc' };
    nodeB.announce(widget);
    await until(() => heardA.length === 2, 20_000, 'node A to hear node B');
    assert.deepEqual(heardA, [grant, widget]);
    assert.deepEqual(heardB, [grant, widget]);
  });

  test('malformed messages on the channel are ignored; the next good one still arrives', async () => {
    const before = heardB.length;
    const channel = `${prefix}.oauth.revocations`;
    for (const junk of ['not json', 'null', '{}', JSON.stringify({ origin: 'x', revocation: { kind: 'grant', grantId: 'all' } }), JSON.stringify({ origin: 'x', revocation: { kind: 'everything' } }), JSON.stringify({ origin: 'x', revocation: { kind: 'user', userId: -1 } })]) {
      await redis!.publish(channel, junk);
    }
    await redis!.publish(channel, JSON.stringify({ origin: 'elsewhere', revocation: { kind: 'user', userId: 9 } }));
    await until(() => heardB.length > before, 20_000, 'the well-formed revocation');
    assert.deepEqual(heardB.slice(before), [{ kind: 'user', userId: 9 }]);
  });
});
