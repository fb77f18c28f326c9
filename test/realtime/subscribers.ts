import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { RawClient } from '../ws-client.js';
import { sleep } from '../wait.js';
import { SECRET } from './helpers.js';

/**
 * Modern-protocol subscribers and what they received, for the scheduling cases that run on one node
 * (overload.test.ts) and across the nodes of the workers topology (workers-topology.test.ts).
 */
export const CHANNEL = '$alerts:donation_5';

/** A client of user 5, connected and subscribed to `channels` (CHANNEL by default), each in turn. */
export async function subscriber(url: string, channels: string[] = [CHANNEL]): Promise<RawClient> {
  const c = await RawClient.open(url);
  c.send({ id: 1, connect: { token: await signConnectionToken(SECRET, '5') } });
  await c.next();
  for (const [i, channel] of channels.entries()) {
    c.send({ id: 2 + i, subscribe: { channel, token: await signChannelToken(SECRET, { channel, sub: '5' }) } });
    await c.next();
  }
  return c;
}

/** `n` subscribers, one after the other, each on every one of `channels`. */
export async function subscribers(url: string, n: number, channels: string[]): Promise<RawClient[]> {
  const all: RawClient[] = [];
  for (let i = 0; i < n; i++) all.push(await subscriber(url, channels));
  return all;
}

/** The offsets of the publications `c` received on `channel`, in arrival order. */
export const offsets = (c: RawClient, channel = CHANNEL): number[] => c.frames.flatMap((f) => (f.push?.channel === channel && f.push.pub ? [f.push.pub.offset] : []));

/** The `n` of every publication `c` received (published as `{ n }`), on any channel, in arrival order. */
export const received = (c: RawClient): number[] => c.frames.flatMap((f) => (f.push?.pub ? [f.push.pub.data.n] : []));

/** 1, 2, … n. */
export const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** The text of each publication of publishWhile: 16 publications fill a 256 KiB queue. */
export const TEXT_16K = 'x'.repeat(16 * 1024);

/**
 * Publishes `{ n, text: TEXT_16K }` to CHANNEL, n = 1, 2, …, while `slowStillOpen()` (a client
 * that reads nothing keeps its connection), up to far more than the loopback buffers and a 256 KiB
 * queue limit hold; returns how many were published. A pause every 20 lets the sockets drain into
 * the kernel buffers as a live stream would.
 */
export async function publishWhile(publish: (channel: string, data: unknown) => Promise<unknown>, slowStillOpen: () => boolean): Promise<number> {
  let published = 0;
  while (slowStillOpen() && published < 4000) {
    await publish(CHANNEL, { n: ++published, text: TEXT_16K });
    if (published % 20 === 0) await sleep(5);
  }
  return published;
}
