import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { signChannelToken, signConnectionToken, TokenExpiredError, TokenInvalidError, TokenVerifier } from '../../src/security/jwt.js';

const SECRET = 'token-verifier-test-secret';
const key = new TextEncoder().encode(SECRET);
const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
/** A compact token with any header and claims, signed HS256 with `secret`. */
function handMade(header: unknown, claims: unknown, secret = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
const now = () => Math.floor(Date.now() / 1000);

test('tokens the service signs verify to their claims', async () => {
  const verifier = new TokenVerifier(SECRET);
  const connection = await verifier.verify(await signConnectionToken(SECRET, 42, 300, { grant: 7 }));
  assert.equal(connection.sub, '42');
  assert.equal(connection.grant, 7);
  assert.ok(connection.exp! > now());
  const channel = await verifier.verify(await signChannelToken(SECRET, { client: 'c1', channel: '$alerts:donation_42', ttlSeconds: 60 }));
  assert.equal(channel.channel, '$alerts:donation_42');
  assert.equal(channel.client, 'c1');
  assert.equal((await verifier.verify(await signConnectionToken(SECRET, 'no-exp'))).exp, undefined, 'a token without exp does not expire');
});

// The verifier is fast-jwt's; jose (which signs) is the reference for what must be refused. One
// difference is left: an `iat` that is not a number (jose refuses it; fast-jwt reads `iat` only
// for a maximum token age, which we do not use; nothing here reads `iat`).
test('every token jose refused here is refused, with the same expired / invalid distinction', async () => {
  const good = await signConnectionToken(SECRET, 1, 300);
  const [h, p, s] = good.split('.') as [string, string, string];
  const cases: Array<[string, string]> = [
    ['another secret', await signConnectionToken('another secret', 1, 300)],
    ['a changed payload', `${h}.${b64({ sub: '2', exp: now() + 300 })}.${s}`],
    ['a changed signature', `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`],
    ['no signature', `${h}.${p}.`],
    ['alg none', `${b64({ alg: 'none' })}.${p}.`],
    ['HS512', await new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'HS512' }).sign(key)],
    ['a critical header', handMade({ alg: 'HS256', crit: ['exp'], exp: 1 }, { sub: '1' })],
    ['claims that are an array', handMade({ alg: 'HS256' }, [1, 2])],
    ['claims that are not JSON', `${b64({ alg: 'HS256' })}.${b64('not json')}.${createHmac('sha256', SECRET).update(`${b64({ alg: 'HS256' })}.${b64('not json')}`).digest('base64url')}`],
    ['exp as text', handMade({ alg: 'HS256' }, { sub: '1', exp: String(now() + 300) })],
    ['nbf in the future', handMade({ alg: 'HS256' }, { sub: '1', nbf: now() + 300 })],
    ['expired', handMade({ alg: 'HS256' }, { sub: '1', exp: now() - 1 })],
    ['expiring this second', handMade({ alg: 'HS256' }, { sub: '1', exp: now() })],
    ['two parts', `${h}.${p}`],
    ['four parts', `${good}.${s}`],
    ['padding in a part', `${h}=.${p}.${s}`],
    ['not base64url', `${h}.${p}!.${s}`],
    ['empty', ''],
  ];
  const verifier = new TokenVerifier(SECRET);
  for (const [what, token] of cases) {
    const jose = await jwtVerify(token, key, { algorithms: ['HS256'] }).then(
      () => 'accepted',
      (err: unknown) => (err instanceof joseErrors.JWTExpired ? 'expired' : 'invalid'),
    );
    assert.notEqual(jose, 'accepted', `${what}: jose accepts it, the case is wrong`);
    await assert.rejects(verifier.verify(token), jose === 'expired' ? TokenExpiredError : TokenInvalidError, what);
  }
  // And what jose accepts is accepted: extra header fields, nbf in the past, numeric iat.
  for (const token of [handMade({ alg: 'HS256', typ: 'JWT', kid: 'k' }, { sub: '1', nbf: now() - 5, iat: now() - 5, exp: now() + 60 }), good]) {
    await jwtVerify(token, key, { algorithms: ['HS256'] });
    assert.equal((await verifier.verify(token)).sub, '1');
  }
});
