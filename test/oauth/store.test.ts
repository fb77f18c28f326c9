import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { revokeAuthorizedApp } from '../../src/oauth/authorized-apps.service.js';
import { grantedScopes, listAuthorizedApps } from '../../src/oauth/oauth.repository.js';
import { buildTestApp, dialects, type TestApp } from '../helper.js';
import { REDIRECT, assertOAuthError, exchange, fixture, obtainCode, tokenRequest } from './helpers.js';

/** Grant and token persistence through the real endpoints, on every dialect (SQLite, PostgreSQL). */
for (const dialect of await dialects()) {
  describe(`grants and tokens on ${dialect}`, () => {
    let t: TestApp;
    const open = async () => (t ??= await buildTestApp({ dialect }));
    after(() => t?.close());

    test('code → grant → tokens stored hashed; rotation; reuse revokes the grant', async () => {
      await open();
      const f = await fixture(t);
      const code = await obtainCode(f, { scope: 'oauth-user-show oauth-donation-index' });
      const first = (await exchange(t, f, code)).json();

      const stored = await t.database.db.selectFrom('oauth_access_tokens').selectAll().where('client_id', '=', f.clientId).execute();
      assert.equal(stored.length, 1);
      assert.notEqual(stored[0]!.token_hash, first.access_token);
      assert.equal(stored[0]!.token_hash.length, 64);
      const grant = await t.database.db.selectFrom('oauth_grants').selectAll().where('id', '=', stored[0]!.grant_id).executeTakeFirstOrThrow();
      assert.equal(grant.user_id, f.user.id);
      assert.equal(grant.kind, 'authorization_code');
      assert.equal(grant.scopes, 'oauth-user-show oauth-donation-index');
      assert.equal(grant.revoked_at, null);

      assert.deepEqual(await grantedScopes(t.database.db, f.user.id, f.clientId), ['oauth-user-show', 'oauth-donation-index']);
      const listed = await listAuthorizedApps(t.database.db, f.user.id);
      assert.equal(listed.length, 1);
      assert.equal(listed[0]!.clientId, f.clientId);

      const refresh = (token: string) => tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: token });
      const second = (await refresh(first.refresh_token)).json();
      assert.ok(await t.app.ctx.tokens.verify(second.access_token));
      assertOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
      const revoked = await t.database.db.selectFrom('oauth_grants').select('revoked_at').where('id', '=', grant.id).executeTakeFirstOrThrow();
      assert.ok(revoked.revoked_at);
      assert.equal(await t.app.ctx.tokens.verify(second.access_token), null);
      assert.equal(await grantedScopes(t.database.db, f.user.id, f.clientId), null);
      assert.deepEqual(await listAuthorizedApps(t.database.db, f.user.id), []);
    });

    test('concurrent exchanges of one code: exactly one wins, and the replay revokes it', async () => {
      await open();
      const f = await fixture(t);
      const code = await obtainCode(f);
      const results = await Promise.all(Array.from({ length: 4 }, () => exchange(t, f, code)));
      const ok = results.filter((r) => r.statusCode === 200);
      assert.equal(ok.length, 1, `${ok.length} exchanges succeeded`);
      for (const r of results) if (r.statusCode !== 200) assertOAuthError(r, 400, 'invalid_grant');
      for (const r of ok) assert.equal(await t.app.ctx.tokens.verify(r.json().access_token), null);
    });

    test('concurrent refreshes of one token: exactly one wins, and the grant ends revoked', async () => {
      await open();
      const f = await fixture(t);
      const first = (await exchange(t, f, await obtainCode(f))).json();
      const results = await Promise.all(
        Array.from({ length: 4 }, () => tokenRequest(t.app, { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: first.refresh_token })),
      );
      const ok = results.filter((r) => r.statusCode === 200);
      assert.equal(ok.length, 1, `${ok.length} refreshes succeeded`);
      for (const r of ok) assert.equal(await t.app.ctx.tokens.verify(r.json().access_token), null);
    });

    test('revokeAuthorizedApp revokes every grant of the pair and deletes pending codes, atomically', async () => {
      await open();
      const f = await fixture(t);
      const a = (await exchange(t, f, await obtainCode(f))).json();
      const pending = await obtainCode(f);
      assert.ok(await t.app.ctx.tokens.verify(a.access_token));
      const { tokens } = t.app.ctx;
      const grants = await t.database.db.selectFrom('oauth_grants').select('id').where('user_id', '=', f.user.id).where('client_id', '=', f.clientId).execute();
      assert.equal(grants.length, 1);
      await revokeAuthorizedApp(t.database.db, tokens, f.user.id, f.clientId);
      const left = await t.database.db.selectFrom('oauth_grants').select('id').where('user_id', '=', f.user.id).where('revoked_at', 'is', null).execute();
      assert.equal(left.length, 0);
      assert.equal(await tokens.verify(a.access_token), null);
      assertOAuthError(await exchange(t, f, pending), 400, 'invalid_grant');
      const codes = await t.database.db.selectFrom('oauth_codes').select('code_hash').where('user_id', '=', f.user.id).where('used_at', 'is', null).execute();
      assert.equal(codes.length, 0);
      assert.ok(REDIRECT);
    });
  });
}
