import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { streamersOfOwnedApps } from '../../src/oauth/oauth.repository.js';
import { buildTestApp, dialects, issueToken, makeApp, makeUser } from '../helper.js';

/**
 * Whom the dashboard's webhook form offers (oauth.repository `streamersOfOwnedApps`), on both
 * dialects: each (application, streamer) pair with a live grant once, whatever the number of grants;
 * not another owner's applications, not revoked grants, not client-credentials tokens (no streamer).
 */
for (const dialect of await dialects()) {
  describe(`streamers the webhook form offers (${dialect})`, () => {
    test('one row per application and streamer with a live grant, sorted; nothing revoked or of other owners', async (t) => {
      const app = await buildTestApp({ dialect });
      t.after(() => app.close());
      const db = app.database.db;
      const owner = await makeUser(db, { name: 'Owner' });
      const other = await makeUser(db, { name: 'Other owner' });
      const [anna, boris, vera] = [await makeUser(db, { name: 'Anna' }), await makeUser(db, { name: 'Boris' }), await makeUser(db, { name: 'Vera' })];
      const { app: bot } = await makeApp(app, owner.id);
      const { app: theirs } = await makeApp(app, other.id);
      for (const scopes of [['oauth-donation-subscribe'], ['oauth-user-show']]) await issueToken(app, { userId: boris.id, clientId: bot.client_id, scopes });
      await issueToken(app, { userId: anna.id, clientId: bot.client_id, scopes: ['oauth-donation-subscribe'] });
      await issueToken(app, { userId: vera.id, clientId: theirs.client_id, scopes: ['oauth-donation-subscribe'] });
      await issueToken(app, { userId: null, clientId: bot.client_id, scopes: [] });
      // Vera authorized the owner's bot, then revoked it.
      await issueToken(app, { userId: vera.id, clientId: bot.client_id, scopes: ['oauth-donation-subscribe'] });
      await db.updateTable('oauth_grants').set({ revoked_at: Date.now() }).where('user_id', '=', vera.id).where('client_id', '=', bot.client_id).execute();

      assert.deepEqual(await streamersOfOwnedApps(db, owner.id), [
        { clientId: bot.client_id, appName: 'Test client', userId: anna.id, userName: 'Anna' },
        { clientId: bot.client_id, appName: 'Test client', userId: boris.id, userName: 'Boris' },
      ]);
      assert.deepEqual((await streamersOfOwnedApps(db, other.id)).map((r) => r.userName), ['Vera']);
    });
  });
}
