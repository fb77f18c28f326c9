import { sql, type Kysely } from 'kysely';
import { dialectOf, withId } from '../dialect.js';

/**
 * Alert media and the look of an alert (issue 15).
 *
 * alert_media: files a streamer uploaded for their alerts (image, GIF, WebM, sound), stored in the
 * database rather than under DATA_DIR: every node of a PostgreSQL deployment serves the same
 * files, and backups, `pg_dump` and restores carry them with the variations that use them. One row
 * per distinct content per streamer (`sha256`); the bytes never change, so URLs naming the hash
 * are cached forever.
 *
 * alert_variations gains where its image and sound come from (`*_source`: none, the bundled
 * default, an http(s) URL, or an upload), the sound volume, enter/exit animations, font, colours,
 * and text-to-speech settings. Existing rows keep what they showed: a stored URL becomes source
 * `url`.
 *
 * Streamers with no variation at all get the default donation and merchandise-sale variations a
 * new account gets (bundled image and sound, enabled): before this, such an account showed no
 * alert at all until its streamer found the settings page. A streamer with any variation has
 * configured the widget and keeps exactly what they chose. Names and templates below are the
 * catalog texts of each language at the time of this migration, frozen with it.
 */
const DEFAULTS: Record<string, { donation: [string, string]; sale: [string, string] }> = {
  be_BY: { donation: ["Donations", "{username} данаціць {money}!"], sale: ["Merchandise sales", "{username} купляе мерч ({bought_amount} шт.) — {money}"] },
  de_DE: { donation: ["Donations", "{username} spendet {money}!"], sale: ["Merchandise sales", "{username} kauft Merch ({bought_amount} Stk.) — {money}"] },
  en_US: { donation: ["Donations", "{username} — {money}"], sale: ["Merchandise sales", "{username} bought {bought_amount} × merch — {money}"] },
  es_ES: { donation: ["Donations", "¡{username} dona {money}!"], sale: ["Merchandise sales", "{username} compra merch ({bought_amount} ud.) — {money}"] },
  es_US: { donation: ["Donations", "¡{username} dona {money}!"], sale: ["Merchandise sales", "{username} compra merch ({bought_amount} u.) — {money}"] },
  et_EE: { donation: ["Donations", "{username} annetab {money}!"], sale: ["Merchandise sales", "{username} ostab fänntooteid ({bought_amount} tk) — {money}"] },
  fr_FR: { donation: ["Donations", "{username} fait un don de {money} !"], sale: ["Merchandise sales", "{username} achète du merch ({bought_amount} ex.) — {money}"] },
  he_HE: { donation: ["Donations", "{username} תרם/ה {money}!"], sale: ["Merchandise sales", "{username} קנה/תה מרצ׳נדייז ({bought_amount} יח׳) — {money}"] },
  it_IT: { donation: ["Donations", "{username} dona {money}!"], sale: ["Merchandise sales", "{username} compra merch ({bought_amount} pz.) — {money}"] },
  ka_GE: { donation: ["Donations", "{username} გზავნის {money}-ს!"], sale: ["Merchandise sales", "{username} ყიდულობს მერჩს ({bought_amount} ც.) — {money}"] },
  kk_KZ: { donation: ["Donations", "{username} {money} донат жіберді!"], sale: ["Merchandise sales", "{username} мерч сатып алды ({bought_amount} дана) — {money}"] },
  ko_KR: { donation: ["Donations", "{username}님이 {money} 후원!"], sale: ["Merchandise sales", "{username}님이 굿즈 {bought_amount}개 구매 — {money}"] },
  lv_LV: { donation: ["Donations", "{username} ziedo {money}!"], sale: ["Merchandise sales", "{username} pērk atribūtiku ({bought_amount} gab.) — {money}"] },
  pl_PL: { donation: ["Donations", "{username} wysyła {money}!"], sale: ["Merchandise sales", "{username} kupuje merch ({bought_amount} szt.) — {money}"] },
  pt_BR: { donation: ["Donations", "{username} doou {money}!"], sale: ["Merchandise sales", "{username} comprou merch ({bought_amount} un.) — {money}"] },
  ru_RU: { donation: ["Донаты", "{username} донатит {money}!"], sale: ["Продажи мерча", "{username} покупает мерч ({bought_amount} шт.) — {money}"] },
  sv_SE: { donation: ["Donations", "{username} donerar {money}!"], sale: ["Merchandise sales", "{username} köper merch ({bought_amount} st.) — {money}"] },
  tr_TR: { donation: ["Donations", "{username} {money} bağışladı!"], sale: ["Merchandise sales", "{username} merch aldı ({bought_amount} adet) — {money}"] },
  uk_UA: { donation: ["Donations", "{username} донатить {money}!"], sale: ["Merchandise sales", "{username} купує мерч ({bought_amount} шт.) — {money}"] },
  zh_CN: { donation: ["Donations", "{username} 打赏了 {money}！"], sale: ["Merchandise sales", "{username} 购买了 {bought_amount} 件周边 — {money}"] },
};

