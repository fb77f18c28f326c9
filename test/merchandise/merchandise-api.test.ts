import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import qs from 'qs';
import { changePromocode } from '../../src/modules/merchandise/promocodes.js';
import { createMerchant } from '../../src/modules/merchants/merchants.service.js';
import { issueToken, makeApp, makeUser } from '../helper.js';
import { encodeBody, jsSignature, leafValues, merchandiseParams, merchandiseWorld, sha256, uniqueId, type Encoding, type MerchandiseWorld, type Params } from './fixture.js';

const ENCODINGS: Encoding[] = ['form', 'multipart', 'json'];
let w: MerchandiseWorld;
before(async () => {
  w = await merchandiseWorld();
});
after(() => w.close());

/** The spec §2 Merchandise resource, field for field. */
function assertResource(data: Record<string, unknown>, expected: Record<string, unknown>): void {
  assert.deepEqual(Object.keys(data).sort(), ['currency', 'end_at', 'id', 'identifier', 'img_url', 'is_active', 'is_percentage', 'merchant', 'price_service', 'price_user', 'title', 'url'].sort());
  assert.equal(typeof data.id, 'number');
  for (const [key, value] of Object.entries(expected)) assert.deepEqual(data[key], value, key);
}

describe('4.4 POST /merchandise', () => {
  for (const encoding of ENCODINGS) {
    test(`creates merchandise from a ${encoding} body (201, spec §2 resource)`, async () => {
      const params = merchandiseParams(w, { url: 'https://shop.example/p?ref={user_id}&code={user_merchandise_promocode}', img_url: 'https://shop.example/i.png', end_at_ts: '4102444800' });
      const res = await w.call('POST', '/api/v1/merchandise', params, { encoding });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['content-type'], 'application/json');
      assertResource(res.json().data, {
        merchant: { identifier: w.merchant.identifier, name: 'Shop & Co' },
        identifier: params.merchandise_identifier,
        title: { en_US: 'Hoodie', ru_RU: 'Худи' },
        is_active: 1,
        is_percentage: 0,
        currency: 'EUR',
        price_user: 5.5,
        price_service: 1.25,
        url: 'https://shop.example/p?ref={user_id}&code={user_merchandise_promocode}',
        img_url: 'https://shop.example/i.png',
        end_at: '2100-01-01 00:00:00',
      });
    });
  }

  test('defaults: is_active 0, is_percentage 0, url/img_url/end_at null', async () => {
    const params = merchandiseParams(w);
    delete params.is_active;
    const res = await w.call('POST', '/api/v1/merchandise', params);
    assert.equal(res.statusCode, 201, res.body);
    assertResource(res.json().data, { is_active: 0, is_percentage: 0, url: null, img_url: null, end_at: null });
  });

  test('the same merchandise_identifier twice for one merchant is a 400', async () => {
    const params = merchandiseParams(w);
    assert.equal((await w.call('POST', '/api/v1/merchandise', params)).statusCode, 201);
    const again = await w.call('POST', '/api/v1/merchandise', params);
    assert.equal(again.statusCode, 400);
    assert.deepEqual(Object.keys(again.json().errors), ['merchandise_identifier']);
  });
});

