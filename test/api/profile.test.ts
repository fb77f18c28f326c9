import assert from 'node:assert/strict';
import { jwtVerify, decodeProtectedHeader } from 'jose';
import { after, before, describe, test } from 'node:test';
import { apiFixture, json, type ApiFixture } from './helpers.js';

describe('GET /api/v1/user/oauth (spec 4.1, compatibility.md §2)', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture();
  });
  after(() => f.close());

  test('the profile with is_active, language and a socket_connection_token', async () => {
    const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth() });
    assert.equal(res.statusCode, 200);
    const { data } = json(res);
    assert.deepEqual(Object.keys(data).sort(), ['avatar', 'code', 'email', 'id', 'is_active', 'language', 'name', 'socket_connection_token']);
    const user = await f.t.database.db.selectFrom('users').selectAll().where('id', '=', f.userId).executeTakeFirstOrThrow();
    assert.equal(data.id, user.id);
    assert.equal(data.code, user.code);
    assert.equal(data.name, user.name);
    assert.equal(data.email, user.email);
    assert.equal(data.is_active, 1);
    assert.equal(data.language, 'en_US');
    assert.match(data.avatar, /^https:\/\/alerts\.example\.test\//);
  });

  test('socket_connection_token is an HS256 JWT with sub = user id (string) and exp, signed with the real-time secret', async () => {
    const { data } = json(await f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth() }));
    assert.equal(decodeProtectedHeader(data.socket_connection_token).alg, 'HS256');
    const secret = new TextEncoder().encode(f.t.app.ctx.secrets.realtimeTokenSecret);
    const { payload } = await jwtVerify(data.socket_connection_token, secret, { algorithms: ['HS256'] });
    assert.equal(payload.sub, String(f.userId));
    assert.equal(typeof payload.exp, 'number');
    const now = Math.floor(Date.now() / 1000);
    assert.ok(payload.exp! > now + 24 * 3600, 'lives long enough for reconnects');
    await assert.rejects(jwtVerify(data.socket_connection_token, new TextEncoder().encode('another secret of enough length!!')));
  });

  test('a token of a deactivated user stops working', async () => {
    const db = f.t.database.db;
    await db.updateTable('users').set({ is_active: 0 }).where('id', '=', f.userId).execute();
    try {
      const res = await f.t.app.inject({ url: '/api/v1/user/oauth', headers: f.auth() });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(json(res), { message: 'Unauthenticated.' });
    } finally {
      await db.updateTable('users').set({ is_active: 1 }).where('id', '=', f.userId).execute();
    }
  });
});
