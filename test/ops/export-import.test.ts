import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Dialect } from '../../src/db/database.js';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { setPublicClient } from '../../src/oauth/clients.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { createPoll } from '../../src/modules/polls/polls.service.js';
import { DEFAULT_SETTINGS, saveModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { storeMedia } from '../../src/modules/media/media.service.js';
import { recordMilestone } from '../../src/modules/onboarding/onboarding.service.js';
import { savePaymentSetting } from '../../src/modules/payments/payment-settings.service.js';
import { readStreamerRows, type StreamerRows } from '../../src/ops/streamer-transfer.repository.js';
import { dialects, makeUser, openTestDatabase, tempDir, type TestDatabase } from '../helper.js';
import { runCli } from '../process.js';

const noStack = (stderr: string) => assert.equal(stderr.includes('    at '), false, `no stack trace: ${stderr}`);

/** A streamer with something in every exported table. */
async function populate(t: TestDatabase, key: Buffer): Promise<number> {
  const db = t.database.db;
  const user = await makeUser(db, { currency: 'EUR' });
  const { app } = await createApp(db, key, { ownerId: user.id, name: 'Overlay', redirectUris: ['https://overlay.example/cb', 'https://overlay.example/cb2'] });
  await createApp(db, key, { ownerId: user.id, name: 'Bot', redirectUris: ['https://bot.example/cb'] });
  await setPublicClient(db, app.client_id, true);
  await createGoal(db, user.id, { title: 'New camera', goalAmount: '500', startAmount: '20' });
  const poll = await createPoll(db, user.id, { title: 'Next game?', options: ['Chess', 'Go'], allowUserOptions: 1 });
  await createDonation(db, { userId: user.id, amount: '12.50', currency: 'USD', username: 'Ann', message: 'für dich ❤', payinSystem: 'Sandbox', pollOptionId: poll.options[1]!.id });
  // Moderation from here on: the rules, and what the stream was shown of the next donations.
  await saveModerationSettings(db, user.id, { ...DEFAULT_SETTINGS, bannedWords: ['vote'], approvalRequired: true });
  await createDonation(db, { userId: user.id, amount: '3', currency: 'EUR', username: 'Bo', message: '', payinSystem: 'Sandbox', pollOptionTitle: 'Poker' });
  await createDonation(db, { userId: user.id, amount: '1000', currency: 'RUB', username: 'Cy', message: 'no vote', payinSystem: 'Sandbox' });
  await widgetTokenFor(db, key, user.id);
  await db
    .insertInto('alert_variations')
    .values({ user_id: user.id, type: 'donation', name: 'Big', min_amount: 10000, duration_ms: 8000, layout: 'image-left', text_template: '{username} gave {amount}!', sound_url: null, image_url: 'https://img.example/a.gif', enabled: 1, created_at: Date.now(), updated_at: Date.now() })
    .execute();
  // Uploaded files, used by a variation (every byte value, so an encoding slip shows).
  const image = await storeMedia(db, user.id, Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)), 'image/png');
  const sound = await storeMedia(db, user.id, Buffer.from('RIFF....WAVEfmt '), 'audio/wav');
  await db
    .insertInto('alert_variations')
    .values({ user_id: user.id, type: 'donation', name: 'Uploaded', min_amount: 0, duration_ms: 5000, layout: 'image-above-text', text_template: '{username}', sound_url: null, image_url: null, enabled: 1, created_at: Date.now(), updated_at: Date.now(), image_source: 'upload', image_media_id: image, sound_source: 'upload', sound_media_id: sound })
    .execute();
  await savePaymentSetting(db, key, user.id, 'yoomoney', { enabled: true, credentials: { wallet: '4100111222333', notification_secret: 'yoo-secret' } });
  const donation = await db.selectFrom('donations').select('id').where('user_id', '=', user.id).orderBy('id').executeTakeFirstOrThrow();
  await db.insertInto('provider_payments').values({ provider: 'yoomoney', payment_id: `op-${user.id}`, user_id: user.id, pending_id: null, donation_id: donation.id, fingerprint: 'f', created_at: Date.now() }).execute();
  await recordMilestone(db, user.id, 'test_alert_sent');
  return user.id;
}

/**
 * Every row of the streamer with its own ids replaced by positions and every reference by the
 * position of what it points to: two databases holding the same streamer compare equal.
 */