export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db);
  await withId(db.schema.createTable('alert_media'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('byte_size', 'integer', (c) => c.notNull())
    .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('alert_media_user_id_sha256', ['user_id', 'sha256'])
    .execute();
  await db.schema.createIndex('alert_media_sha256').on('alert_media').column('sha256').execute();

  const add = (name: string, type: 'text' | 'integer' | 'bigint', value: string | number) =>
    db.schema.alterTable('alert_variations').addColumn(name, type, (c) => c.notNull().defaultTo(value)).execute();
  await add('image_source', 'text', 'none');
  await db.schema.alterTable('alert_variations').addColumn('image_media_id', 'bigint', (c) => c.references('alert_media.id').onDelete('set null')).execute();
  await add('sound_source', 'text', 'none');
  await db.schema.alterTable('alert_variations').addColumn('sound_media_id', 'bigint', (c) => c.references('alert_media.id').onDelete('set null')).execute();
  await add('sound_volume', 'integer', 80);
  await add('enter_animation', 'text', 'fade');
  await add('exit_animation', 'text', 'fade');
  await add('font_family', 'text', 'system');
  await add('font_size', 'integer', 28);
  await add('title_color', 'text', '#ffd54a');
  await add('message_color', 'text', '#ffffff');
  await add('tts_enabled', 'integer', 0);
  await add('tts_voice', 'text', '');
  await add('tts_rate', 'integer', 100);
  await add('tts_volume', 'integer', 100);
  await add('tts_min_amount', 'bigint', 0);
  await sql`update alert_variations set image_source = 'url' where image_url is not null`.execute(db);
  await sql`update alert_variations set sound_source = 'url' where sound_url is not null`.execute(db);

  const now = Date.now();
  const users = await db
    .selectFrom('users')
    .select(['id', 'language'])
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('alert_variations').select('alert_variations.id').whereRef('alert_variations.user_id', '=', 'users.id'))))
    .execute();
  for (const user of users as { id: number; language: string }[]) {
    const texts = DEFAULTS[user.language] ?? DEFAULTS.en_US!;
    const common = {
      user_id: user.id, min_amount: 0, duration_ms: 8000, layout: 'image-above-text', sound_url: null, image_url: null, enabled: 1,
      image_source: 'default', sound_source: 'default', created_at: now, updated_at: now,
    };
    await db.insertInto('alert_variations').values([
      { ...common, type: 'donation', name: texts.donation[0], text_template: texts.donation[1] },
      { ...common, type: 'merchandise-sale', name: texts.sale[0], text_template: texts.sale[1] },
    ]).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [
    'image_source', 'image_media_id', 'sound_source', 'sound_media_id', 'sound_volume', 'enter_animation', 'exit_animation', 'font_family',
    'font_size', 'title_color', 'message_color', 'tts_enabled', 'tts_voice', 'tts_rate', 'tts_volume', 'tts_min_amount',
  ]) {
    await db.schema.alterTable('alert_variations').dropColumn(column).execute();
  }
  await db.schema.dropTable('alert_media').execute();
}
