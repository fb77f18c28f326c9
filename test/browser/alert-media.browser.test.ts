import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { listVariations } from '../../src/modules/widgets/variations.service.js';
import { listen } from '../helper.js';
import { PASSWORD, widgetWorld, type WidgetWorld } from '../widgets/fixture.js';
import { animatedGif, wavBeep } from '../widgets/media-fixtures.js';
import { ChromiumPages, chromiumMissing, screenshot } from './chromium.js';

const skip = chromiumMissing();

let w: WidgetWorld;
let base: string;
let chrome: ChromiumPages;

/**
 * Runs in every page before its scripts. Observes the browser APIs the widget uses, without
 * changing what they do except speech: each media play() and its outcome, each `ended`, and each
 * speechSynthesis.speak / cancel (speech is recorded, not voiced: headless Chromium has no voices).
 * A string, not a function: the test transpiler would wrap a function with helpers the page lacks.
 */
const OBSERVE = `(() => {
  window.__plays = [];
  window.__ended = [];
  window.__utterances = [];
  window.__cancels = 0;
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    const record = { src: this.currentSrc || this.src, tag: this.tagName, ok: null };
    window.__plays.push(record);
    this.addEventListener('ended', () => window.__ended.push(this.currentSrc || this.src), { once: true });
    const result = play.call(this);
    result.then(() => { record.ok = true; }, (err) => { record.ok = false; record.error = String(err && err.name); });
    return result;
  };
  if (window.speechSynthesis) {
    window.speechSynthesis.speak = (u) => window.__utterances.push({ text: u.text, rate: u.rate, volume: u.volume, lang: u.lang });
    window.speechSynthesis.cancel = () => { window.__cancels += 1; };
  }
})();`;

function newPage(viewport = { width: 900, height: 640 }): Promise<Page> {
  return chrome.newPage({ viewport }, OBSERVE);
}

async function logIn(email: string): Promise<Page> {
  const page = await newPage({ width: 1280, height: 900 });
  await page.goto(`${base}/login`);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', PASSWORD);
  await Promise.all([page.waitForURL(/\/dashboard/), page.click('main button[type="submit"]')]);
  return page;
}

async function openWidget(token: string): Promise<Page> {
  const page = await newPage();
  const res = await page.goto(`${base}/widget/alerts?token=${token}`);
  assert.equal(res?.status(), 200);
  await page.waitForSelector('body[data-state="live"]', { timeout: 10_000 });
  return page;
}

async function sceneShot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(600); // past the enter animation
  await page.evaluate(() => document.documentElement.style.setProperty('background', '#2d3b4e'));
  await screenshot(page, name, { fullPage: false });
}

const plays = (page: Page): Promise<{ src: string; tag: string; ok: boolean | null; error?: string }[]> => page.evaluate(() => (window as any).__plays.slice());

