import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { IntlMessageFormat } from 'intl-messageformat';
import { ConflictError, englishText, msg, NotFoundError, ValidationError, type Message } from '../../src/domain/errors.js';
import en_US, { type MessageKey } from '../../src/i18n/catalogs/en_US.js';
import ru_RU from '../../src/i18n/catalogs/ru_RU.js';
import type { ErrorCode } from '../../src/i18n/messages.js';
import { translator } from '../../src/i18n/translator.js';
import { alwaysJson, errorHandler } from '../../src/http/error-handler.js';
import { urlMessage } from '../../src/modules/custom-alerts/custom-alerts.service.js';
import { serverErrorPage } from '../../src/web/layout.js';
import { fieldErrorTexts } from '../../src/web/error-text.js';
import { apiFixture, json, type ApiFixture } from '../api/helpers.js';

/**
 * Errors services throw carry a catalog code: the API answers the English text of the code (the
 * same bytes it always answered), pages the text in their own language — one source, no drift.
 */
const CODES = (Object.keys(en_US) as MessageKey[]).filter((k): k is ErrorCode => k.startsWith('err.'));

/** Sample arguments for a message, from the library's own parse: numbers where ICU formats numbers. */
function sampleParams(source: string): Record<string, string | number> {
  const values: Record<string, string | number> = {};
  const walk = (elements: any[]) => {
    for (const el of elements) {
      if (typeof el.value === 'string' && [1, 2, 3, 4, 5, 6].includes(el.type)) {
        // 2 number, 6 plural: numbers; 5 select: its first option; 1 argument: a recognisable text.
        values[el.value] ??= el.type === 2 || el.type === 6 ? 7 : el.type === 5 ? Object.keys(el.options)[0]! : `«${el.value}»`;
      }
      if (el.options) for (const option of Object.values<any>(el.options)) walk(option.value);
      if (el.children) walk(el.children);
    }
  };
  walk(new IntlMessageFormat(source, 'en-US', undefined, { ignoreTag: true }).getAst());
  return values;
}

/** The app's own error handler on one route that throws what it is told to. */
async function throwingApp(make: () => Error) {
  const app = Fastify();
  app.setErrorHandler(errorHandler(alwaysJson));
  app.get('/boom', async () => {
    throw make();
  });
  await app.ready();
  return app;
}

describe('error messages: one catalog for the API and the pages', () => {
  test('the catalog has error codes, and each has Russian of its own', () => {
    assert.ok(CODES.length > 150, `${CODES.length} codes`);
    const copies = CODES.filter((code) => ru_RU[code] === en_US[code]);
    assert.deepEqual(copies, [], 'Russian text that is the English one');
  });

  test('every code is thrown somewhere in src (no dead or misspelt codes)', () => {
    const sources: string[] = [];
    const read = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!file.endsWith(path.join('i18n', 'catalogs'))) read(file);
        } else if (file.endsWith('.ts')) sources.push(fs.readFileSync(file, 'utf8'));
      }
    };
    read(path.resolve('src'));
    const all = sources.join('\n');
    const unused = CODES.filter((code) => !all.includes(`'${code}'`));
    assert.deepEqual(unused, [], 'codes no source file uses');
  });

  test('for every code, the API answers exactly the English catalog text (message and field errors)', async () => {
    let current: Message = msg('err.invalid');
    let asField = false;
    const app = await throwingApp(() => (asField ? ValidationError.field('field', current) : new ConflictError(current)));
    try {
      for (const code of CODES) {
        const params = sampleParams(en_US[code]);
        current = { code, params };
        const expected = new IntlMessageFormat(en_US[code], 'en-US', undefined, { ignoreTag: true }).format(params) as string;
        assert.ok(!expected.includes(code), code);
        asField = false;
        const conflict = await app.inject({ method: 'GET', url: '/boom' });
        assert.equal(conflict.statusCode, 409);
        assert.deepEqual(conflict.json(), { message: expected }, code);
        asField = true;
        const invalid = await app.inject({ method: 'GET', url: '/boom' });
        assert.equal(invalid.statusCode, 400);
        assert.deepEqual(invalid.json(), { message: expected, errors: { field: [expected] } }, code);
        // …and a Russian page says the same code in Russian.
        assert.equal(fieldErrorTexts((await translator('ru_RU')), ValidationError.field('field', current)).field![0], (await translator('ru_RU')).t(code, params as Record<string, string | number>), code);
      }
    } finally {
      await app.close();
    }
  });

  test('numbers in API texts stay as the API always wrote them (no grouping)', async () => {
    assert.equal(englishText(msg('err.field.max_chars', { field: 'message', max: 10000 })), 'The message field must not be greater than 10000 characters.');
    assert.equal(englishText(msg('err.field.type', { field: 'amount', type: 'object' })), 'The amount field must be a object.');
    assert.equal(englishText(msg('err.field.type', { field: 'ids', type: 'array' })), 'The ids field must be an array.');
    // A label given as a message is said in the reader's language; in English it is the API's word.
    const amount = msg('err.amount.decimals', { label: msg('err.label.goal_amount') });
    assert.equal(englishText(amount), 'The goal_amount must have at most two decimal places.');
    assert.equal(fieldErrorTexts((await translator('ru_RU')), ValidationError.field('goal_amount', amount)).goal_amount![0], 'В поле «нужная сумма» не больше двух знаков после запятой.');
    // A locale without its own translation of a code says it in English, per string.
    assert.equal(fieldErrorTexts((await translator('de_DE')), ValidationError.field('goal_amount', amount)).goal_amount![0], englishText(amount));
  });

  test('an error page says a service’s message in the page’s language, else explains the status', async () => {
    const goal = new NotFoundError(msg('err.goal.not_found'));
    const ru = serverErrorPage(404, goal.message, (await translator('ru_RU')), goal.detail);
    assert.match(ru, /Такой цели нет\./);
    assert.doesNotMatch(ru, /This goal does not exist/);
    const de = serverErrorPage(404, goal.message, (await translator('de_DE')), goal.detail);
    assert.match(de, /This goal does not exist\./, 'German has no translation of it: the English details');
  });

  test('codes and their arguments are checked by the compiler', () => {
    // @ts-expect-error not a catalog key
    assert.throws(() => englishText(msg('err.no_such_code')));
    // @ts-expect-error `max` is missing
    msg('err.goal.too_many');
    // @ts-expect-error `maximum` is not an argument of this message
    msg('err.goal.too_many', { maximum: 3 });
    // @ts-expect-error this message takes no arguments
    msg('err.goal.ended', { max: 3 });
  });
});

