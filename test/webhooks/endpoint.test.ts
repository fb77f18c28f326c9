import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { checkEndpointUrl, postJson, refusedAddress, type Resolver } from '../../src/modules/webhooks/endpoint.js';
import { backoffMs } from '../../src/modules/webhooks/webhooks.dispatcher.js';
import { testConfig } from '../helper.js';
import { receivers } from './receiver.js';

/**
 * The SSRF guard and the one request of a delivery (endpoint.ts), without a server around them:
 * every address form the issue names (issue 11 "Safety"), the loopback rule with and without
 * WEBHOOKS_ALLOW_HTTP, a name whose answers include a forbidden address, a hanging receiver and a
 * 10 MB answer; and the retry schedule and defaults the delivery promises rest on.
 */
const STRICT = { allowLoopback: false };
const LOCAL = { allowLoopback: true };

describe('webhook endpoint guard', () => {
  test('private, shared, link-local (metadata), reserved and unspecified addresses are refused whatever the flag; IPv6 forms too', () => {
    const forbidden = [
      '0.0.0.0', '0.1.2.3', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.169.254', '169.254.0.1',
      '192.0.2.1', '198.18.0.1', '224.0.0.1', '255.255.255.255',
      '::', 'fe80::1', 'fc00::1', 'fd00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1',
      // IPv4 inside IPv6: mapped, NAT64, 6to4 — each could wrap the metadata address.
      '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '2001::1',
    ];
    for (const address of forbidden) {
      assert.match(refusedAddress(address, STRICT) ?? '', /private, link-local or reserved/, address);
      assert.match(refusedAddress(address, LOCAL) ?? '', /private, link-local or reserved/, `${address} with WEBHOOKS_ALLOW_HTTP`);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111']) {
      assert.equal(refusedAddress(address, STRICT), null, address);
    }
  });

  test('loopback (IPv4, IPv6, IPv4-mapped) is refused unless WEBHOOKS_ALLOW_HTTP', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      assert.match(refusedAddress(address, STRICT) ?? '', /loopback/, address);
      assert.equal(refusedAddress(address, LOCAL), null, `${address} with WEBHOOKS_ALLOW_HTTP`);
    }
  });

  test('registration: https only; plain http only to loopback and only with the flag; no loopback or localhost without it', () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'https://127.0.0.1/hook', 'https://[::1]/hook', 'https://localhost/hook', 'http://localhost/hook', 'https://0.0.0.0/hook', 'https://[::ffff:127.0.0.1]/x']) {
      assert.ok('error' in checkEndpointUrl(url, STRICT), url);
    }
    for (const url of ['http://example.com/hook', 'http://93.184.216.34/hook', 'ftp://127.0.0.1/x', 'https://10.0.0.1/x']) {
      assert.ok('error' in checkEndpointUrl(url, LOCAL), `${url} with WEBHOOKS_ALLOW_HTTP`);
    }
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://[::1]/hook']) {
      assert.ok('url' in checkEndpointUrl(url, LOCAL), `${url} with WEBHOOKS_ALLOW_HTTP`);
    }
    assert.ok('url' in checkEndpointUrl('https://hooks.example.com/openalerts', STRICT));
    assert.ok('error' in checkEndpointUrl(`https://example.com/${'x'.repeat(2048)}`, STRICT), 'over 2048 characters');
  });
});

describe('one delivery request (postJson)', () => {
  const receiver = receivers();

  /** A name that resolves to what the test says, as DNS rebinding would make it. */
  const resolvesTo = (...addresses: string[]): Resolver => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const send = (url: string, resolver: Resolver, policy = LOCAL, timeoutMs = 2000) => postJson(url, { 'webhook-id': 'msg_1' }, '{}', { timeoutMs, policy, resolver });

  test('a name is refused if any of its addresses is forbidden, and nothing is sent; plain http reaches only loopback', async () => {
    const r = await receiver();
    // localhost: the one name plain http may use (with the flag); what it resolves to is the test's.
    const url = `http://localhost:${r.port}/hook`;
    for (const answers of [['127.0.0.1', '10.0.0.1'], ['169.254.169.254'], ['::ffff:169.254.169.254'], ['fd00::1'], ['0.0.0.0'], ['93.184.216.34']]) {
      const result = await send(url, resolvesTo(...answers));
      assert.equal(result.statusCode, null, answers.join());
      assert.match(result.error ?? '', /^refused: localhost resolves to/, answers.join());
    }
    // Loopback through a name without the flag: refused as well.
    assert.match((await send(`https://hook.example.test:${r.port}/hook`, resolvesTo('127.0.0.1'), STRICT)).error ?? '', /loopback/);
    assert.equal(r.received.length, 0, 'no request reached the receiver');
    // The same name pointing at loopback, with the flag: delivered.
    assert.equal((await send(url, resolvesTo('127.0.0.1'))).statusCode, 200);
    assert.equal(r.received.length, 1);
  });

  test('a receiver that never answers times out at the limit; the attempt ends, nothing throws', async () => {
    const r = await receiver();
    r.behave = () => 'hang';
    const result = await send(r.url, resolvesTo('127.0.0.1'), LOCAL, 300);
    assert.equal(result.statusCode, null);
    // The part of the limit left after the address check, in whole milliseconds (the log shows it).
    assert.match(result.error ?? '', /^timed out after \d+ ms$/);
  });

  test('a 10 MB answer: at most 64 KB is read, the connection is closed before the rest is sent', async () => {
    let written = 0;
    let finished = false;
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (written < 10 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        finished = true;
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
    const port = (server.address() as AddressInfo).port;
    const result = await send(`http://127.0.0.1:${port}/big`, resolvesTo('127.0.0.1'));
    assert.equal(result.statusCode, 200);
    assert.equal(result.excerpt!.length, 1024, 'the log keeps the first kilobyte');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(finished, false, 'the receiver could not send all of it: we hung up');
    assert.ok(written < 10 * 1024 * 1024, `${written} bytes written`);
  });
});

describe('retry schedule and defaults', () => {
  test('exponential backoff from the base, capped at an hour, with jitter in the upper half', () => {
    const base = 5000;
    for (let attempt = 1; attempt <= 40; attempt++) {
      const ceiling = Math.min(3600_000, base * 2 ** (attempt - 1));
      for (let i = 0; i < 20; i++) {
        const delay = backoffMs(attempt, base);
        assert.ok(delay >= ceiling / 2 && delay <= ceiling, `attempt ${attempt}: ${delay} in [${ceiling / 2}, ${ceiling}]`);
      }
    }
    const samples = new Set(Array.from({ length: 50 }, () => backoffMs(6, base)));
    assert.ok(samples.size > 10, 'jittered: not one value for every receiver');
  });

  test('defaults: 10 s per attempt, retried for 24 h from 5 s, secrets overlap 24 h, http refused', () => {
    const { webhooks } = testConfig();
    assert.equal(webhooks.timeoutMs, 10_000);
    assert.equal(webhooks.retryWindowMs, 24 * 3600_000);
    assert.equal(webhooks.retryBaseMs, 5000);
    assert.equal(webhooks.secretOverlapMs, 24 * 3600_000);
    assert.equal(webhooks.allowHttp, false);
  });
});
