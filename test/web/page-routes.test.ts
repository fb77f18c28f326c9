import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PAGE_MODULES, WIDGET_MODULE } from '../../src/web/pages/page-routes.js';
import type { BrowserSession } from '../browser-session.js';
import { streamer } from '../dashboard/helpers.js';
import { buildTestApp, tempDir, type TestApp } from '../helper.js';
import { runJsonScript } from '../process.js';

let t: TestApp;
let admin: BrowserSession;
before(async () => {
  t = await buildTestApp();
  admin = (await streamer(t, { admin: true })).browser;
});
after(() => t.close());

test('every lazily loaded page module handles exactly the routes of its table (a load checks it: a difference is a 500)', async () => {
  for (const pages of [...PAGE_MODULES, WIDGET_MODULE]) {
    const first = pages.routes(t.app).find((route) => route.method === 'GET');
    assert.ok(first, `${pages.name} has a page to open`);
    const res = await admin.get(first.url.replace(/:\w+/g, '1'));
    assert.ok(res.statusCode < 500, `${pages.name}: ${first.url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  }
});

/** The page modules (src/web/pages/**.pages.ts) a server process built as `serve` builds it has imported, after a GET of `askUrl` if given. */
function pageModulesLoaded(askUrl?: string): Promise<string[]> {
  return runJsonScript('test/web/page-modules.script.ts', { DATA_DIR: tempDir(), ...(askUrl ? { ASK_URL: askUrl } : {}) });
}

test('a start imports no page module; the first request to a page imports its group and not the others', async () => {
  // OAuth's consent page is the OAuth plugin's own, loaded with it.
  assert.deepEqual(await pageModulesLoaded(), ['consent.pages']);
  const afterLogin = await pageModulesLoaded('/login');
  assert.ok(afterLogin.includes('auth.pages') && afterLogin.includes('overview.pages'), `the browser pages load as one group: ${afterLogin.join(', ')}`);
  // (The widget settings page renders its preview with the widgets' module, so that one comes along.)
  assert.ok(!afterLogin.includes('donor.pages'), `the donor page is not in it: ${afterLogin.join(', ')}`);
  assert.deepEqual(await pageModulesLoaded('/r/nobody'), ['consent.pages', 'donor.pages']);
});
