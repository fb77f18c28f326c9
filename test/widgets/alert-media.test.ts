import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { createDatabase } from '../../src/db/database.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { isComplete } from '../../src/modules/media/containers.js';
import { createVariation, listVariations, updateVariation } from '../../src/modules/widgets/variations.service.js';
import { dialects, listen, PG_URL, postgresAdmin, tempDir } from '../helper.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';
import { widgetWorld, type WidgetWorld } from './fixture.js';
import { animatedGif, minimalWebm, SCRIPT_AS_GIF, SVG_WITH_SCRIPT, wavBeep } from './media-fixtures.js';

let w: WidgetWorld;
before(async () => {
  w = await widgetWorld();
});
after(() => w.t.close());

const base = { type: 'donation', name: 'Media', min_amount: '0', duration_ms: '4000', layout: 'image-above-text', text_template: '{username} — {money}', enabled: '1' };

async function mediaRows(userId: number) {
  return w.t.database.db.selectFrom('alert_media').select(['id', 'sha256', 'content_type', 'byte_size']).where('user_id', '=', userId).execute();
}

describe('out of the box', async () => {
  test('a new account has enabled donation and merchandise-sale variations with the bundled image and sound; no custom-alerts one', async () => {
    const streamer = await w.newStreamer({ language: 'ru_RU' });
    const list = await listVariations(w.t.database.db, streamer.id);
    assert.deepEqual(list.map((v) => [v.type, v.enabled, v.image_source, v.sound_source]).sort(), [['donation', 1, 'default', 'default'], ['merchandise-sale', 1, 'default', 'default']]);
    const donation = list.find((v) => v.type === 'donation')!;
    assert.equal(donation.name, 'Донаты');
    assert.equal(donation.text_template, '{username} донатит {money}!');
    assert.deepEqual(donation.image, { src: '/static/alert-default.svg', video: false });
    assert.equal(donation.sound, '/static/alert-default.wav');
    for (const [path, type] of [['/static/alert-default.svg', 'image/svg+xml'], ['/static/alert-default.wav', 'audio/wav']]) {
      const res = await w.t.app.inject({ method: 'GET', url: path! });
      assert.equal(res.statusCode, 200, path);
      assert.equal(res.headers['content-type'], type);
    }
  });

  for (const dialect of await dialects()) {
  test(`${dialect}: migration 0016 gives accounts without any variation the defaults, and leaves configured accounts alone`, async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    if (dialect === 'postgres') await postgresAdmin(`create schema ${schema}`);
    const database = dialect === 'sqlite' ? createDatabase({ dialect, file: `${tempDir()}/old.sqlite` }) : createDatabase({ dialect, url: PG_URL, schema });
    const db = database.db as Kysely<any>;
    try {
      await migrateTo(db, '0015_change_versions');
      const now = Date.now();
      const user = (name: string, language: string) => ({
        email: `${name}@example.test`, password_hash: 'x', code: name, name, name_key: name, avatar: null, language, currency: 'USD', is_active: 1,
        role: 'streamer', merchandise_promocode: name.toUpperCase().padEnd(8, 'X'), created_at: now, updated_at: now,
      });
      const fresh = await db.insertInto('users').values(user('fresh', 'ru_RU')).returning('id').executeTakeFirstOrThrow();
      const configured = await db.insertInto('users').values(user('configured', 'en_US')).returning('id').executeTakeFirstOrThrow();
      await db.insertInto('alert_variations').values({
        user_id: configured.id, type: 'custom', name: 'Mine', min_amount: 0, duration_ms: 3000, layout: 'text-only', text_template: '{header}',
        sound_url: 'https://cdn.example.test/a.mp3', image_url: null, enabled: 1, created_at: now, updated_at: now,
      }).execute();
      await migrateToLatest(db);
      const rows = await db.selectFrom('alert_variations').selectAll().orderBy('id').execute();
      const freshRows = rows.filter((r) => r.user_id === fresh.id);
      assert.deepEqual(freshRows.map((r) => [r.type, r.name, r.text_template, r.image_source, r.sound_source, r.enabled]), [
        ['donation', 'Донаты', '{username} донатит {money}!', 'default', 'default', 1],
        ['merchandise-sale', 'Продажи мерча', '{username} покупает мерч ({bought_amount} шт.) — {money}', 'default', 'default', 1],
      ]);
      const mine = rows.filter((r) => r.user_id === configured.id);
      assert.equal(mine.length, 1, 'a configured account keeps exactly its own variations');
      assert.equal(mine[0].sound_source, 'url', 'a stored URL becomes source url');
      assert.equal(mine[0].image_source, 'none');
    } finally {
      await database.close();
      if (dialect === 'postgres') await postgresAdmin(`drop schema ${schema} cascade`);
    }
  });
  }
});

