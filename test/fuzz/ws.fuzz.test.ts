import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { REALTIME_SECRET, startFuzzServer, type FuzzServer } from './fixture.js';
import { Rng } from './rng.js';

/**
 * Issue 9: the real-time endpoint of a real server process under malformed frames, forged tokens
 * and subscribe floods, on both protocols (legacy JSON of Centrifugo v2, and the modern one). Every
 * socket must get a protocol answer — an error reply or a disconnect with a Centrifugo or WebSocket
 * close code — never an internal error (3004 / code 100), and the process must keep serving.
 */
const SEED = 9_2026;

type Protocol = 'legacy' | 'v2';

interface Outcome {
  replies: Record<string, unknown>[];
  closeCode: number | null;
}

let fuzz: FuzzServer;
let wsUrl: string;
let connectionToken: string;

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

async function forged(kind: string, sub: string): Promise<string> {
  const secret = new TextEncoder().encode(REALTIME_SECRET);
  switch (kind) {
    case 'alg none':
      return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub, exp: now() + 3600 })}.`;
    case 'wrong key':
      return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime(now() + 3600).sign(new TextEncoder().encode('not-the-server-secret-0123456789abcdef'));
    case 'expired':
      return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime(now() - 60).sign(secret);
    case 'HS512':
      return new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setSubject(sub).setExpirationTime(now() + 3600).sign(new TextEncoder().encode(REALTIME_SECRET.repeat(2)));
    case 'no sub':
      return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(now() + 3600).sign(secret);
    case 'sub object':
      return `${b64({ alg: 'HS256' })}.${b64({ sub: { id: 1 } })}.${'x'.repeat(43)}`;
    case 'garbage':
      return 'a.b.c';
    default:
      return '';
  }
}

const connectFrame = (protocol: Protocol, token: unknown, id = 1) =>
  JSON.stringify(protocol === 'legacy' ? { id, params: { token } } : { id, connect: { token, name: 'fuzz' } });

const subscribeFrame = (protocol: Protocol, channel: string, id: number, token?: string) =>
  JSON.stringify(protocol === 'legacy' ? { id, method: 1, params: { channel, ...(token ? { token } : {}) } } : { id, subscribe: { channel, ...(token ? { token } : {}) } });

/** Opens a socket, sends `frames` (each after the previous one went out), collects what comes back. */
function session(protocol: Protocol, frames: (string | Buffer)[], waitMs = 400): Promise<Outcome> {
  const url = protocol === 'v2' ? `${wsUrl}?cf_protocol_version=v2` : wsUrl;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const outcome: Outcome = { replies: [], closeCode: null };
    let timer: NodeJS.Timeout;
    ws.on('open', () => {
      for (const frame of frames) ws.send(frame);
      timer = setTimeout(() => ws.close(1000), waitMs);
    });
    ws.on('message', (data) => {
      for (const line of data.toString().split('\n')) {
        if (line.trim()) outcome.replies.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    ws.on('close', (code) => {
      clearTimeout(timer);
      outcome.closeCode = code;
      resolve(outcome);
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      if (outcome.closeCode === null) reject(err);
    });
  });
}

const V2_COMMANDS = ['connect', 'subscribe', 'unsubscribe', 'publish', 'presence', 'presence_stats', 'history', 'ping', 'send', 'rpc', 'refresh', 'sub_refresh'];
/** Modern protocol: a frame of objects naming no command (keys are case-sensitive there) is a pong. */
function isPong(frame: string): boolean {
  return frame.split('\n').every((line) => {
    if (line.trim() === '') return true;
    try {
      const value = JSON.parse(line) as unknown;
      return typeof value === 'object' && value !== null && !Array.isArray(value) && !V2_COMMANDS.some((c) => c in value);
    } catch {
      return false;
    }
  });
}

const errorCodes = (outcome: Outcome) => outcome.replies.flatMap((r) => (r.error ? [(r.error as { code: number }).code] : []));
const protocolClose = (code: number | null) => code !== null && ((code >= 3000 && code <= 4999) || [1002, 1003, 1007, 1008, 1009].includes(code));

function assertAnswered(outcome: Outcome, what: string) {
  const codes = errorCodes(outcome);
  assert.ok(codes.length > 0 || protocolClose(outcome.closeCode), `${what}: no protocol error and no disconnect (${JSON.stringify(outcome)})`);
  assert.ok(!codes.includes(100), `${what}: internal error reply`);
  assert.notEqual(outcome.closeCode, 3004, `${what}: closed as an internal server error`);
}

before(async () => {
  fuzz = await startFuzzServer();
  wsUrl = `${fuzz.server.url.replace('http', 'ws')}/connection/websocket`;
  const profile = await fetch(`${fuzz.server.url}/api/v1/user/oauth`, { headers: { authorization: `Bearer ${fuzz.state.bearer}` } });
  assert.equal(profile.status, 200);
  connectionToken = ((await profile.json()) as { data: { socket_connection_token: string } }).data.socket_connection_token;
});
after(async () => fuzz?.close());

for (const protocol of ['legacy', 'v2'] as const) {
  describe(`${protocol} protocol`, () => {
    test('forged and broken connection tokens are refused with a protocol error or a disconnect', async () => {
      // (A token we signed without `sub` is an anonymous connection in Centrifugo's rules, not a forgery.)
      for (const kind of ['alg none', 'wrong key', 'expired', 'HS512', 'sub object', 'garbage', 'empty']) {
        const outcome = await session(protocol, [connectFrame(protocol, await forged(kind, String(fuzz.userId)))]);
        assertAnswered(outcome, kind);
        assert.ok(!outcome.replies.some((r) => (r.result as { client?: string } | undefined)?.client || (r.connect as { client?: string } | undefined)?.client), `${kind}: connected`);
      }
    });

    test('malformed frames get a protocol error or a disconnect', async () => {
      const rng = new Rng(SEED + (protocol === 'v2' ? 1 : 0));
      const frames: (string | Buffer)[] = [
        'not json',
        '{',
        '[]',
        'null',
        '42',
        '"text"',
        '{}',
        '\n\n\n',
        '{"id":"x","method":99}',
        '{"id":-1,"method":"subscribe","params":null}',
        '{"id":1e309,"params":{"token":{}}}',
        '{"ID":1,"METHOD":"CONNECT","PARAMS":{"TOKEN":[]}}',
        '{"id":1,"connect":{"token":1},"subscribe":{"channel":1}}',
        '['.repeat(10_000) + ']'.repeat(10_000),
        JSON.stringify({ id: 1, params: { token: 'x'.repeat(60_000) } }),
        'x'.repeat(70 * 1024), // over the frame limit
        Buffer.from([0xff, 0xfe, 0x00, 0x81, 0xc3, 0x28]),
        subscribeFrame(protocol, '$alerts:donation_1', 1), // before connect
        Array.from({ length: 50 }, (_, i) => `{"id":${i},"method":7}`).join('\n'),
        JSON.stringify({ id: 1, params: { token: connectionToken, data: { nested: JSON.parse('['.repeat(50) + ']'.repeat(50)) } } }),
      ];
      for (let i = 0; i < 40; i++) {
        frames.push(Buffer.from(Array.from({ length: 1 + rng.int(200) }, () => rng.int(256))));
      }
      for (const [i, frame] of frames.entries()) {
        const outcome = await session(protocol, [frame], 250);
        const sent = typeof frame === 'string' ? frame.slice(0, 80) : `binary #${i}`;
        // A lone ping may be answered, and in the modern protocol `{}` (or nothing) is a client's pong,
        // which needs no answer; anything else that is not a valid connect must be refused.
        if (outcome.replies.length && !errorCodes(outcome).length && outcome.closeCode === 1000 && /"method":7/.test(sent)) continue;
        if (protocol === 'v2' && isPong(sent) && outcome.replies.length === 0) continue;
        if (typeof frame === 'string' && frame.includes(connectionToken)) {
          assert.ok(!errorCodes(outcome).includes(100) && outcome.closeCode !== 3004, sent);
          continue;
        }
        assertAnswered(outcome, sent);
      }
    });

    test('after a valid connect, garbage commands and subscribe floods are refused, and the connection or the server survives them', async () => {
      const flood: string[] = [];
      for (let i = 0; i < 300; i++) flood.push(subscribeFrame(protocol, i % 3 === 0 ? `$alerts:donation_${i}` : i % 3 === 1 ? `$widget:alerts_${fuzz.userId}` : `public:${i}:${'x'.repeat(i)}`, i + 2, i % 5 === 0 ? 'bad.token.here' : undefined));
      const frames = [connectFrame(protocol, connectionToken)];
      if (protocol === 'legacy') frames.push(flood.join('\n'));
      else frames.push(...flood);
      frames.push(protocol === 'legacy' ? '{"id":9999,"method":"nonsense"}' : '{"id":9999,"nonsense":{}}');
      const outcome = await session(protocol, frames, 1500);
      const connected = outcome.replies.find((r) => r.id === 1 && !r.error);
      assert.ok(connected, `valid connect answered: ${JSON.stringify(outcome.replies.slice(0, 2))}`);
      const codes = errorCodes(outcome);
      assert.ok(codes.length > 0 || protocolClose(outcome.closeCode), `flood: ${JSON.stringify(outcome.replies.slice(-3))} ${outcome.closeCode}`);
      assert.ok(!codes.includes(100));
      assert.notEqual(outcome.closeCode, 3004);
    });

    test('many sockets at once, each sending garbage, then a clean client still connects', async () => {
      const rng = new Rng(SEED + 7);
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          session(protocol, [i % 2 ? connectFrame(protocol, connectionToken, i) : Buffer.from(Array.from({ length: 64 }, () => rng.int(256))), subscribeFrame(protocol, `$alerts:donation_${i}`, i + 100)], 600),
        ),
      );
      for (const outcome of outcomes) {
        assert.ok(!errorCodes(outcome).includes(100));
        assert.notEqual(outcome.closeCode, 3004);
      }
      const clean = await session(protocol, [connectFrame(protocol, connectionToken, 5)], 400);
      assert.ok(clean.replies.some((r) => r.id === 5 && !r.error), JSON.stringify(clean));
    });
  });
}

test('the server process survived every socket: same process, still serving, no error logged', async () => {
  assert.equal(fuzz.server.child.exitCode, null);
  assert.equal((await fetch(`${fuzz.server.url}/healthz`)).status, 200);
  const errors = fuzz.server.output().split('\n').filter((line) => /"level":(50|60)/.test(line));
  assert.deepEqual(errors.slice(0, 3), []);
});