describe('signatures over HTTP', () => {
  // Values chosen so the two orders differ: "150" < "30" for JS, 30 < 150 for PHP.
  const params = () => merchandiseParams(w, { price_user: '30', price_service: '150', is_active: '1' });

  /** PHP order for these values, written out by hand: integers by value, everything else byte-wise after them. */
  const phpOrder = (values: string[]) =>
    [...values].sort((a, b) => {
      const na = /^\d+$/.test(a);
      const nb = /^\d+$/.test(b);
      if (na && nb) return Number(a) - Number(b);
      return Buffer.compare(Buffer.from(a), Buffer.from(b));
    });

  test('JS-order and PHP-order signatures are both accepted; they differ here', async () => {
    const p1 = params();
    const js = sha256(leafValues(p1).sort().join('') + w.secret);
    const php = sha256(phpOrder(leafValues(p1)).join('') + w.secret);
    assert.notEqual(js, php);
    assert.equal((await w.call('POST', '/api/v1/merchandise', { ...p1, signature: js })).statusCode, 201);
    const p2 = params();
    const res = await w.call('POST', '/api/v1/merchandise', { ...p2, signature: sha256(phpOrder(leafValues(p2)).join('') + w.secret) });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('one wrong byte → 403 {"message":"Invalid signature."}; nothing is created', async () => {
    const p = params();
    const good = jsSignature(p, w.secret);
    const bad = good.slice(0, -1) + (good.endsWith('a') ? 'b' : 'a');
    const res = await w.call('POST', '/api/v1/merchandise', { ...p, signature: bad });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: 'Invalid signature.' });
    const count = await w.t.database.db.selectFrom('merchandise').select((eb) => eb.fn.countAll<number>().as('n')).where('identifier', '=', p.merchandise_identifier as string).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  test('a missing signature is a 400 validation error on signature', async () => {
    const res = await w.call('POST', '/api/v1/merchandise', params(), { sign: false });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: 'The signature field is required.', errors: { signature: ['The signature field is required.'] } });
  });

  test('unknown extra parameters count in the signature', async () => {
    const p = { ...params(), utm_source: 'newsletter' };
    const { utm_source: _extra, ...known } = p;
    assert.equal((await w.call('POST', '/api/v1/merchandise', { ...p, signature: jsSignature(known, w.secret) })).statusCode, 403, 'signing without the extra value fails');
    assert.equal((await w.call('POST', '/api/v1/merchandise', { ...p, signature: jsSignature(p, w.secret) })).statusCode, 201);
  });

  test('query parameters of a POST are signed too', async () => {
    const p = params();
    const body = encodeBody({ ...p, signature: jsSignature({ ...p, ref: 'q' }, w.secret) }, 'form');
    const res = await w.t.app.inject({ method: 'POST', url: '/api/v1/merchandise?ref=q', payload: body.payload, headers: { ...body.headers, authorization: `Bearer ${w.token}` } });
    assert.equal(res.statusCode, 201, res.body);
  });
});

describe('authentication and ownership', () => {
  test('no token → 401; a token of an app without access → 403', async () => {
    const p = merchandiseParams(w);
    const noToken = await w.t.app.inject({ method: 'POST', url: '/api/v1/merchandise', payload: qs.stringify({ ...p, signature: jsSignature(p, w.secret) }), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(noToken.statusCode, 401);
    assert.deepEqual(noToken.json(), { message: 'Unauthenticated.' });
    const owner = await makeUser(w.t.database.db);
    const { app: other, clientSecret } = await makeApp(w.t, owner.id);
    const token = await issueToken(w.t, { userId: null, clientId: other.client_id, scopes: [] });
    const res = await w.call('POST', '/api/v1/merchandise', { ...p, signature: jsSignature(p, clientSecret) }, { token });
    assert.equal(res.statusCode, 403);
    assert.match(res.json().message, /Merchandise API access/);
  });

  test("another application's merchant → 403 on every operation", async () => {
    const db = w.t.database.db;
    const owner = await makeUser(db);
    const { app: other } = await makeApp(w.t, owner.id);
    const foreign = await createMerchant(db, { clientId: other.client_id, identifier: uniqueId('foreign'), name: 'Foreign' });
    const create = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { merchant_identifier: foreign.identifier }));
    assert.equal(create.statusCode, 403);
    assert.deepEqual(create.json(), { message: 'This merchant does not belong to your application.' });
    const upsert = await w.call('PUT', `/api/v1/merchandise/${foreign.identifier}/abc`, { title: { en_US: 'X' }, currency: 'USD', price_user: '1', price_service: '1' });
    assert.equal(upsert.statusCode, 403);
    const sale = await w.call('POST', '/api/v1/merchandise_sale', { user_id: w.streamer.id, external_id: 'f1', merchant_identifier: foreign.identifier, merchandise_identifier: 'abc', amount: '1', currency: 'USD' });
    assert.equal(sale.statusCode, 403);
  });

  test('a user-bound token of the merchant app works as well as client credentials', async () => {
    const token = await issueToken(w.t, { userId: w.streamer.id, clientId: w.clientId, scopes: ['oauth-user-show'] });
    const res = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w), { token });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('an unknown merchant_identifier is a 400 on that field', async () => {
    const res = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { merchant_identifier: 'no-such-merchant' }));
    assert.equal(res.statusCode, 400);
    assert.deepEqual(Object.keys(res.json().errors), ['merchant_identifier']);
  });
});

