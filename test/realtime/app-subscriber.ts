import assert from 'node:assert/strict';
import { RawClient } from '../ws-client.js';

/**
 * Connects to the server at `base` as an application would (spec 6.1: the connection token from
 * `/user/oauth`, channel tokens from `/centrifuge/subscribe`) with `token`, and subscribes to
 * `channels`, asserting each step answered without an error.
 */
export async function subscribeAsApp(base: string, token: string, channels: string[]): Promise<RawClient> {
  const api = (path: string, init: RequestInit = {}) => fetch(`${base}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const profile = (await (await api('/user/oauth')).json()).data;
  const client = await RawClient.open(`${base.replace('http', 'ws')}/connection/websocket`);
  client.send({ params: { token: profile.socket_connection_token }, id: 1 });
  const { result } = await client.reply(1);
  const res = await api('/centrifuge/subscribe', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channels, client: result.client }) });
  assert.equal(res.status, 200);
  const tokens = (await res.json()).channels as { channel: string; token: string }[];
  tokens.forEach((c, i) => client.send({ params: { channel: c.channel, token: c.token }, method: 1, id: 10 + i }));
  for (let i = 0; i < tokens.length; i++) assert.equal((await client.reply(10 + i)).error, undefined);
  return client;
}

/** The `data` of every publication `client` received on `channel`, in arrival order. */
export const publicationsOn = (client: RawClient, channel: string): Record<string, unknown>[] =>
  client
    .pushes(channel)
    .filter((p) => p.result.data?.data)
    .map((p) => p.result.data.data as Record<string, unknown>);
