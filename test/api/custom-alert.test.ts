import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { makeApp, makeUser } from '../helper.js';
import { apiFixture, assertValidationError, json, type ApiFixture } from './helpers.js';

const URL_PATH = '/api/v1/custom_alert';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

export function multipart(parts: Array<{ name: string; value: string | Buffer; filename?: string }>) {
  const boundary = `----openalerts${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"\r\nContent-Type: application/octet-stream` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('POST /api/v1/custom_alert (spec 4.3)', () => {
  let f: ApiFixture;
  let n = 0;
  const uniqueId = () => `ext-${++n}`;
  before(async () => {
    f = await apiFixture();
  });
  after(() => f.close());

  const post = (payload: string | Buffer | object, headers: Record<string, string> = FORM, token?: string) =>
    f.t.app.inject({ method: 'POST', url: URL_PATH, headers: { ...f.auth(token), ...headers }, payload: payload as string });
  const counts = async () => {
    const db = f.t.database.db;
    const alerts = await db.selectFrom('custom_alerts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const events = await db.selectFrom('outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('channels', 'like', '%$widget:%').executeTakeFirstOrThrow();
    return { alerts: Number(alerts.n), events: Number(events.n) };
  };

  describe('accepted encodings (compatibility.md §1)', () => {
    const fields = { header: 'Thanks!', message: 'Big hype', is_shown: '0', image_url: 'https://cdn.example.com/a.png', sound_url: 'https://cdn.example.com/a.mp3' };
    const expectCreated = (res: Awaited<ReturnType<typeof post>>, externalId: string) => {
      assert.equal(res.statusCode, 201, res.body);
      const { data } = json(res);
      assert.deepEqual(Object.keys(data).sort(), ['created_at', 'external_id', 'header', 'id', 'image_url', 'is_shown', 'message', 'shown_at', 'sound_url']);
      assert.deepEqual({ ...data, id: 0, created_at: '' }, { id: 0, created_at: '', external_id: externalId, header: 'Thanks!', message: 'Big hype', is_shown: 0, image_url: fields.image_url, sound_url: fields.sound_url, shown_at: null });
      assert.match(data.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    };

    test('application/x-www-form-urlencoded', async () => {
      const id = uniqueId();
      expectCreated(await post(form({ ...fields, external_id: id })), id);
    });
    test('application/json, is_shown as a number', async () => {
      const id = uniqueId();
      expectCreated(await post(JSON.stringify({ ...fields, is_shown: 0, external_id: id }), JSON_TYPE), id);
    });
    test('multipart/form-data, a stray file part ignored', async () => {
      const id = uniqueId();
      const m = multipart([...Object.entries({ ...fields, external_id: id }).map(([name, value]) => ({ name, value })), { name: 'attachment', value: Buffer.from('GIF89a'), filename: 'x.gif' }]);
      expectCreated(await post(m.payload, m.headers), id);
    });
    test('JSON sent as text/plain, and a form sent as text/plain', async () => {
      const a = uniqueId();
      expectCreated(await post(JSON.stringify({ ...fields, external_id: a }), { 'content-type': 'text/plain' }), a);
      const b = uniqueId();
      expectCreated(await post(form({ ...fields, external_id: b }), { 'content-type': 'text/plain;charset=UTF-8' }), b);
    });
    test('unknown keys — bracketed or repeated — are ignored', async () => {
      const id = uniqueId();
      const body = `${form({ ...fields, external_id: id })}&extra[a]=1&extra[b][c]=2&tag=x&tag=y&scope[0]=z`;
      expectCreated(await post(body), id);
    });
    test('a known field in bracket notation or repeated is a 400 on that field', async () => {
      assertValidationError(await post('header[en_US]=Hi'), ['header']);
      assertValidationError(await post('message=a&message=b'), ['message']);
      assertValidationError(await post('is_shown[a]=1'), ['is_shown']);
      const m = multipart([{ name: 'header', value: 'a' }, { name: 'header', value: 'b' }]);
      assertValidationError(await post(m.payload, m.headers), ['header']);
    });
    test('an empty body, no body and a JSON null body create an alert with every field null', async () => {
      for (const [payload, headers] of [['', FORM], [undefined, {}], ['{}', JSON_TYPE], ['null', JSON_TYPE]] as const) {
        const res = await f.t.app.inject({ method: 'POST', url: URL_PATH, headers: { ...f.auth(), ...headers }, payload });
        assert.equal(res.statusCode, 201, res.body);
        const { data } = json(res);
        assert.deepEqual([data.external_id, data.header, data.message, data.image_url, data.sound_url, data.is_shown, data.shown_at], [null, null, null, null, null, 0, null]);
      }
    });
    test('a body that is not an object, or broken JSON, is a 400 JSON error', async () => {
      for (const [payload, type] of [['[1,2]', 'application/json'], ['"text"', 'application/json'], ['{"header":', 'application/json'], ['{"header":', 'text/plain']]) {
        const res = await post(payload, { 'content-type': type });
        assert.equal(res.statusCode, 400, payload);
        assert.equal(typeof json(res).message, 'string');
      }
    });
  });

  describe('every parameter: missing, empty, at the limit, too long, wrong type', () => {
    const LIMITS = { external_id: 32, header: 255, message: 300 } as const;
    for (const [field, limit] of Object.entries(LIMITS)) {
      test(field, async () => {
        const value = (s: string) => (field === 'external_id' ? `${uniqueId()}-`.slice(0, 0) + s : s);
        // Missing and empty (form "" and JSON null) mean none.
        for (const body of [form({ header: 'h' }), form({ [field]: '' })]) {
          const res = await post(field === 'header' && body.startsWith('header=h') ? form({ message: 'm' }) : body);
          assert.equal(res.statusCode, 201, res.body);
          assert.equal(json(res).data[field], null);
        }
        const nullRes = await post(JSON.stringify({ [field]: null }), JSON_TYPE);
        assert.equal(json(nullRes).data[field], null);
        // At the limit, counted in characters (code points), not bytes or UTF-16 units.
        const atLimit = field === 'external_id' ? `${'é'.repeat(limit - 6)}${String(++n).padStart(6, '0')}` : '😀'.repeat(limit);
        const ok = await post(form({ [field]: value(atLimit) }));
        assert.equal(ok.statusCode, 201, ok.body);
        assert.equal(json(ok).data[field], atLimit);
        // One over.
        const errors = assertValidationError(await post(form({ [field]: 'x'.repeat(limit + 1) })), [field]);
        assert.deepEqual(errors[field], [`The ${field} field must not be greater than ${limit} characters.`]);
        // Wrong JSON types (numbers and booleans are taken as their text, as form fields would carry them).
        for (const wrong of [{ a: 1 }, [1, 2], [[]]]) {
          assertValidationError(await post(JSON.stringify({ [field]: wrong }), JSON_TYPE), [field]);
        }
      });
    }

    test('is_shown: 0/1 as text, number or boolean; default 0; anything else is a 400', async () => {
      for (const [body, type, expected] of [
        [form({}), FORM, 0],
        [form({ is_shown: '' }), FORM, 0],
        [form({ is_shown: '0' }), FORM, 0],
        [form({ is_shown: '1' }), FORM, 1],
        ['{"is_shown":1}', JSON_TYPE, 1],
        ['{"is_shown":"1"}', JSON_TYPE, 1],
        ['{"is_shown":true}', JSON_TYPE, 1],
        ['{"is_shown":null}', JSON_TYPE, 0],
      ] as const) {
        const res = await post(body, type);
        assert.equal(res.statusCode, 201, `${body}: ${res.body}`);
        const { data } = json(res);
        assert.equal(data.is_shown, expected, body);
        // Spec §3: shown_at is null while is_shown is 0.
        if (expected) assert.match(data.shown_at, /^\d{4}-/);
        else assert.equal(data.shown_at, null);
      }
      for (const [body, type] of [
        [form({ is_shown: '2' }), FORM],
        [form({ is_shown: '-1' }), FORM],
        [form({ is_shown: 'yes' }), FORM],
        [form({ is_shown: '0.5' }), FORM],
        [form({ is_shown: '１' }), FORM],
        ['{"is_shown":1.5}', JSON_TYPE],
        ['{"is_shown":[0,1]}', JSON_TYPE],
        ['{"is_shown":{"a":1}}', JSON_TYPE],
      ] as const) {
        assertValidationError(await post(body, type), ['is_shown']);
      }
    });

    for (const field of ['image_url', 'sound_url'] as const) {
      test(`${field}: real http(s) URLs only, at most 255 characters`, async () => {
        const good = [
          'https://cdn.example.com/alerts/a.png?v=2#top',
          'http://127.0.0.1:8080/sound.mp3',
          'http://[::1]/sound.mp3',
          'https://☃.net/snow.gif',
          'HTTPS://EXAMPLE.COM/A.PNG',
          'http://localhost/a.png',
          `https://example.com/${'a'.repeat(255 - 'https://example.com/'.length)}`,
        ];
        for (const value of good) {
          const res = await post(form({ [field]: value }));
          assert.equal(res.statusCode, 201, `${value}: ${res.body}`);
          assert.equal(json(res).data[field], value, 'stored as sent');
        }
        const bad = [
          'example.com/a.png',
          '//example.com/a.png',
          'ftp://example.com/a.png',
          'javascript:alert(1)',
          'data:image/png;base64,AAAA',
          'http://',
          'https:///a.png',
          'http:example.com',
          'http:\\\\example.com\\a.png',
          'https://exa mple.com/a.png',
          'https://example.com/a b.png',
          'https://example.com/\ta.png',
          'https://example.com/\u0000',
          'https://user:secret@example.com/a.png',
          'https://example..com/a.png',
          'https://-example.com/a.png',
          `https://${'a'.repeat(64)}.com/`,
          'https://example.com:99999/a.png',
          'https://exam<ple.com/',
          `https://example.com/${'a'.repeat(256 - 'https://example.com/'.length)}`,
        ];
        for (const value of bad) assertValidationError(await post(form({ [field]: value })), [field]);
        assertValidationError(await post(JSON.stringify({ [field]: 12345 }), JSON_TYPE), [field]);
        assertValidationError(await post(JSON.stringify({ [field]: ['https://example.com/a', 'https://example.com/b'] }), JSON_TYPE), [field]);
      });
    }

    test('every invalid field is reported at once', async () => {
      const errors = assertValidationError(
        await post(JSON.stringify({ external_id: 'x'.repeat(33), header: 'x'.repeat(256), message: 'x'.repeat(301), is_shown: 7, image_url: 'nope', sound_url: 'ftp://x/y' }), JSON_TYPE),
        ['external_id', 'header', 'message', 'is_shown', 'image_url', 'sound_url'],
      );
      assert.ok(Object.values(errors).every((list) => list.length >= 1));
    });

    test('invalid bytes never crash: undecodable percent-escapes stay literal, invalid UTF-8 becomes U+FFFD', async () => {
      const res = await post('header=%E0%A4%A&message=%ZZ');
      assert.equal(res.statusCode, 201);
      assert.equal(json(res).data.header, '%E0%A4%A');
      const bytes = await post(Buffer.concat([Buffer.from('header='), Buffer.from([0xff, 0xfe])]));
      assert.equal(bytes.statusCode, 201);
      assert.equal(json(bytes).data.header, '\uFFFD\uFFFD');
    });
  });

  describe('storage', () => {
    let before_: { alerts: number; events: number };
    beforeEach(async () => {
      before_ = await counts();
    });

    test('the alert and its widget event are written together', async () => {
      const res = await post(form({ external_id: uniqueId(), header: 'Hello', image_url: 'https://example.com/i.png' }));
      assert.equal(res.statusCode, 201);
      const { data } = json(res);
      const row = await f.t.database.db.selectFrom('custom_alerts').selectAll().where('id', '=', data.id).executeTakeFirstOrThrow();
      assert.equal(row.user_id, f.userId);
      assert.equal(row.client_id, f.clientId);
      const event = await f.t.database.db.selectFrom('outbox').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
      assert.equal(event.type, 'custom_alert.created');
      assert.deepEqual(JSON.parse(event.channels), [`$widget:alerts_${f.userId}`]);
      assert.deepEqual(JSON.parse(event.payload), { ...data, name: 'custom', reason: 'custom' });
      assert.deepEqual(await counts(), { alerts: before_.alerts + 1, events: before_.events + 1 });
    });

    test('a rejected request writes nothing', async () => {
      assertValidationError(await post(form({ header: 'x'.repeat(256) })), ['header']);
      assertValidationError(await post(form({ image_url: 'nope' })), ['image_url']);
      assert.equal((await post(form({ header: 'x' }), FORM, 'invalid')).statusCode, 401);
      assert.deepEqual(await counts(), before_);
    });

    test('a duplicate external_id is a 400 on external_id; other applications and streamers may reuse it', async () => {
      const id = uniqueId();
      assert.equal((await post(form({ external_id: id, header: 'first' }))).statusCode, 201);
      const dup = assertValidationError(await post(form({ external_id: id, header: 'second' })), ['external_id']);
      assert.deepEqual(dup.external_id, ['The external_id has already been taken.']);
      assert.deepEqual(await counts(), { alerts: before_.alerts + 1, events: before_.events + 1 });

      const { app: otherApp } = await makeApp(f.t, f.userId);
      const otherAppToken = await f.tokenWith(['oauth-custom_alert-store'], { clientId: otherApp.client_id });
      assert.equal((await post(form({ external_id: id }), FORM, otherAppToken)).statusCode, 201);
      const otherUser = await makeUser(f.t.database.db);
      const otherUserToken = await f.tokenWith(['oauth-custom_alert-store'], { userId: otherUser.id });
      assert.equal((await post(form({ external_id: id }), FORM, otherUserToken)).statusCode, 201);
    });

    test('concurrent requests with one external_id: exactly one is created, the rest are 400s, never 500', async () => {
      const id = uniqueId();
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => post(form({ external_id: id, header: `racer ${i}` }))));
      const statuses = results.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [201, ...Array(9).fill(400)]);
      for (const r of results.filter((r) => r.statusCode === 400)) assertValidationError(r, ['external_id']);
      assert.deepEqual(await counts(), { alerts: before_.alerts + 1, events: before_.events + 1 });
    });
  });

  describe('oversized bodies: 413 with a JSON message, for every content type', () => {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const cases: Array<[string, () => { payload: string | Buffer; headers: Record<string, string> }]> = [
      ['application/json', () => ({ payload: JSON.stringify({ header: big }), headers: JSON_TYPE })],
      ['application/x-www-form-urlencoded', () => ({ payload: form({ header: big }), headers: FORM })],
      ['text/plain', () => ({ payload: JSON.stringify({ header: big }), headers: { 'content-type': 'text/plain' } })],
      ['application/octet-stream', () => ({ payload: big, headers: { 'content-type': 'application/octet-stream' } })],
      ['multipart/form-data (a big file)', () => multipart([{ name: 'header', value: 'x' }, { name: 'file', value: Buffer.alloc(2 * 1024 * 1024), filename: 'big.bin' }])],
      ['multipart/form-data (many fields)', () => multipart(Array.from({ length: 20 }, (_, i) => ({ name: `field${i}`, value: 'y'.repeat(60_000) })))],
    ];
    for (const [name, make] of cases) {
      test(name, async () => {
        const before = await counts();
        const { payload, headers } = make();
        const res = await post(payload, headers);
        assert.equal(res.statusCode, 413, res.body.slice(0, 200));
        assert.match(json(res).message, /too large/);
        assert.deepEqual(await counts(), before);
      });
    }
  });
});