describe('4.5 PUT /merchandise/{id}', () => {
  for (const encoding of ENCODINGS) {
    test(`partial update from a ${encoding} body: only signature required, other fields kept`, async () => {
      const created = (await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { url: 'https://a.example/x' }))).json().data;
      const res = await w.call('PUT', `/api/v1/merchandise/${created.id}`, { price_user: '7', title: { en_US: 'New hoodie' } }, { encoding });
      assert.equal(res.statusCode, 200, res.body);
      assertResource(res.json().data, { id: created.id, price_user: 7, price_service: 1.25, title: { en_US: 'New hoodie' }, url: 'https://a.example/x', is_active: 1, currency: 'EUR' });
      const onlySignature = await w.call('PUT', `/api/v1/merchandise/${created.id}`, {}, { encoding });
      assert.equal(onlySignature.statusCode, 200, onlySignature.body);
      assert.equal(onlySignature.json().data.price_user, 7);
    });
  }

  test('an empty url / end_at_ts clears it', async () => {
    const created = (await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { url: 'https://a.example/x', end_at_ts: '4102444800' }))).json().data;
    const res = await w.call('PUT', `/api/v1/merchandise/${created.id}`, { url: '', end_at_ts: '' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.url, null);
    assert.equal(res.json().data.end_at, null);
  });

  test('unknown id → 404; turning on is_percentage over 100 → 400', async () => {
    assert.equal((await w.call('PUT', '/api/v1/merchandise/999999', {})).statusCode, 404);
    const created = (await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { price_user: '150' }))).json().data;
    const res = await w.call('PUT', `/api/v1/merchandise/${created.id}`, { is_percentage: '1' });
    assert.equal(res.statusCode, 400);
    assert.ok(res.json().errors.price_user);
  });
});

describe('4.6 PUT|POST /merchandise/{merchant_identifier}/{merchandise_identifier}', () => {
  const body = { title: { en_US: 'Mug' }, currency: 'USD', price_user: '2', price_service: '0.5', is_active: '1' };
  for (const encoding of ENCODINGS) {
    for (const method of ['PUT', 'POST'] as const) {
      test(`${method} with a ${encoding} body: 201 when it creates, 200 when it updates`, async () => {
        const id = uniqueId('u');
        const url = `/api/v1/merchandise/${w.merchant.identifier}/${id}`;
        const created = await w.call(method, url, body, { encoding });
        assert.equal(created.statusCode, 201, created.body);
        assertResource(created.json().data, { identifier: id, title: { en_US: 'Mug' }, price_user: 2, currency: 'USD', merchant: { identifier: w.merchant.identifier, name: 'Shop & Co' } });
        const updated = await w.call(method, url, { ...body, price_user: '3' }, { encoding });
        assert.equal(updated.statusCode, 200, updated.body);
        assert.equal(updated.json().data.id, created.json().data.id);
        assert.equal(updated.json().data.price_user, 3);
      });
    }
  }

  test('the path identifiers are not signed', async () => {
    const url = `/api/v1/merchandise/${w.merchant.identifier}/${uniqueId('p')}`;
    const withPath = sha256([...leafValues(body), w.merchant.identifier, 'x'].sort().join('') + w.secret);
    assert.equal((await w.call('PUT', url, { ...body, signature: withPath })).statusCode, 403);
    assert.equal((await w.call('PUT', url, { ...body, signature: jsSignature(body, w.secret) })).statusCode, 201);
  });

  test('title, currency and prices are required; the path identifier is at most 16 characters', async () => {
    const res = await w.call('PUT', `/api/v1/merchandise/${w.merchant.identifier}/${uniqueId('r')}`, {});
    assert.equal(res.statusCode, 400);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['currency', 'price_service', 'price_user', 'title']);
    const long = await w.call('PUT', `/api/v1/merchandise/${w.merchant.identifier}/${'x'.repeat(17)}`, body);
    assert.equal(long.statusCode, 400);
    assert.ok(long.json().errors.merchandise_identifier);
  });
});

describe('4.7 GET /merchandise/user', () => {
  test('promocode → {data: {user_id}}, case-insensitive; signed over the query', async () => {
    const res = await w.call('GET', '/api/v1/merchandise/user', { promocode: w.streamer.merchandise_promocode.toLowerCase() });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: { user_id: w.streamer.id } });
    const unsigned = await w.call('GET', '/api/v1/merchandise/user', { promocode: w.streamer.merchandise_promocode, signature: 'f'.repeat(64) });
    assert.equal(unsigned.statusCode, 403);
  });

  test('unknown or missing promocode → 400', async () => {
    const unknown = await w.call('GET', '/api/v1/merchandise/user', { promocode: 'NOPE0000' });
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(Object.keys(unknown.json().errors), ['promocode']);
    const missing = await w.call('GET', '/api/v1/merchandise/user', {});
    assert.equal(missing.statusCode, 400);
  });

  test('a changed promocode is found; the old one no longer is', async () => {
    const user = await makeUser(w.t.database.db);
    const code = await changePromocode(w.t.database.db, user.id, ' myCode77 ');
    assert.equal(code, 'MYCODE77');
    assert.deepEqual((await w.call('GET', '/api/v1/merchandise/user', { promocode: 'mycode77' })).json(), { data: { user_id: user.id } });
    assert.equal((await w.call('GET', '/api/v1/merchandise/user', { promocode: user.merchandise_promocode })).statusCode, 400);
    await assert.rejects(changePromocode(w.t.database.db, w.streamer.id, 'mycode77'), /already been taken/);
    await assert.rejects(changePromocode(w.t.database.db, w.streamer.id, 'ab'), /4–16/);
    await assert.rejects(changePromocode(w.t.database.db, w.streamer.id, 'has space'), /4–16/);
  });
});

