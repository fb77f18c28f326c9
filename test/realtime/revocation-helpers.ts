import assert from 'node:assert/strict';
import { RawClient } from '../ws-client.js';

/**
 * Real WebSocket clients of the app's real-time endpoint for the revocation tests: connect and
 * subscribe on either protocol, and wait for the server to close the socket.
 */

export type Protocol = 'legacy' | 'modern';

export interface Socket {
  c: RawClient;
  protocol: Protocol;
  /** The connection's client id. */
  client: string;
}

let ids = 100;

/** Sends connect; resolves with the socket once connected, or with the close when the server refuses. */
export async function connect(wsUrl: string, token: string, protocol: Protocol): Promise<Socket | { closed: { code: number; reason: string } }> {
  const c = await RawClient.open(`${wsUrl}/connection/websocket`);
  const id = ++ids;
  c.send(protocol === 'modern' ? { id, connect: { token } } : { id, params: { token } });
  const outcome = await Promise.race([c.reply(id).then((reply) => ({ reply })), c.closed.then((closed) => ({ closed }))]);
  if ('closed' in outcome) return outcome;
  const client = protocol === 'modern' ? outcome.reply.connect?.client : outcome.reply.result?.client;
  assert.equal(typeof client, 'string', `connected: ${JSON.stringify(outcome.reply)}`);
  return { c, protocol, client };
}

export async function connected(wsUrl: string, token: string, protocol: Protocol): Promise<Socket> {
  const s = await connect(wsUrl, token, protocol);
  if ('closed' in s) throw new Error(`connect refused: ${s.closed.code} ${s.closed.reason}`);
  return s;
}

/** The subscribe reply: `{result}`/`{subscribe}` on success, `{error}` on refusal. */
export async function subscribe(s: Socket, channel: string, token: string): Promise<any> {
  const id = ++ids;
  s.c.send(s.protocol === 'modern' ? { id, subscribe: { channel, token } } : { id, method: 1, params: { channel, token } });
  return s.c.reply(id);
}

/** The server closes the socket; fails when it is still open after `ms` (a revocation that did not reach it). */
export async function closedBy(s: Socket, ms = 5000): Promise<{ code: number; reason: { reason: string; reconnect: boolean } }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the socket is still open ${ms} ms later`)), ms);
  });
  try {
    const closed = await Promise.race([s.c.closed, timeout]);
    return { code: closed.code, reason: JSON.parse(closed.reason) };
  } finally {
    clearTimeout(timer);
  }
}

/** The socket still answers a ping: nothing closed it. */
export async function answersPing(s: Socket): Promise<void> {
  const id = ++ids;
  s.c.send(s.protocol === 'modern' ? { id, ping: {} } : { id, method: 7 });
  assert.equal((await s.c.reply(id)).id, id);
}

export const REVOKED = { code: 3500, reason: { reason: 'token revoked', reconnect: false } };