describe('error messages: real API errors answer the English catalog text', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture();
  });
  after(() => f.close());

  test('401 without a token', async () => {
    const res = await f.t.app.inject({ method: 'GET', url: '/api/v1/alerts/donations' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(json(res), { message: 'Unauthenticated.' });
    assert.equal(json(res).message, englishText(msg('err.unauthenticated')));
  });

  test('403 when a scope is missing', async () => {
    const token = await f.tokenWith(['oauth-user-show']);
    const res = await f.t.app.inject({ method: 'GET', url: '/api/v1/alerts/donations', headers: f.auth(token) });
    assert.equal(res.statusCode, 403);
    assert.equal(json(res).message, 'This action needs the "oauth-donation-index" scope; ask the user to authorize it.');
    assert.equal(json(res).message, englishText(msg('err.scope.insufficient', { scope: 'oauth-donation-index' })));
  });

  test('400 from a service: an external_id used before', async () => {
    const post = () => f.t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: f.auth(), payload: { external_id: 'errors-1', header: 'Hi' } });
    assert.equal((await post()).statusCode, 201);
    const res = await post();
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(json(res), { message: 'The external_id has already been taken.', errors: { external_id: ['The external_id has already been taken.'] } });
    assert.equal(json(res).message, englishText(msg('err.field.taken', { field: 'external_id' })));
    // The URL rules say the same through the catalog (the schema's pattern refuses such URLs first).
    assert.equal(englishText(urlMessage('image_url field', 'credentials')), 'The image_url field must not contain a user name or password.');
  });

  test('400 from the schema (AJV): the Laravel wording, from the catalog', async () => {
    const res = await f.t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: f.auth(), payload: { external_id: 'errors-2', header: 'x'.repeat(300) } });
    assert.equal(res.statusCode, 400, res.body);
    const body = json(res);
    const [field, messages] = Object.entries(body.errors as Record<string, string[]>)[0]!;
    assert.equal(field, 'header');
    assert.match(messages[0]!, /^The header field must not be greater than \d+ characters\.$/);
    const max = Number(/(\d+)/.exec(messages[0]!)![1]);
    assert.equal(messages[0], englishText(msg('err.field.max_chars', { field: 'header', max })));
    assert.equal(body.message, messages[0]);
  });

  test('409 and 404 from services keep their English texts', async () => {
    const ru = await translator('ru_RU');
    const { createGoal } = await import('../../src/modules/goals/goals.service.js');
    const { MAX_ACTIVE_GOALS } = await import('../../src/domain/goal.js');
    for (let i = 0; i < MAX_ACTIVE_GOALS; i++) await createGoal(f.t.database.db, f.userId, { title: `Goal ${i}`, goalAmount: '10' });
    await assert.rejects(createGoal(f.t.database.db, f.userId, { title: 'One more', goalAmount: '10' }), (err: unknown) => {
      assert.ok(err instanceof ConflictError);
      assert.equal(err.message, `You already run ${MAX_ACTIVE_GOALS} goals; close one before starting another.`);
      assert.equal(err.detail.code, 'err.goal.too_many');
      assert.match(ru.t(err.detail.code, err.detail.params as Record<string, number>), /^У вас уже \d+ активн/);
      return true;
    });
  });
});