describe('variation fields that would break the widget', () => {
  test('empty template, duration 0, negative volume and friends: 400 naming each field, in the service and the form', async () => {
    const streamer = await w.newStreamer();
    const db = w.t.database.db;
    await assert.rejects(
      createVariation(db, streamer.id, { type: 'donation', name: 'x', durationMs: '0', layout: 'text-only', textTemplate: ' ', soundVolume: '-1', fontSize: '0', titleColor: 'red', ttsRate: '1000', enterAnimation: 'spin' }),
      (err: any) => {
        assert.equal(err.status, 400);
        assert.deepEqual(Object.keys(err.errors).sort(), ['duration_ms', 'enter_animation', 'font_size', 'sound_volume', 'text_template', 'title_color', 'tts_rate']);
        return true;
      },
    );
    const s = await w.session(streamer);
    await s.get('/dashboard/widgets/variations/new');
    const res = await s.postMultipart('/dashboard/widgets/variations', { ...base, text_template: '', duration_ms: '0', sound_volume: '-5' });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /The text template field is required/);
    assert.match(res.body, /The duration \(milliseconds\) must be a whole number from 1000 to 60000/);
    assert.match(res.body, /The sound volume \(%\) must be a whole number from 0 to 100/);
    assert.equal((await listVariations(db, streamer.id)).length, 2, 'nothing stored');
  });
});