describe('validation (spec 4.4 table)', () => {
  const cases: Array<[string, Params, string]> = [
    ['merchandise_identifier required', { merchandise_identifier: undefined }, 'merchandise_identifier'],
    ['merchandise_identifier at most 16', { merchandise_identifier: 'x'.repeat(17) }, 'merchandise_identifier'],
    ['merchant_identifier required', { merchant_identifier: undefined }, 'merchant_identifier'],
    ['title required', { title: undefined }, 'title'],
    ['title must be keyed by locale', { title: 'Hoodie' }, 'title'],
    ['title[en_US] required', { title: { ru_RU: 'Худи' } }, 'title.en_US'],
    ['title locale from the spec list', { title: { en_US: 'a', xx_XX: 'b' } }, 'title.xx_XX'],
    ['title at most 1024 characters', { title: { en_US: 'x'.repeat(1025) } }, 'title.en_US'],
    ['is_active 0 or 1', { is_active: '2' }, 'is_active'],
    ['is_percentage 0 or 1', { is_percentage: 'yes' }, 'is_percentage'],
    ['currency required', { currency: undefined }, 'currency'],
    ['currency from the input list', { currency: 'KZT' }, 'currency'],
    ['price_user required', { price_user: undefined }, 'price_user'],
    ['price_user a number', { price_user: 'ten' }, 'price_user'],
    ['price_user not negative', { price_user: '-1' }, 'price_user'],
    ['price_service at most two decimals', { price_service: '1.005' }, 'price_service'],
    ['percentages at most 100', { is_percentage: '1', price_user: '100.01' }, 'price_user'],
    ['url at most 128 characters', { url: `https://a.example/${'x'.repeat(111)}` }, 'url'],
    ['url must be http(s)', { url: 'javascript:alert(1)' }, 'url'],
    ['img_url at most 128 characters', { img_url: `https://a.example/${'x'.repeat(111)}` }, 'img_url'],
    ['end_at_ts an integer', { end_at_ts: 'tomorrow' }, 'end_at_ts'],
    ['end_at_ts not negative', { end_at_ts: '-5' }, 'end_at_ts'],
  ];
  for (const [name, overrides, field] of cases) {
    test(`${name} → 400 on ${field}`, async () => {
      const params = merchandiseParams(w, overrides);
      for (const [k, v] of Object.entries(params)) if (v === undefined) delete params[k];
      const res = await w.call('POST', '/api/v1/merchandise', params);
      assert.equal(res.statusCode, 400, res.body);
      const json = res.json();
      assert.ok(json.errors[field], `${field} in ${res.body}`);
      assert.equal(json.message, Object.values(json.errors as Record<string, string[]>)[0]![0]);
    });
  }

  test('boundaries are accepted: 16-character identifier, 128-character url, 100 %, 1024-character title, 0 prices', async () => {
    const url = `https://a.example/${'x'.repeat(110)}`;
    assert.equal(url.length, 128);
    const res = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { merchandise_identifier: uniqueId('b').padEnd(16, 'z'), url, img_url: url, is_percentage: '1', price_user: '100', price_service: '0', title: { en_US: 'x'.repeat(1024) } }));
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.url, url);
  });

  test('every problem is listed at once', async () => {
    const res = await w.call('POST', '/api/v1/merchandise', { merchant_identifier: w.merchant.identifier, is_active: '5' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['currency', 'is_active', 'merchandise_identifier', 'price_service', 'price_user', 'title']);
    // More problems than one validator call lists: every one is still reported, nested ones dotted.
    const many = await w.call('POST', '/api/v1/merchandise', {
      merchant_identifier: 'x'.repeat(256),
      title: { xx_XX: 'a', ru_RU: 'x'.repeat(1025) },
      is_active: '5',
      is_percentage: 'yes',
      currency: 'KZT',
      price_user: '1.005',
      price_service: 'ten',
      url: 'javascript:alert(1)',
      img_url: 'ftp://a.example/i.png',
      end_at_ts: '-5',
    });
    assert.equal(many.statusCode, 400);
    const errors = many.json().errors as Record<string, string[]>;
    assert.deepEqual(Object.keys(errors).sort(), [
      'currency', 'end_at_ts', 'img_url', 'is_active', 'is_percentage', 'merchandise_identifier', 'merchant_identifier',
      'price_service', 'price_user', 'title.en_US', 'title.ru_RU', 'title.xx_XX', 'url',
    ]);
    assert.deepEqual(errors.price_user, ['The price_user field must have at most two decimal places.']);
    assert.deepEqual(errors.url, ['The url field must be a valid http or https URL.']);
    assert.deepEqual(errors['title.en_US'], ['The title.en_US field is required.']);
    assert.match(errors['title.xx_XX']![0]!, /xx_XX is not accepted.*en_US/);
  });

  test('JSON numbers are accepted for text fields and numeric text for number fields; null clears like an empty string', async () => {
    const created = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { merchandise_identifier: 123456, price_user: 5.5, price_service: '0.10', url: 'https://a.example/x' }), { encoding: 'json' });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().data.identifier, '123456');
    assert.equal(created.json().data.price_service, 0.1);
    const cleared = await w.call('PUT', `/api/v1/merchandise/${created.json().data.id}`, { url: null }, { encoding: 'json' });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json().data.url, null);
  });

  test('a bad signature is refused before the body is validated', async () => {
    const res = await w.call('POST', '/api/v1/merchandise', { is_active: '5', signature: 'f'.repeat(64) });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: 'Invalid signature.' });
  });
});

