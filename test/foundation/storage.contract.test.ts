import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrateToLatest } from '../../src/db/migrate.js';
import { NotFoundError, ValidationError } from '../../src/domain/errors.js';
import { authenticate, createAccount, endSession, findUserByRef, sessionUser, startSession } from '../../src/modules/accounts/accounts.service.js';
import { appSecret, createApp, deleteApp, findApp, listOwnApps, rotateSecret } from '../../src/modules/apps/apps.service.js';
import { listRates, loadRates } from '../../src/modules/currencies/currencies.repository.js';
import { setRate } from '../../src/modules/currencies/currencies.service.js';
import { DEFAULT_RATES, DEFAULT_RATES_AS_OF } from '../../src/modules/currencies/default-rates.js';
import { pageOfDonations } from '../../src/modules/donations/donations.repository.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { randomBytes } from 'node:crypto';
import { dialects, makeUser, openTestDatabase, type TestDatabase } from '../helper.js';
import { Revocations } from '../../src/security/revocations.js';

const KEY = randomBytes(32);

// The same contract on every dialect the service supports (architecture.md convention 7).
for (const dialect of await dialects()) {
  describe(`storage contract on ${dialect}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await openTestDatabase(dialect);
    });
    after(async () => t.drop());

    test('migrations are idempotent', async () => {
      const again = await migrateToLatest(t.database.db);
      assert.deepEqual(again, []);
    });

    test('a fresh database holds the shipped default rates (migration 0001 seeds a frozen copy of them)', async () => {
      const rows = await listRates(t.database.db);
      assert.deepEqual(
        Object.fromEntries(rows.map((r) => [r.currency, [Number(r.per_usd), r.as_of]])),
        Object.fromEntries(Object.entries(DEFAULT_RATES).map(([c, v]) => [c, [v, DEFAULT_RATES_AS_OF]])),
        'changing the runtime defaults needs a new migration, or existing and fresh databases disagree',
      );
    });

    test('the first account is the administrator, later ones streamers; every field persists', async () => {
      const db = t.database.db;
      const first = await createAccount(db, { email: ' First@Example.TEST ', password: 'correct horse battery', name: 'First Streamer', currency: 'EUR', language: 'de_DE' });
      const second = await createAccount(db, { email: 'second@example.test', password: 'correct horse battery', name: 'Second' });
      assert.equal(first.role, 'admin');
      assert.equal(second.role, 'streamer');
      assert.equal(first.email, 'first@example.test');
      assert.equal(first.code, 'first_streamer');
      assert.equal(first.currency, 'EUR');
      assert.equal(first.language, 'de_DE');
      assert.equal(second.currency, 'USD');
      assert.equal(second.language, 'en_US');
      assert.match(first.merchandise_promocode, /^[A-HJ-NP-Z2-9]{8}$/);
      assert.notEqual(first.merchandise_promocode, second.merchandise_promocode);
      assert.equal((await findUserByRef(db, first.id)).id, first.id);
      assert.equal((await findUserByRef(db, 'FIRST@example.test')).id, first.id);
      assert.equal((await findUserByRef(db, 'first_streamer')).id, first.id);
      await assert.rejects(findUserByRef(db, 'nobody'), NotFoundError);
    });

    test('taken e-mail, taken name (any case), weak password and bad fields are validation errors', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      const expectField = async (input: Parameters<typeof createAccount>[1], field: string) => {
        await assert.rejects(createAccount(db, input), (err: unknown) => err instanceof ValidationError && field in err.errors, `${field}: ${JSON.stringify(input)}`);
      };
      await expectField({ email: user.email.toUpperCase(), password: 'correct horse battery', name: 'Another One' }, 'email');
      await expectField({ email: 'other@example.test', password: 'correct horse battery', name: user.name.toUpperCase() }, 'name');
      await expectField({ email: 'weak@example.test', password: 'password', name: 'Weak Pass' }, 'password');
      await expectField({ email: 'short@example.test', password: 'abc', name: 'Short Pass' }, 'password');
      await expectField({ email: 'not-an-email', password: 'correct horse battery', name: 'Bad Mail' }, 'email');
      await expectField({ email: 'cur@example.test', password: 'correct horse battery', name: 'Bad Currency', currency: 'XXX' }, 'currency');
      await expectField({ email: 'lang@example.test', password: 'correct horse battery', name: 'Bad Lang', language: 'xx_XX' }, 'language');
      await expectField({ email: 'name@example.test', password: 'correct horse battery', name: '<script>' }, 'name');
    });

    test('same-named codes get a suffix; concurrent sign-ups never share a code', async () => {
      const db = t.database.db;
      const users = await Promise.all(['Twin.One', 'Twin-One', 'Twin_One'].map((name, i) => createAccount(db, { email: `twin${i}@example.test`, password: 'correct horse battery', name })));
      assert.equal(new Set(users.map((u) => u.code)).size, 3);
      for (const u of users) assert.match(u.code, /^twin_one(_\d{4})?$/);
    });

    test('passwords are checked with scrypt; sessions are stored hashed and end', async () => {
      const db = t.database.db;
      const user = await makeUser(db);
      assert.equal(user.password_hash.startsWith('scrypt$'), true);
      assert.equal((await authenticate(db, user.email, 'correct horse battery'))?.id, user.id);
      assert.equal(await authenticate(db, user.email, 'wrong password!'), null);
      assert.equal(await authenticate(db, 'nobody@example.test', 'correct horse battery'), null);
      const token = await startSession(db, user.id);
      const stored = await db.selectFrom('sessions').select('id_hash').where('user_id', '=', user.id).execute();
      assert.equal(stored.some((s) => s.id_hash === token), false);
      assert.equal((await sessionUser(db, token))?.id, user.id);
      await endSession(db, token);
      assert.equal(await sessionUser(db, token), undefined);
    });

    test('applications: secret sealed (not stored in plaintext), rotated, deleted', async () => {
      const db = t.database.db;
      const owner = await makeUser(db);
      const { app, clientSecret } = await createApp(db, KEY, { ownerId: owner.id, name: 'Bot', redirectUris: ['https://bot.example/cb', 'http://localhost:8080/cb'] });
      assert.ok(Number.isInteger(app.client_id));
      assert.deepEqual(app.redirect_uris, ['https://bot.example/cb', 'http://localhost:8080/cb']);
      const row = (await findApp(db, app.client_id))!;
      assert.equal(row.secret_sealed.includes(clientSecret), false);
      assert.equal(appSecret(KEY, row), clientSecret);
      const rotated = await rotateSecret(db, KEY, owner.id, app.client_id);
      assert.notEqual(rotated, clientSecret);
      assert.equal(appSecret(KEY, (await findApp(db, app.client_id))!), rotated);
      await assert.rejects(rotateSecret(db, KEY, owner.id + 999, app.client_id), NotFoundError);
      await assert.rejects(createApp(db, KEY, { ownerId: owner.id, name: 'x', redirectUris: ['https://a.example/cb#frag'] }), ValidationError);
      await assert.rejects(createApp(db, KEY, { ownerId: owner.id, name: 'x', redirectUris: ['javascript:alert(1)'] }), ValidationError);
      await assert.rejects(createApp(db, KEY, { ownerId: owner.id, name: '', redirectUris: [] }), ValidationError);
      assert.equal((await listOwnApps(db, owner.id)).length, 1);
      await deleteApp(db, new Revocations(), owner.id, app.client_id);
      assert.equal(await findApp(db, app.client_id), undefined);
    });

    test('a donation is stored with its conversion and its outbox event in one transaction', async () => {
      const db = t.database.db;
      const streamer = await makeUser(db, { currency: 'EUR' });
      await setRate(db, 'EUR', '0.9', '2026-11-01');
      const before = await db.selectFrom('outbox').select('id').execute();
      const donation = await createDonation(db, { userId: streamer.id, amount: '10.00', currency: 'USD', username: 'Donor', message: 'hi' });
      assert.equal(donation.amount, 10);
      assert.equal(donation.amount_in_user_currency, 9);
      assert.equal(donation.recipient_name, streamer.name);
      assert.equal(donation.is_shown, 0);
      assert.equal(donation.shown_at, null);
      assert.match(donation.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const events = await db.selectFrom('outbox').selectAll().where('id', 'not in', before.length ? before.map((b) => b.id) : [-1]).execute();
      assert.equal(events.length, 1, 'one event, fanned out to both channels');
      assert.equal(events[0]!.type, 'donation.created');
      assert.deepEqual(JSON.parse(events[0]!.channels), [`$alerts:donation_${streamer.id}`, `$widget:alerts_${streamer.id}`]);
      assert.deepEqual(JSON.parse(events[0]!.payload), { ...donation, reason: 'default' });
    });

    test('a rejected donation writes neither the donation nor an event', async () => {
      const db = t.database.db;
      const streamer = await makeUser(db);
      const count = async () => (await db.selectFrom('outbox').select('id').execute()).length + (await db.selectFrom('donations').select('id').execute()).length;
      const total = await count();
      for (const bad of [{ amount: '0' }, { amount: '1.234' }, { amount: '-5' }, { amount: 'ten' }, { currency: 'BYN' }, { message: 'x'.repeat(301) }]) {
        await assert.rejects(createDonation(db, { userId: streamer.id, amount: '5', currency: 'USD', ...bad }), ValidationError, JSON.stringify(bad));
      }
      await assert.rejects(createDonation(db, { userId: 999_999, amount: '5', currency: 'USD' }), NotFoundError);
      assert.equal(await count(), total);
    });

    test('donations page newest first with a total', async () => {
      const db = t.database.db;
      const streamer = await makeUser(db);
      for (let i = 1; i <= 5; i++) await createDonation(db, { userId: streamer.id, amount: String(i), currency: 'USD' });
      const page1 = (await pageOfDonations(db, streamer.id, 1, 2))!;
      const page3 = (await pageOfDonations(db, streamer.id, 3, 2))!;
      assert.equal(page1.stamp.total, 5);
      assert.deepEqual(page1.rows.map((r) => r.amount), [500, 400]);
      assert.deepEqual(page3.rows.map((r) => r.amount), [100]);
      const past = (await pageOfDonations(db, streamer.id, 4, 2))!;
      assert.deepEqual(past.rows, []);
      assert.equal(past.stamp.total, 5);
    });

    test('currency rates ship with defaults and can be changed', async () => {
      const db = t.database.db;
      const rates = await loadRates(db);
      for (const c of ['USD', 'EUR', 'RUB', 'BYN', 'KZT', 'UAH', 'BRL', 'TRY']) assert.ok(rates[c]! > 0, c);
      await setRate(db, 'KZT', 500.5, '2026-11-20');
      const kzt = (await listRates(db)).find((r) => r.currency === 'KZT')!;
      assert.equal(kzt.per_usd, 500.5);
      assert.equal(kzt.as_of, '2026-11-20');
      await assert.rejects(setRate(db, 'USD', 2), ValidationError);
      await assert.rejects(setRate(db, 'XYZ', 2), ValidationError);
      await assert.rejects(setRate(db, 'EUR', -1), ValidationError);
    });
  });
}
