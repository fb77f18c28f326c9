import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { makeUser } from '../helper.js';
import { apiFixture, assertValidationError, json, type ApiFixture } from './helpers.js';

const BASE = 'https://alerts.example.test/api/v1/alerts/donations';
const TOTAL = 75; // pages of 30, 30, 15

describe('GET /api/v1/alerts/donations (spec 4.2, compatibility.md §2)', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture();
    const db = f.t.database.db;
    for (let i = 1; i <= TOTAL; i++) {
      await createDonation(db, { userId: f.userId, amount: `${i}.50`, currency: i % 2 ? 'USD' : 'EUR', username: `donor ${i}`, message: `message ${i}`, payinSystem: i === TOTAL ? 'Card' : null });
    }
    // Another streamer's donations never show.
    const other = await makeUser(db);
    await createDonation(db, { userId: other.id, amount: '1', currency: 'USD', username: 'elsewhere' });
  });
  after(() => f.close());

  const get = (query = '') => f.t.app.inject({ url: `/api/v1/alerts/donations${query}`, headers: f.auth() });

  test('three pages of 30, newest first, with absolute links and Laravel meta', async () => {
    const seen: number[] = [];
    const expected = [
      { page: 1, count: 30, from: 1, to: 30, prev: null, next: `${BASE}?page=2` },
      { page: 2, count: 30, from: 31, to: 60, prev: `${BASE}?page=1`, next: `${BASE}?page=3` },
      { page: 3, count: 15, from: 61, to: 75, prev: `${BASE}?page=2`, next: null },
    ];
    for (const e of expected) {
      const res = await get(`?page=${e.page}`);
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.deepEqual(Object.keys(body).sort(), ['data', 'links', 'meta']);
      assert.equal(body.data.length, e.count);
      assert.deepEqual(body.links, { first: `${BASE}?page=1`, last: `${BASE}?page=3`, prev: e.prev, next: e.next });
      assert.deepEqual(body.meta, { current_page: e.page, from: e.from, last_page: 3, path: BASE, per_page: 30, to: e.to, total: TOTAL });
      seen.push(...body.data.map((d: { id: number }) => d.id));
    }
    assert.equal(new Set(seen).size, TOTAL);
    assert.deepEqual(seen, [...seen].sort((a, b) => b - a), 'newest first across pages');
  });

  test('each item is a donation alert with the compatibility.md §2 extras', async () => {
    const body = json(await get());
    const newest = body.data[0];
    assert.deepEqual(Object.keys(newest).sort(), [
      'amount', 'amount_in_user_currency', 'created_at', 'currency', 'id', 'is_shown', 'message', 'message_type', 'name', 'payin_system', 'recipient_name', 'shown_at', 'username',
    ]);
    assert.equal(newest.name, 'donation');
    assert.equal(newest.username, `donor ${TOTAL}`);
    assert.equal(newest.amount, TOTAL + 0.5);
    assert.equal(newest.currency, 'USD');
    assert.deepEqual(newest.payin_system, { title: 'Card' });
    assert.equal(body.data[1].payin_system, null);
    assert.equal(newest.is_shown, 0);
    assert.equal(newest.shown_at, null);
    assert.match(newest.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.equal(typeof newest.amount_in_user_currency, 'number');
    assert.match(newest.recipient_name, /^Streamer /);
    assert.equal(body.meta.current_page, 1, 'no page parameter means page 1');
  });

  test('a page past the end is a 200 with no data and the same links/meta shape', async () => {
    for (const page of [4, 1000]) {
      const res = await get(`?page=${page}`);
      assert.equal(res.statusCode, 200);
      const body = json(res);
      assert.deepEqual(body.data, []);
      assert.deepEqual(body.links, { first: `${BASE}?page=1`, last: `${BASE}?page=3`, prev: `${BASE}?page=${page - 1}`, next: null });
      assert.deepEqual(body.meta, { current_page: page, from: 0, last_page: 3, path: BASE, per_page: 30, to: 0, total: TOTAL });
    }
  });

  test('a streamer with no donations gets one empty page', async () => {
    const user = await makeUser(f.t.database.db);
    const token = await f.tokenWith(['oauth-donation-index'], { userId: user.id });
    const body = json(await f.t.app.inject({ url: '/api/v1/alerts/donations', headers: f.auth(token) }));
    assert.deepEqual(body, {
      data: [],
      links: { first: `${BASE}?page=1`, last: `${BASE}?page=1`, prev: null, next: null },
      meta: { current_page: 1, from: 0, last_page: 1, path: BASE, per_page: 30, to: 0, total: 0 },
    });
  });

  test('a bad page is a 400 naming `page`: empty, zero, negative, fraction, text, too large, repeated, bracketed', async () => {
    for (const query of ['?page=', '?page=0', '?page=-1', '?page=1.5', '?page=two', '?page=99999999999', '?page=1&page=2', '?page[]=1&page[]=2', '?page=%FF', '?page=1%00']) {
      const res = await get(query);
      if (query === '?page[]=1&page[]=2') {
        // `page[]` is another key; the page itself is absent, so page 1.
        assert.equal(res.statusCode, 200, query);
        continue;
      }
      assertValidationError(res, ['page']);
    }
  });

  test('unknown query parameters are ignored', async () => {
    const res = await get('?page=2&per_page=100&sort=asc');
    assert.equal(res.statusCode, 200);
    assert.equal(json(res).data.length, 30);
  });
});