function normalized(rows: StreamerRows, key: { decryptApp(sealed: string): string; decryptWidget(sealed: string): string }) {
  const pos = <T extends { id: number }>(list: T[]) => new Map(list.map((r, i) => [r.id, i]));
  const apps = pos(rows.apps);
  const polls = pos(rows.polls);
  const options = pos(rows.pollOptions);
  const { id: _u, ...user } = rows.user;
  return {
    user,
    apps: rows.apps.map(({ id: _id, owner_id: _o, secret_sealed, ...a }) => ({ ...a, secret: key.decryptApp(secret_sealed) })),
    publicClients: rows.publicClients.map(({ client_id, ...p }) => ({ ...p, app: apps.get(client_id) })),
    donations: rows.donations.map(({ id: _id, user_id: _x, poll_option_id, ...d }) => ({ ...d, option: poll_option_id === null ? null : options.get(poll_option_id) })),
    goals: rows.goals.map(({ id: _id, user_id: _x, ...g }) => g),
    polls: rows.polls.map(({ id: _id, user_id: _x, ...p }) => p),
    pollOptions: rows.pollOptions.map(({ id: _id, poll_id, ...o }) => ({ ...o, poll: polls.get(poll_id) })),
    widgetToken: rows.widgetToken && { token_hash: rows.widgetToken.token_hash, created_at: rows.widgetToken.created_at, token: key.decryptWidget(rows.widgetToken.token_sealed) },
    variations: rows.variations.map(({ id: _id, user_id: _x, image_media_id: _i, sound_media_id: _s, ...v }) => v),
    moderationSettings: rows.moderationSettings && (({ user_id: _x, ...m }) => m)(rows.moderationSettings),
    donationModeration: rows.donationModeration.map(({ donation_id, user_id: _x, ...m }) => ({ ...m, donation: pos(rows.donations).get(donation_id) })),
    media: rows.media.map(({ id: _id, user_id: _x, data, ...m }) => ({ ...m, data: Buffer.from(data).toString('hex') })),
    mediaOfVariations: rows.variations.map((v) => [v.image_media_id, v.sound_media_id].map((id) => (id === null ? null : pos(rows.media).get(id)))),
    paymentSettings: rows.paymentSettings.map(({ user_id: _x, credentials_sealed, ...p }) => ({ ...p, credentials: credentials_sealed && key.decryptApp(credentials_sealed) })),
    providerPayments: rows.providerPayments.map(({ id: _id, user_id: _x, pending_id: _p, donation_id, ...p }) => ({ ...p, donation: donation_id === null ? null : pos(rows.donations).get(donation_id) })),
    milestones: rows.milestones.map(({ user_id: _x, ...m }) => m),
  };
}

async function transfer(from: Dialect, to: Dialect) {
  const source = await openTestDatabase(from);
  const target = await openTestDatabase(to);
  const sourceEnv = { ...source.env, DATA_DIR: tempDir() };
  const targetEnv = { ...target.env, DATA_DIR: tempDir() };
  const { loadSecrets } = await import('../../src/config/secrets.js');
  const { decryptSecret } = await import('../../src/security/crypto.js');
  const keyOf = (env: Record<string, string>) => loadSecrets({ dataDir: env.DATA_DIR!, secretKey: null, realtimeTokenSecret: null }).encryptionKey;
  try {
    const sourceKey = keyOf(sourceEnv);
    const targetKey = keyOf(targetEnv);
    assert.notDeepEqual(sourceKey, targetKey, 'the instances have different keys');
    // Another streamer first, so ids differ between the instances.
    await makeUser(target.database.db);
    const userId = await populate(source, sourceKey);
    const file = path.join(tempDir(), 'streamer.json');

    const exported = await runCli(['export', '--user', String(userId), file], sourceEnv);
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(JSON.parse(exported.stdout).donations, 3);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'secrets inside: owner-only file');
    assert.match(exported.stderr, /keep it private/);

    const imported = await runCli(['import', file], targetEnv);
    assert.equal(imported.code, 0, imported.stderr);
    const result = JSON.parse(imported.stdout);
    assert.equal(result.previous_user_id, userId);
    assert.notEqual(result.user_id, userId);
    assert.equal(Object.keys(result.client_ids).length, 2);

    const before = normalized((await readStreamerRows(source.database.db, userId))!, {
      decryptApp: (s) => decryptSecret(sourceKey, s),
      decryptWidget: (s) => decryptSecret(sourceKey, s),
    });
    const after = normalized((await readStreamerRows(target.database.db, result.user_id))!, {
      decryptApp: (s) => decryptSecret(targetKey, s),
      decryptWidget: (s) => decryptSecret(targetKey, s),
    });
    assert.deepEqual(after, before, 'every row of the streamer arrived as it was');
    assert.equal(before.donations.length, 3);
    assert.equal(before.pollOptions.length, 3);
    assert.ok(before.donations.some((d) => d.option === 2), 'the vote for the donor-added option points at it');
    assert.equal(before.donationModeration.length, 2);
    assert.ok(before.donationModeration.some((m) => m.shown_message === 'no ****' && m.status === 'held'));
    assert.equal(before.media.length, 2);
    assert.ok(before.mediaOfVariations.some(([image, sound]) => image !== null && sound !== null), 'a variation uses both uploads');
    assert.equal(before.paymentSettings.length, 1);
    assert.match(before.paymentSettings[0]!.credentials!, /yoo-secret/);
    assert.equal(before.providerPayments.length, 1);
    assert.deepEqual(before.milestones.map((m) => m.milestone), ['test_alert_sent']);

    // Importing the same streamer twice is refused, and writes nothing.
    const usersBefore = await target.database.db.selectFrom('users').select('id').execute();
    const again = await runCli(['import', file], targetEnv);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already has a user with the e-mail .*; nothing was imported/);
    noStack(again.stderr);
    assert.equal((await target.database.db.selectFrom('users').select('id').execute()).length, usersBefore.length);
  } finally {
    await source.drop();
    await target.drop();
  }
}

