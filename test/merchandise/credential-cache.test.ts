import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dialects } from '../helper.js';
import { otherProcess, type OtherProcess } from '../other-process.js';
import { jsSignature, merchandiseParams, merchandiseWorld, uniqueId, type MerchandiseWorld, type Params } from './fixture.js';

/**
 * The calling application's credentials are cached per process (merchant-auth.ts) and reused only
 * while the `merchant_auth` version is unchanged. Each test makes a signed call first (so the
 * credentials are cached), changes them elsewhere, and calls again: a cache that missed the change
 * would accept the call.
 */
for (const dialect of await dialects()) {
  describe(`Merchandise API credentials are never used after they change (${dialect})`, () => {
    let w: MerchandiseWorld;
    let other: OtherProcess;
    before(async () => {
      w = await merchandiseWorld(dialect);
      other = await otherProcess(w.t.env);
    });
    after(async () => {
      await other.close();
      await w.close();
    });
    // Two routes: one verifies with a version read of its own (merchandise), the other (a sale, on
    // PostgreSQL) lets the sales' batch look-up read the version and verifies again when it moved.
    let hoodie: string;
    before(async () => {
      const params = merchandiseParams(w);
      assert.equal((await w.call('POST', '/api/v1/merchandise', params)).statusCode, 201);
      hoodie = params.merchandise_identifier as string;
    });
    const routes = {
      merchandise: { url: '/api/v1/merchandise', params: () => merchandiseParams(w) },
      sale: {
        url: '/api/v1/merchandise_sale',
        params: (): Params => ({ user_id: w.streamer.id, external_id: uniqueId('sale'), merchant_identifier: w.merchant.identifier, merchandise_identifier: hoodie, amount: '20', currency: 'EUR' }),
      },
    };

    // The secret the calls sign with: a rotation test moves it on for the tests after it.
    let secret: string;
    before(() => {
      secret = w.secret;
    });
    for (const [name, route] of Object.entries(routes)) {
      const call = (params = route.params()) => w.call('POST', route.url, 'signature' in params ? params : { ...params, signature: jsSignature(params, secret) });

      test(`${name}: access withdrawn by another process is refused at once, and granted again at once`, async () => {
        assert.equal((await call()).statusCode, 201);
        await other.call('modules/apps/apps.service.ts', 'setMerchandiseAccess', w.clientId, false);
        const refused = await call();
        assert.equal(refused.statusCode, 403, refused.body);
        assert.match(refused.json().message, /no Merchandise API access/);
        await other.call('modules/apps/apps.service.ts', 'setMerchandiseAccess', w.clientId, true);
        assert.equal((await call()).statusCode, 201);
      });

      test(`${name}: after a secret rotation by another process the old secret’s signature is refused and the new one accepted`, async () => {
        assert.equal((await call()).statusCode, 201);
        const app = await w.t.database.db.selectFrom('apps').select('owner_id').where('id', '=', w.clientId).executeTakeFirstOrThrow();
        const newSecret: string = await other.call('modules/apps/apps.service.ts', 'rotateSecret', w.t.app.ctx.secrets.encryptionKey, app.owner_id, w.clientId);
        const old = await call();
        assert.equal(old.statusCode, 403, old.body);
        assert.equal(old.json().message, 'Invalid signature.');
        const params = route.params();
        const res = await call({ ...params, signature: jsSignature(params, newSecret) });
        assert.equal(res.statusCode, 201, res.body);
        secret = newSecret;
      });
    }
  });
}
