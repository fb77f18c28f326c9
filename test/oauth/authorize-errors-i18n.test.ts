import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, makeApp, makeUser, type TestApp } from '../helper.js';

/**
 * The authorization page's own refusals (unknown client, redirect_uri not registered, a malformed
 * parameter) are never redirected to the application, so the user reads them: in their language,
 * not in English marked lang="en".
 */
let t: TestApp;
let clientId: number;

before(async () => {
  t = await buildTestApp();
  const owner = await makeUser(t.database.db);
  clientId = (await makeApp(t, owner.id, ['https://client.example.test/a', 'https://client.example.test/b'])).app.client_id;
});
after(async () => t.close());

async function page(query: string, language: string): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}`, headers: { 'accept-language': language, accept: 'text/html' } });
  assert.equal(res.statusCode, 400, res.body);
  return res.body;
}

test('a Russian visitor reads the refusal in Russian; an English one in English', async () => {
  const cases: [string, string, string][] = [
    ['client_id=999999&response_type=code', 'Приложение с таким client_id не зарегистрировано.', 'No application is registered with this client_id.'],
    ['response_type=code', 'В запросе нет client_id', 'The request has no client_id'],
    [`client_id=${clientId}&response_type=code`, 'В запросе нет redirect_uri, а у приложения их зарегистрировано несколько', 'The request has no redirect_uri and this application registered several'],
    [`client_id=${clientId}&response_type=code&redirect_uri=https%3A%2F%2Fevil.example%2F`, 'Этот redirect_uri не зарегистрирован для приложения.', 'The redirect_uri is not registered for this application.'],
    [`client_id=${clientId}&client_id=2&response_type=code`, 'Приложение передало неверный параметр client_id', 'The client_id parameter is malformed'],
  ];
  for (const [query, russian, english] of cases) {
    const ru = await page(query, 'ru-RU,ru;q=0.9');
    assert.ok(ru.includes(russian), `${query}: ${ru}`);
    assert.ok(!ru.includes(english), `${query}: no English on the Russian page`);
    assert.doesNotMatch(ru, /class="error" lang="en"/, 'not marked as English');
    const en = await page(query, 'en-US');
    assert.ok(en.includes(english), `${query}: ${en}`);
  }
});