describe('openalerts export / import', () => {
  for (const [from, to] of [['sqlite', 'postgres'], ['postgres', 'sqlite'], ['sqlite', 'sqlite']] as [Dialect, Dialect][]) {
    test(`a streamer moves from ${from} to ${to} with every row intact`, async (t) => {
      const available = await dialects();
      if (!available.includes(from) || !available.includes(to)) return t.skip('no PostgreSQL');
      await transfer(from, to);
    });
  }

  test('bad input: one line, non-zero exit, nothing written', async () => {
    const t = await openTestDatabase('sqlite');
    const env = { ...t.env, DATA_DIR: tempDir() };
    try {
      const dir = tempDir();
      const notJson = path.join(dir, 'x.json');
      fs.writeFileSync(notJson, '{ nope');
      const foreign = path.join(dir, 'foreign.json');
      fs.writeFileSync(foreign, JSON.stringify({ hello: 'world' }));
      const future = path.join(dir, 'future.json');
      fs.writeFileSync(future, JSON.stringify({ format: 'openalerts-streamer-export', version: 99 }));
      const broken = path.join(dir, 'broken.json');
      fs.writeFileSync(broken, JSON.stringify({ format: 'openalerts-streamer-export', version: 1, user: { id: 1, email: 'x@example.test' }, apps: 'nope' }));
      const cases: [string[], RegExp][] = [
        [['import', path.join(dir, 'missing.json')], /missing\.json does not exist/],
        [['import', dir], /is a folder/],
        [['import', notJson], /is not JSON/],
        [['import', foreign], /not an OpenAlerts streamer export/],
        [['import', future], /format version 99; this OpenAlerts reads version 1/],
        [['import', broken], /"apps" is not a list of rows/],
        [['export', '--user', 'nobody@example.test', path.join(dir, 'out.json')], /user|not found|exist/i],
        [['export', path.join(dir, 'out.json')], /required option '--user <user>' not specified/],
        [['import'], /missing required argument 'file'/],
      ];
      for (const [args, reason] of cases) {
        const res = await runCli(args, env);
        assert.equal(res.code, 1, `${args.join(' ')}: ${res.stdout}`);
        assert.match(res.stderr, reason, args.join(' '));
        noStack(res.stderr);
      }
      assert.equal(fs.existsSync(path.join(dir, 'out.json')), false);
      assert.equal((await t.database.db.selectFrom('users').select('id').execute()).length, 0);
      for (const command of ['export', 'import']) {
        const help = await runCli([command, '--help'], env);
        assert.equal(help.code, 0);
        assert.match(help.stdout, new RegExp(`Usage: openalerts ${command}`));
      }
    } finally {
      await t.drop();
    }
  });
});