describe('uploads', () => {
  test('a GIF and a WAV: stored once, served from our origin with their type, ETag, immutable caching and nosniff; the widget gets their URLs', async () => {
    const streamer = await w.newStreamer();
    const s = await w.session(streamer);
    await s.get('/dashboard/widgets/variations/new');
    const gif = animatedGif();
    const wav = wavBeep();
    const res = await s.postMultipart('/dashboard/widgets/variations', { ...base, image_source: 'upload', sound_source: 'upload', sound_volume: '55' }, {
      // The names and claimed types are wrong on purpose: the content decides.
      image_file: { name: 'picture.png', data: gif, type: 'image/png' },
      sound_file: { name: 'sound.mp3', data: wav, type: 'audio/mpeg' },
    });
    assert.equal(res.statusCode, 303, res.body);
    const v = (await listVariations(w.t.database.db, streamer.id)).find((x) => x.name === 'Media')!;
    assert.match(v.image!.src, /^\/media\/[0-9a-f]{64}\.gif$/);
    assert.match(v.sound!, /^\/media\/[0-9a-f]{64}\.wav$/);
    assert.equal(v.sound_volume, 55);
    assert.deepEqual((await mediaRows(streamer.id)).map((r) => [r.content_type, r.byte_size]).sort(), [['audio/wav', wav.length], ['image/gif', gif.length]]);

    const image = await w.t.app.inject({ method: 'GET', url: v.image!.src });
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers['content-type'], 'image/gif');
    assert.equal(image.headers['x-content-type-options'], 'nosniff');
    assert.equal(image.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.ok(image.rawPayload.equals(gif));
    const etag = image.headers.etag as string;
    const again = await w.t.app.inject({ method: 'GET', url: v.image!.src, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal((await w.t.app.inject({ method: 'GET', url: v.sound! })).headers['content-type'], 'audio/wav');
    assert.equal((await w.t.app.inject({ method: 'GET', url: `/media/${'0'.repeat(64)}.gif` })).statusCode, 404);
    assert.equal((await w.t.app.inject({ method: 'GET', url: '/media/..%2Fsecret.key' })).statusCode, 404);

    const token = await w.widgetToken(streamer.id);
    const widget = await w.t.app.inject({ method: 'GET', url: `/widget/alerts?token=${token}` });
    assert.ok(widget.body.includes(v.image!.src));

    // Editing without a new file keeps the upload; switching to the default drops the unused files.
    await s.get(`/dashboard/widgets/variations/${v.id}`);
    const kept = await s.postMultipart(`/dashboard/widgets/variations/${v.id}`, { ...base, image_source: 'upload', sound_source: 'upload' });
    assert.equal(kept.statusCode, 303, kept.body);
    assert.equal((await mediaRows(streamer.id)).length, 2);
    await s.get(`/dashboard/widgets/variations/${v.id}`);
    const dropped = await s.postMultipart(`/dashboard/widgets/variations/${v.id}`, { ...base, image_source: 'default', sound_source: 'upload' });
    assert.equal(dropped.statusCode, 303, dropped.body);
    assert.deepEqual((await mediaRows(streamer.id)).map((r) => r.content_type), ['audio/wav']);
  });

  test('refused with a clear message and nothing stored: a script named .gif, an SVG with script, a truncated WebM, no file for an upload source', async () => {
    const streamer = await w.newStreamer();
    const s = await w.session(streamer);
    await s.get('/dashboard/widgets/variations/new');
    const cases: [Record<string, { name: string; data: Buffer; type?: string }>, Record<string, string>, RegExp][] = [
      [{ image_file: { name: 'cat.gif', data: SCRIPT_AS_GIF, type: 'image/gif' } }, { image_source: 'upload' }, /The image must be a PNG, JPEG, GIF, WebP or WebM file; its content decides, not its name/],
      [{ image_file: { name: 'logo.svg', data: SVG_WITH_SCRIPT, type: 'image/svg+xml' } }, { image_source: 'upload' }, /SVG images are not accepted \(they can contain scripts\)/],
      [{ image_file: { name: 'clip.webm', data: minimalWebm().subarray(0, 150), type: 'video/webm' } }, { image_source: 'upload' }, /The image file is incomplete \(a cut-off WEBM\); upload the whole file again/],
      [{ sound_file: { name: 'beep.wav', data: wavBeep().subarray(0, 3000), type: 'audio/wav' } }, { sound_source: 'upload' }, /The sound file is incomplete/],
      [{ sound_file: { name: 'beep.mp3', data: animatedGif(), type: 'audio/mpeg' } }, { sound_source: 'upload' }, /The sound must be a MP3, Ogg or WAV file \(it is image\/gif\)/],
      [{}, { image_source: 'upload' }, /Choose the image file to upload, or pick another image source/],
    ];
    for (const [files, fields, message] of cases) {
      const res = await s.postMultipart('/dashboard/widgets/variations', { ...base, ...fields }, files);
      assert.equal(res.statusCode, 400, String(message));
      assert.match(res.body, message);
      assert.ok(!res.body.includes('<script>alert'), 'the upload is never echoed');
    }
    assert.equal((await mediaRows(streamer.id)).length, 0);
    assert.equal((await listVariations(w.t.database.db, streamer.id)).length, 2);
    // A whole WebM is accepted as a video.
    const ok = await s.postMultipart('/dashboard/widgets/variations', { ...base, image_source: 'upload' }, { image_file: { name: 'clip.webm', data: minimalWebm() } });
    assert.equal(ok.statusCode, 303, ok.body);
    const v = (await listVariations(w.t.database.db, streamer.id)).find((x) => x.name === 'Media')!;
    assert.equal(v.image!.video, true);
  });

  test('a 1 GB upload is refused once past MEDIA_MAX_BYTES, without reading the rest; nothing stored', async () => {
    const streamer = await w.newStreamer();
    const s = await w.session(streamer);
    await s.get('/dashboard/widgets/variations/new');
    const url = await listen(w.t.app);
    const boundary = 'x-openalerts-test-boundary';
    const head = Buffer.from(
      Object.entries({ ...base, _csrf: s.lastCsrf!, image_source: 'upload' }).map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') +
        `--${boundary}\r\ncontent-disposition: form-data; name="image_file"; filename="huge.gif"\r\ncontent-type: image/gif\r\n\r\n`,
    );
    const total = 1024 ** 3;
    const chunk = Buffer.alloc(1024 * 1024, 0x47);
    let sent = 0;
    const result = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
      const req = http.request(`${url}/dashboard/widgets/variations`, {
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + total), accept: 'text/html',
          cookie: [...s.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => {
          resolve({ status: res.statusCode!, body, sent });
          req.destroy();
        });
      });
      req.on('error', (err) => (sent < total ? undefined : reject(err)));
      req.write(head);
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(result.status, 413, result.body);
    assert.match(result.body, /The file in image_file is larger than 8388608 bytes \(8\.0 MB\); choose a smaller file/);
    assert.ok(result.sent < total / 4, `answered after ${result.sent} of ${total} bytes`);
    assert.equal((await mediaRows(streamer.id)).length, 0);
  });
});

describe('settings reach open widgets', () => {
  test('every create, update and delete records widget.settings_changed with the full list, in the same transaction', async () => {
    const streamer = await w.newStreamer();
    const db = w.t.database.db;
    const v = await createVariation(db, streamer.id, { type: 'donation', name: 'Push', durationMs: '3000', layout: 'text-only', textTemplate: '{username}', enabled: '1' });
    await updateVariation(db, streamer.id, v.id, { type: 'donation', name: 'Pushed', durationMs: '3000', layout: 'text-only', textTemplate: '{username}', enabled: '1', fontFamily: 'serif' });
    const events = (await eventsOnChannel(db, `$widget:alerts_${streamer.id}`)).filter((r) => r.type === 'widget.settings_changed');
    assert.equal(events.length, 2);
    assert.equal(events[1]!.payload.event, 'settings_changed');
    const pushed = events[1]!.payload.variations.find((x: any) => x.id === v.id);
    assert.equal(pushed.name, 'Pushed');
    assert.equal(pushed.font_family, 'serif');
    assert.equal(events[1]!.payload.variations.length, 3);
  });
});

describe('containers', () => {
  test('whole files pass; every cut of them is refused', () => {
    for (const [container, data] of [['gif', animatedGif(24)], ['riff', wavBeep(0.05)], ['ebml', minimalWebm()]] as const) {
      assert.equal(isComplete(container, data), true, container);
      for (const cut of [1, 7, Math.floor(data.length / 2)]) assert.equal(isComplete(container, data.subarray(0, data.length - cut)), false, `${container} minus ${cut}`);
    }
  });
});

describe('storage on every dialect', async () => {
  for (const dialect of await dialects()) {
    test(`${dialect}: media bytes round-trip and are served`, async () => {
      const world = dialect === 'sqlite' ? w : await widgetWorld(dialect);
      try {
        const streamer = await world.newStreamer();
        const gif = animatedGif(16);
        const v = await createVariation(world.t.database.db, streamer.id, { ...{ type: 'donation', name: 'PG', durationMs: '3000', layout: 'image-left', textTemplate: '{username}' }, imageSource: 'upload', imageFile: { data: gif } });
        const res = await world.t.app.inject({ method: 'GET', url: v.image!.src });
        assert.equal(res.statusCode, 200);
        assert.ok(res.rawPayload.equals(gif));
      } finally {
        if (world !== w) await world.t.close();
      }
    });
  }
});
