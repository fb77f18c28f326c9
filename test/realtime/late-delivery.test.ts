import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Publication, PublicationHandler } from '../../src/realtime/broker.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { RawClient } from '../ws-client.js';
import { sleep, until } from '../wait.js';
import { SECRET, startServer } from './helpers.js';

/**
 * A broker whose deliveries to the node can be held back while history already has them — what
 * Redis does when the node reads history on its command connection before the PUBLISH message
 * arrives on its pub/sub connection (the Lua script appends to the stream and publishes at once).
 */
class LateDelivery extends MemoryBroker {
  holding = false;
  private readonly held: [string, Publication][] = [];
  private target: PublicationHandler | null = null;

  override setHandler(handler: PublicationHandler | null): void {
    this.target = handler;
    super.setHandler(handler && ((channel, pub) => (this.holding ? this.held.push([channel, pub]) : handler(channel, pub))));
  }

  release(): void {
    this.holding = false;
    for (const [channel, pub] of this.held.splice(0)) this.target?.(channel, pub);
  }
}

async function modern(url: string, user: string): Promise<RawClient> {
  const c = await RawClient.open(url);
  c.send({ id: 1, connect: { token: await signConnectionToken(SECRET, user) } });
  await c.next();
  return c;
}

/** Publications pushed after the replies, as offsets (modern frames `push.pub`, legacy `result.data`). */
const pushedOffsets = (c: RawClient, channel: string): number[] =>
  c.frames.flatMap((f) => (f.push?.channel === channel && f.push.pub ? [f.push.pub.offset] : f.id === undefined && f.result?.channel === channel && f.result.data?.offset ? [f.result.data.offset] : []));

test('a publication reaching the node after a subscribe reply already covered it is not sent again (recovering, plain, legacy)', async () => {
  const broker = new LateDelivery();
  const s = await startServer({ broker });
  const channel = '$alerts:donation_7';
  const token = await signChannelToken(SECRET, { channel, sub: '7' });
  try {
    // A keeps the channel subscribed on the node while the others come and go.
    const a = await modern(s.wsUrl, '7');
    a.send({ id: 2, subscribe: { channel, token } });
    const position = (await a.next()).subscribe;

    broker.holding = true;
    await s.node.publish(channel, { n: 1 });
    await s.node.publish(channel, { n: 2 });

    // B recovers from before both: the reply carries them.
    const b = await modern(s.wsUrl, '7');
    b.send({ id: 2, subscribe: { channel, token, recover: true, offset: position.offset, epoch: position.epoch } });
    const recovered = (await b.next()).subscribe;
    assert.equal(recovered.recovered, true);
    assert.deepEqual(recovered.publications.map((p: any) => p.offset), [1, 2]);

    // C subscribes without recovering: its position is the top, 2.
    const c = await modern(s.wsUrl, '7');
    c.send({ id: 2, subscribe: { channel, token } });
    assert.equal((await c.next()).subscribe.offset, 2);

    // L, legacy protocol: the reply's offset is the top, 2.
    const l = await RawClient.open(s.wsUrl);
    l.send({ params: { token: await signConnectionToken(SECRET, '7') }, id: 1 });
    const client = (await l.next()).result.client;
    l.send({ method: 1, id: 2, params: { channel, token: await signChannelToken(SECRET, { client, channel }) } });
    assert.equal((await l.next()).result.offset, 2);
    assert.equal((await l.next()).result.type, 1); // JOIN push

    // The held deliveries of 1 and 2 arrive now, then 3 as usual.
    broker.release();
    await s.node.publish(channel, { n: 3 });
    await until(() => [a, b, c, l].every((x) => pushedOffsets(x, channel).includes(3)), 20_000, 'publication 3 everywhere');
    await sleep(150); // a late repeat would be here by now
    assert.deepEqual(pushedOffsets(a, channel), [1, 2, 3], 'A was subscribed before: gets all three once');
    assert.deepEqual(pushedOffsets(b, channel), [3], 'B had 1 and 2 in its reply');
    assert.deepEqual(pushedOffsets(c, channel), [3], 'C was positioned at 2');
    assert.deepEqual(pushedOffsets(l, channel), [3], 'L (legacy) was positioned at 2');
    for (const x of [a, b, c, l]) x.close();
  } finally {
    await s.close();
  }
});