describe('alert media, speech and pushed settings in Chromium', { skip }, () => {
  before(async () => {
    w = await widgetWorld();
    base = await listen(w.t.app);
    // OBS plays sound without a click; so does this browser.
    chrome = await ChromiumPages.launch(['--autoplay-policy=no-user-gesture-required']);
  });
  afterEach(() => chrome.closePages());
  after(async () => {
    await chrome?.close();
    await w?.close();
  });

  test('a brand-new account (signed up in the browser) shows a donation with the bundled image and sound, no settings touched', async () => {
    const page = await newPage({ width: 1280, height: 900 });
    await page.goto(`${base}/signup`);
    await page.fill('input[name="email"]', 'fresh-streamer@example.test');
    await page.fill('input[name="name"]', 'Fresh Streamer');
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('main button[type="submit"]')]);
    const streamer = await w.t.database.db.selectFrom('users').selectAll().where('email', '=', 'fresh-streamer@example.test').executeTakeFirstOrThrow();
    await page.goto(`${base}/dashboard/widgets`);
    // Each variation's live preview is the widget itself, showing a test alert.
    assert.equal(await page.locator('iframe.variation-preview').count(), 2);
    await page.frameLocator('iframe.variation-preview').first().locator('.alert.visible img.alert-image').waitFor({ timeout: 10_000 });
    await page.waitForTimeout(600);
    await screenshot(page, 'alerts-out-of-the-box-settings');

    const widget = await openWidget(await w.widgetToken(streamer.id));
    const donation = await createDonation(w.t.database.db, { userId: streamer.id, username: 'First Fan', amount: '5', currency: 'USD', message: 'Good luck with the first stream!' });
    const card = await widget.waitForSelector(`[data-alert="donation:${donation.id}"].visible`, { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'First Fan — $5');
    assert.equal(await card.$eval('.alert-message', (el) => el.textContent), 'Good luck with the first stream!');
    await widget.waitForFunction(() => {
      const img = document.querySelector('.alert img.alert-image') as HTMLImageElement | null;
      return img && img.complete && img.naturalWidth > 0;
    }, undefined, { timeout: 5000 });
    assert.match(await card.$eval('img.alert-image', (el) => (el as HTMLImageElement).src), /\/static\/alert-default\.svg$/);
    await widget.waitForFunction(() => (window as any).__plays.some((p: any) => p.ok === true), undefined, { timeout: 5000 });
    const [sound] = await plays(widget);
    assert.match(sound!.src, /\/static\/alert-default\.wav$/);
    await widget.waitForTimeout(400); // the enter animation
    await sceneShot(widget, 'alerts-out-of-the-box-widget');
  });

  test('an uploaded GIF and sound: chosen in the form (live preview), saved, and playing in the widget on "Send test alert"', async () => {
    const streamer = await w.newStreamer();
    const widget = await openWidget(await w.widgetToken(streamer.id));
    const page = await logIn(streamer.email);
    const [donationVariation] = (await listVariations(w.t.database.db, streamer.id)).filter((v) => v.type === 'donation');
    await page.goto(`${base}/dashboard/widgets/variations/${donationVariation!.id}`);
    const preview = page.frameLocator('#variation-preview');
    await preview.locator('.alert.visible').waitFor({ timeout: 10_000 });

    await page.setInputFiles('input[name="image_file"]', { name: 'party.gif', mimeType: 'image/gif', buffer: animatedGif(96) });
    await page.setInputFiles('input[name="sound_file"]', { name: 'beep.wav', mimeType: 'audio/wav', buffer: wavBeep(0.6) });
    assert.equal(await page.isChecked('input[name="image_source"][value="upload"]'), true, 'choosing a file picks "uploaded file"');
    await page.fill('input[name="sound_volume"]', '60');
    await page.selectOption('select[name="enter_animation"]', 'zoom');
    await page.fill('input[name="title_color"]', '#ff66cc');
    // The preview shows the chosen, unsaved GIF.
    await preview.locator('img.alert-image[src^="blob:"]').waitFor({ timeout: 10_000 });
    await page.waitForTimeout(600);
    await screenshot(page, 'alerts-settings-preview-upload');
    await Promise.all([page.waitForURL(/done=saved/), page.click('.variation-form button[type="submit"]')]);

    const saved = (await listVariations(w.t.database.db, streamer.id)).find((v) => v.id === donationVariation!.id)!;
    assert.match(saved.image!.src, /^\/media\/[0-9a-f]{64}\.gif$/);
    assert.match(saved.sound!, /^\/media\/[0-9a-f]{64}\.wav$/);
    await widget.waitForFunction((id) => (window as any).OpenAlertsWidget.config.variations.some((v: any) => v.id === id && v.image && v.image.src.endsWith('.gif')), saved.id, { timeout: 10_000 });

    await Promise.all([page.waitForURL(/done=test/), page.click(`form[action="/dashboard/widgets/variations/${saved.id}/test"] button`)]);
    const card = await widget.waitForSelector('.alert.alert-donation.visible', { timeout: 10_000 });
    await widget.waitForFunction(() => {
      const img = document.querySelector('.alert img.alert-image') as HTMLImageElement | null;
      return img && img.complete && img.naturalWidth === 96;
    }, undefined, { timeout: 5000 });
    assert.equal(await card.$eval('img.alert-image', (el) => new URL((el as HTMLImageElement).src).pathname), saved.image!.src);
    assert.equal(await card.$eval('.alert-title', (el) => getComputedStyle(el).color), 'rgb(255, 102, 204)');
    assert.ok((await card.getAttribute('class'))!.includes('enter-zoom'));
    await widget.waitForFunction((src) => (window as any).__ended.some((s: string) => s.endsWith(src)), saved.sound!, { timeout: 8000 });
    const played = (await plays(widget)).find((p) => p.src.endsWith(saved.sound!))!;
    assert.equal(played.ok, true, 'the uploaded sound played');
    assert.equal(await widget.evaluate(() => (document.querySelector('audio') ? 'in DOM' : 'detached')), 'detached');
    await sceneShot(widget, 'alerts-uploaded-gif-widget');
  });

  test('text to speech: after the sound, only the message text without links or tags, cancelled at the alert’s end', async () => {
    const streamer = await w.newStreamer();
    const db = w.t.database.db;
    const [v] = (await listVariations(db, streamer.id)).filter((x) => x.type === 'donation');
    const page = await logIn(streamer.email);
    await page.goto(`${base}/dashboard/widgets/variations/${v!.id}`);
    await page.check('input[name="tts_enabled"]');
    await page.fill('input[name="tts_rate"]', '120');
    await page.fill('input[name="tts_volume"]', '70');
    await page.fill('input[name="tts_min_amount"]', '3');
    await page.fill('input[name="duration_ms"]', '4000');
    await Promise.all([page.waitForURL(/done=saved/), page.click('.variation-form button[type="submit"]')]);

    const widget = await openWidget(await w.widgetToken(streamer.id));
    const small = await createDonation(db, { userId: streamer.id, username: 'Small', amount: '1', currency: 'USD', message: 'too small to be read' });
    const big = await createDonation(db, { userId: streamer.id, username: 'Big', amount: '10', currency: 'USD', message: 'Hello chat <b>bold</b> see https://evil.example/path?q=1 and www.spam.example!' });
    await widget.waitForSelector(`[data-alert="donation:${small.id}"].visible`, { timeout: 10_000 });
    const card = await widget.waitForSelector(`[data-alert="donation:${big.id}"].visible`, { timeout: 15_000 });
    assert.equal(await card.$eval('.alert-message', (el) => el.textContent), 'Hello chat <b>bold</b> see https://evil.example/path?q=1 and www.spam.example!', 'shown as text');
    await widget.waitForFunction(() => (window as any).__utterances.length > 0, undefined, { timeout: 8000 });
    // SpeechSynthesisUtterance keeps rate and volume as float32.
    const utterances = (await widget.evaluate(() => (window as any).__utterances)).map((u: any) => ({ ...u, rate: +u.rate.toFixed(3), volume: +u.volume.toFixed(3) }));
    assert.deepEqual(utterances, [{ text: 'Hello chat bold see and', rate: 1.2, volume: 0.7, lang: 'en-US' }], 'the small donation is not read; the big one without links or tags');
    // Speech began after the alert sound finished.
    assert.ok(await widget.evaluate(() => (window as any).__ended.length >= 2));
    await widget.waitForFunction(() => (window as any).__cancels > 0, undefined, { timeout: 8000 });
    await sceneShot(widget, 'alerts-tts-widget');
  });

  test('a variation change reaches an open widget without a reload', async () => {
    const streamer = await w.newStreamer();
    const db = w.t.database.db;
    const widget = await openWidget(await w.widgetToken(streamer.id));
    await widget.evaluate(() => { (window as any).__sameDocument = true; });
    const [v] = (await listVariations(db, streamer.id)).filter((x) => x.type === 'donation');
    const page = await logIn(streamer.email);
    await page.goto(`${base}/dashboard/widgets/variations/${v!.id}`);
    await page.fill('input[name="text_template"]', 'NEW LOOK: {username} gave {money}');
    await page.selectOption('select[name="layout"]', 'text-only');
    await page.selectOption('select[name="font_family"]', 'monospace');
    await Promise.all([page.waitForURL(/done=saved/), page.click('.variation-form button[type="submit"]')]);
    await widget.waitForFunction(() => (window as any).OpenAlertsWidget.variationsChanged > 0, undefined, { timeout: 10_000 });

    const donation = await createDonation(db, { userId: streamer.id, username: 'Pat', amount: '2', currency: 'USD' });
    const card = await widget.waitForSelector(`[data-alert="donation:${donation.id}"].visible`, { timeout: 10_000 });
    assert.equal(await card.$eval('.alert-title', (el) => el.textContent), 'NEW LOOK: Pat gave $2');
    assert.match(await card.evaluate((el) => getComputedStyle(el).fontFamily), /monospace|Consolas|DejaVu Sans Mono/);
    assert.equal(await card.$('img'), null, 'text-only layout');
    assert.equal(await widget.evaluate(() => (window as any).__sameDocument), true, 'no reload');
    await sceneShot(widget, 'alerts-pushed-settings-widget');
  });

  test('widget pages answer /favicon.ico and link an icon; nothing broke the CSP', async () => {
    const res = await fetch(`${base}/favicon.ico`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/svg+xml');
    const streamer = await w.newStreamer();
    const widget = await openWidget(await w.widgetToken(streamer.id));
    assert.equal(await widget.getAttribute('link[rel="icon"]', 'href'), '/static/favicon.svg');
    assert.deepEqual(chrome.problems(), []);
  });
});
