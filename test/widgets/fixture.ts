import assert from 'node:assert/strict';
import type { Dialect } from '../../src/db/database.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { createCustomAlert } from '../../src/modules/custom-alerts/custom-alerts.service.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { BrowserSession } from '../browser-session.js';
import { makeApp, makeUser } from '../helper.js';
import { merchandiseParams, merchandiseWorld, uniqueId, type MerchandiseWorld } from '../merchandise/fixture.js';

export const PASSWORD = 'correct horse battery';

/** The merchandise world (a merchant that can report sales) plus widget helpers. */
export interface WidgetWorld extends MerchandiseWorld {
  /** A merchandise identifier of the merchant, ready for sales. */
  merchandiseId: string;
  /** An application of its own for custom alerts. */
  customClientId: number;
  newStreamer(overrides?: Parameters<typeof makeUser>[1]): Promise<UserRow>;
  widgetToken(userId: number): Promise<string>;
  /** A signed merchandise sale for the streamer (Merchandise API 4.8); returns the sale alert. */
  sale(userId: number, overrides?: Record<string, unknown>): Promise<any>;
  customAlert(userId: number, fields?: { header?: string; message?: string; isShown?: number }): Promise<any>;
  /** A BrowserSession logged in as the user. */
  session(user: UserRow): Promise<BrowserSession>;
}

export async function widgetWorld(dialect: Dialect = 'sqlite'): Promise<WidgetWorld> {
  const w = await merchandiseWorld(dialect);
  const params = merchandiseParams(w);
  const created = await w.call('POST', '/api/v1/merchandise', params);
  assert.equal(created.statusCode, 201, created.body);
  const db = w.t.database.db;
  const { app: customClient } = await makeApp(w.t, w.streamer.id);
  return Object.assign(w, {
    merchandiseId: params.merchandise_identifier as string,
    customClientId: customClient.client_id,
    newStreamer: (overrides?: Parameters<typeof makeUser>[1]) => makeUser(db, { currency: 'USD', ...overrides }),
    widgetToken: (userId: number) => widgetTokenFor(db, w.t.app.ctx.secrets.encryptionKey, userId),
    async sale(userId: number, overrides: Record<string, unknown> = {}) {
      const res = await w.call('POST', '/api/v1/merchandise_sale', {
        user_id: userId, external_id: uniqueId('sale'), merchant_identifier: w.merchant.identifier, merchandise_identifier: params.merchandise_identifier,
        amount: '20', currency: 'USD', username: 'Buyer', message: 'Nice hoodie', ...overrides,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data;
    },
    customAlert: (userId: number, fields: { header?: string; message?: string; isShown?: number } = {}) =>
      createCustomAlert(db, { userId, clientId: customClient.client_id, header: fields.header ?? 'Custom header', message: fields.message ?? 'Custom message', isShown: fields.isShown }),
    async session(user: UserRow) {
      const s = new BrowserSession(w.t.app);
      await s.get('/login');
      const res = await s.postForm('/login', { email: user.email, password: PASSWORD });
      assert.equal(res.statusCode, 303, res.body);
      return s;
    },
  });
}