describe('end_at', () => {
  test('once end_at has passed the merchandise is inactive in every response', async () => {
    // Seconds of margin: on a loaded machine the create itself can take longer than one second.
    const soon = Math.floor(Date.now() / 1000) + 3;
    const created = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { end_at_ts: String(soon) }));
    assert.equal(created.statusCode, 201);
    assert.equal(created.json().data.is_active, 1);
    assert.equal(created.json().data.end_at, new Date(soon * 1000).toISOString().slice(0, 19).replace('T', ' '));
    await new Promise((r) => setTimeout(r, 1100 + (soon * 1000 - Date.now())));
    const updated = await w.call('PUT', `/api/v1/merchandise/${created.json().data.id}`, { is_active: '1' });
    assert.equal(updated.json().data.is_active, 0);
    const past = await w.call('POST', '/api/v1/merchandise', merchandiseParams(w, { end_at_ts: '1000000000' }));
    assert.equal(past.json().data.is_active, 0);
    assert.equal(past.json().data.end_at, '2001-09-09 01:46:40');
  });
});

describe('hostile nesting on signed routes (issue 9)', () => {
  test('a JSON body nested 100 000 deep is a 400 in the compatibility.md §1 shape, not a crash', async () => {
    const deep = '['.repeat(100_000) + '"x"' + ']'.repeat(100_000);
    for (const url of ['/api/v1/merchandise', '/api/v1/merchandise_sale']) {
      const res = await w.t.app.inject({
        method: 'POST',
        url,
        payload: `{"merchant_identifier":"${w.merchant.identifier}","title":${deep},"signature":"${'0'.repeat(64)}"}`,
        headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
      });
      // Refused by the signature path (on `title`) or, where the body parser caps nesting, earlier.
      assert.equal(res.statusCode, 400, res.body);
      const { message, errors } = res.json() as { message: string; errors: Record<string, string[]> };
      assert.equal(message, Object.values(errors)[0]![0]);
    }
  });

  test('more values than a signed request may carry is a 400', async () => {
    const res = await w.call('POST', '/api/v1/merchandise', { ...merchandiseParams(w), extra: Array.from({ length: 1000 }, (_, i) => String(i)) }, { encoding: 'json' });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().errors.body[0], /more than 1000 parameters/);
  });
});

test('a JSON `__proto__` key is refused by the body parser, whatever the content type', async () => {
  // application/json and JSON sent as text/plain share one parser (src/http/body-parsers.ts).
  const { title: _title, ...rest } = merchandiseParams(w);
  const text = JSON.stringify(rest).replace(/^\{/, '{"title":{"__proto__":{"en_US":"From the prototype"}},');
  const values = JSON.parse(text) as Params;
  const payload = text.replace(/\}$/, `,"signature":"${jsSignature(values, w.secret)}"}`);
  for (const type of ['text/plain', 'application/json']) {
    const res = await w.t.app.inject({ method: 'POST', url: '/api/v1/merchandise', payload, headers: { authorization: `Bearer ${w.token}`, 'content-type': type } });
    assert.equal(res.statusCode, 400, res.body);
    assert.match((res.json().errors as Record<string, string[]>).body![0]!, /__proto__/, type);
  }
});
