import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rotateSecret } from '../../src/modules/apps/apps.service.js';
import { dialects } from '../helper.js';
import { otherProcess, type OtherProcess } from '../other-process.js';
import { jsSignature, merchandiseParams, merchandiseWorld, type MerchandiseWorld } from './fixture.js';

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
    const create = (opts: { sign?: boolean } = {}, params = merchandiseParams(w)) => w.call('POST', '/api/v1/merchandise', params, opts);

    test('access withdrawn by another process is refused at once, and granted again at once', async () => {
      assert.equal((await create()).statusCode, 201);
      await other.call('modules/apps/apps.service.ts', 'setMerchandiseAccess', w.clientId, false);
      const refused = await create();
      assert.equal(refused.statusCode, 403, refused.body);
      assert.match(refused.json().message, /no Merchandise API access/);
      await other.call('modules/apps/apps.service.ts', 'setMerchandiseAccess', w.clientId, true);
      assert.equal((await create()).statusCode, 201);
    });

    test('after a secret rotation the old secret’s signature is refused and the new one accepted', async () => {
      assert.equal((await create()).statusCode, 201);
      const app = await w.t.database.db.selectFrom('apps').select('owner_id').where('id', '=', w.clientId).executeTakeFirstOrThrow();
      const newSecret = await rotateSecret(w.t.database.db, w.t.app.ctx.secrets.encryptionKey, app.owner_id, w.clientId);
      const old = await create();
      assert.equal(old.statusCode, 403, old.body);
      assert.equal(old.json().message, 'Invalid signature.');
      const params = merchandiseParams(w);
      const res = await create({}, { ...params, signature: jsSignature(params, newSecret) });
      assert.equal(res.statusCode, 201, res.body);
    });
  });
}
