import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import qs from 'qs';
import { startSession } from '../../src/modules/accounts/accounts.service.js';
import { findApp } from '../../src/modules/apps/apps.service.js';
import { listMerchantViews } from '../../src/modules/merchants/merchants.service.js';
import { buildTestApp, makeApp, makeUser, openTestDatabase, type TestApp } from '../helper.js';
import { runCli } from '../process.js';
import { uniqueId } from './fixture.js';

function cookiesOf(res: LightMyRequestResponse, jar: Record<string, string>): Record<string, string> {
  for (const c of res.cookies) jar[c.name] = c.value;
  return jar;
}

describe('/admin/merchants', () => {
  let t: TestApp;
  let adminCookie: string;
  let streamerCookie: string;
  let clientId: number;
  before(async () => {
    t = await buildTestApp();
    const admin = await makeUser(t.database.db, { admin: true });
    const streamer = await makeUser(t.database.db);
    assert.equal(streamer.role, 'streamer');
    clientId = (await makeApp(t, streamer.id)).app.client_id;
    adminCookie = await startSession(t.database.db, admin.id);
    streamerCookie = await startSession(t.database.db, streamer.id);
  });
  after(() => t.close());

  test('logged-out visitors go to log in; streamers get 403', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/admin/merchants' });
    assert.equal(anonymous.statusCode, 302);
    assert.match(String(anonymous.headers.location), /^\/login/);
    const streamer = await t.app.inject({ method: 'GET', url: '/admin/merchants', cookies: { oa_session: streamerCookie } });
    assert.equal(streamer.statusCode, 403);
    const post = await t.app.inject({ method: 'POST', url: '/admin/merchants', cookies: { oa_session: streamerCookie }, payload: { client_id: String(clientId), identifier: 'x', name: 'x' } });
    assert.equal(post.statusCode, 403);
  });

  test('an administrator grants access and creates a merchant (CSRF required)', async () => {
    const jar: Record<string, string> = { oa_session: adminCookie };
    const pageRes = await t.app.inject({ method: 'GET', url: '/admin/merchants', cookies: jar });
    assert.equal(pageRes.statusCode, 200);
    cookiesOf(pageRes, jar);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(pageRes.body)![1]!;
    assert.match(pageRes.body, /Grant access/);

    const noCsrf = await t.app.inject({ method: 'POST', url: `/admin/merchants/apps/${clientId}/access`, cookies: jar, payload: { grant: '1' } });
    assert.equal(noCsrf.statusCode, 403);
    assert.equal((await findApp(t.database.db, clientId))!.merchandise_access, 0);

    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const grant = await t.app.inject({ method: 'POST', url: `/admin/merchants/apps/${clientId}/access`, cookies: jar, headers: form, payload: qs.stringify({ _csrf: csrf, grant: '1' }) });
    assert.equal(grant.statusCode, 303);
    assert.equal((await findApp(t.database.db, clientId))!.merchandise_access, 1);

    const identifier = uniqueId('adm');
    const created = await t.app.inject({ method: 'POST', url: '/admin/merchants', cookies: jar, headers: form, payload: qs.stringify({ _csrf: csrf, client_id: String(clientId), identifier, name: 'Merch <Store>' }) });
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, '/admin/merchants');
    cookiesOf(created, jar);
    const shown = await t.app.inject({ method: 'GET', url: '/admin/merchants', cookies: jar });
    assert.match(shown.body, /Merch &lt;Store&gt;/);
    assert.match(shown.body, new RegExp(`Merchant ${identifier} created\\.`), 'the notice shows on the page the redirect lands on');
    assert.deepEqual((await listMerchantViews(t.database.db, clientId)).map((m) => m.identifier), [identifier]);

    const duplicate = await t.app.inject({ method: 'POST', url: '/admin/merchants', cookies: jar, headers: form, payload: qs.stringify({ _csrf: csrf, client_id: String(clientId), identifier, name: 'Again' }) });
    assert.equal(duplicate.statusCode, 422);
    assert.match(duplicate.body, /already been taken/);
  });
});

test('CLI: merchant create prints JSON; user show prints the balance', async () => {
  const testDb = await openTestDatabase('sqlite');
  try {
    const owner = await makeUser(testDb.database.db);
    const env = { ...testDb.env, DATA_DIR: path.dirname(testDb.env.DATABASE_URL!.slice('sqlite:'.length)) };
    const app = JSON.parse((await runCli(['app', 'create', '--owner', String(owner.id), '--name', 'Shop', '--redirect-uri', 'https://shop.example/cb'], env)).stdout);
    const created = await runCli(['merchant', 'create', '--app', String(app.client_id), '--identifier', 'acme', '--name', 'Acme'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual({ ...JSON.parse(created.stdout), created_at: 'x' }, { id: 1, client_id: app.client_id, identifier: 'acme', name: 'Acme', created_at: 'x' });
    const again = await runCli(['merchant', 'create', '--app', String(app.client_id), '--identifier', 'acme', '--name', 'Acme'], env);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /identifier: The identifier has already been taken/);
    const shown = JSON.parse((await runCli(['user', 'show', String(owner.id)], env)).stdout);
    assert.deepEqual(shown.balance, { currency: 'USD', amount: 0, amount_minor: 0, by_currency: {} });
  } finally {
    await testDb.drop();
  }
});
