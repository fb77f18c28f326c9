import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { buildTestApp, listen, type TestApp } from '../helper.js';

/**
 * What Node's HTTP parser refuses (bad header bytes, oversized headers) is answered in the compatibility.md §1
 * shape with `Connection: close`, so a client's connection pool never sends its next request down a
 * connection the server is closing (which showed as "socket hang up" on innocent requests when the
 * HTTP fuzz ran several clients at once).
 */
let testApp: TestApp;
let port: number;

before(async () => {
  testApp = await buildTestApp();
  port = Number(new URL(await listen(testApp.app)).port);
});
after(async () => testApp.close());

/** Sends raw bytes on a fresh connection; resolves with everything the server sent until it closed. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

function parse(answer: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) };
}

test('a header with a forbidden byte: 400 in the compatibility.md §1 shape, Connection: close, the connection closed', async () => {
  const answer = parse(await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n'));
  assert.equal(answer.status, 400);
  assert.equal(answer.headers.connection, 'close');
  assert.match(answer.headers['content-type']!, /^application\/json/);
  assert.match((answer.body as { message: string }).message, /not valid HTTP/);
  assert.deepEqual(Object.keys(answer.body as object), ['message']);
});

test('headers over the limit: 431 with Connection: close and a message saying what to do', async () => {
  const answer = parse(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
  assert.equal(answer.status, 431);
  assert.equal(answer.headers.connection, 'close');
  assert.match((answer.body as { message: string }).message, /headers are too large/);
});

test('a pooled keep-alive client whose request is refused by the parser gets every later request answered', async () => {
  // One socket, reused: the refused request and then good ones queue on the same pool.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (headers: Record<string, string>): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
  try {
    for (let round = 0; round < 20; round += 1) {
      // Headers over the limit are sent as-is by Node's client and refused by the server's parser.
      const statuses = await Promise.all([get({ 'x-big': 'a'.repeat(20_000) }), get({}), get({})]);
      assert.deepEqual(statuses, [431, 200, 200], `round ${round}`);
    }
  } finally {
    agent.destroy();
  }
});
