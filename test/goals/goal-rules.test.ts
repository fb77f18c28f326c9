import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goalContribution, isExpired, MAX_GOAL_HORIZON_MS, parseDateTime, raisedAfterStartChange, validateNewGoal } from '../../src/domain/goal.js';
import { englishText } from '../../src/domain/errors.js';
import { MissingRateError } from '../../src/domain/rates.js';

const RATES = { USD: 1, EUR: 0.8, RUB: 90, KZT: 450 };
const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);

test('a donation adds its amount converted into the goal currency, half-up to the minor unit', () => {
  assert.equal(goalContribution(1000, 'USD', 'USD', RATES), 1000, 'same currency: unchanged');
  assert.equal(goalContribution(1000, 'USD', 'EUR', RATES), 800); // 10 USD = 8 EUR
  assert.equal(goalContribution(1000, 'EUR', 'USD', RATES), 1250); // 10 EUR = 12.50 USD
  assert.equal(goalContribution(10000, 'RUB', 'USD', RATES), 111); // 100 RUB = 1.111… USD → 1.11
  assert.equal(goalContribution(4500, 'RUB', 'KZT', RATES), 22500); // 45 RUB = 225 KZT
  assert.equal(goalContribution(1, 'USD', 'EUR', { USD: 1, EUR: 0.5 }), 1, '0.5 minor rounds up');
  assert.equal(goalContribution(1, 'USD', 'EUR', { USD: 1, EUR: 0.49 }), 0);
  assert.throws(() => goalContribution(100, 'USD', 'BYN', RATES), MissingRateError);
});

test('a new goal: raised starts at start_amount (0 by default), currency defaults to the streamer\'s', () => {
  const ok = validateNewGoal({ title: '  New microphone ', goalAmount: '150.50' }, { defaultCurrency: 'EUR', now: NOW });
  assert.ok('fields' in ok);
  assert.deepEqual(ok.fields, { title: 'New microphone', currency: 'EUR', startAmount: 0, goalAmount: 15050, expiresAt: null });
  const full = validateNewGoal({ title: 'Camera', goalAmount: 500, startAmount: '20', currency: 'kzt', expiresAt: '2030-02-01 18:30:00' }, { defaultCurrency: 'EUR', now: NOW });
  assert.ok('fields' in full);
  assert.deepEqual(full.fields, { title: 'Camera', currency: 'KZT', startAmount: 2000, goalAmount: 50000, expiresAt: Date.UTC(2030, 1, 1, 18, 30) });
});

test('new-goal validation names each bad field', () => {
  const errorsOf = (input: Parameters<typeof validateNewGoal>[0]) => {
    const r = validateNewGoal(input, { defaultCurrency: 'USD', now: NOW });
    return 'errors' in r ? r.errors : {};
  };
  assert.deepEqual(Object.keys(errorsOf({ goalAmount: 10 })), ['title']);
  assert.deepEqual(Object.keys(errorsOf({ title: 'x'.repeat(256), goalAmount: 10 })), ['title']);
  assert.deepEqual(errorsOf({ title: 'x'.repeat(255), goalAmount: 10 }), {});
  assert.deepEqual(Object.keys(errorsOf({ title: 'T' })), ['goal_amount']);
  assert.deepEqual(errorsOf({ title: 'T', goalAmount: 10, startAmount: 10 }).goal_amount?.map(englishText), ['The goal_amount must be greater than the start_amount.']);
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 0 })), ['goal_amount']);
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: '1.234' })), ['goal_amount']);
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 10, startAmount: -1 })), ['start_amount']);
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 10, currency: 'XYZ' })), ['currency']);
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 10, expiresAt: '2029-12-31 23:59:59' })), ['expires_at'], 'past');
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 10, expiresAt: new Date(NOW).toISOString() })), ['expires_at'], 'now is not future');
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 10, expiresAt: NOW + MAX_GOAL_HORIZON_MS + 1 })), ['expires_at'], 'too far');
  assert.deepEqual(Object.keys(errorsOf({ title: 'T', goalAmount: 10, expiresAt: 'tomorrow' })), ['expires_at']);
  assert.deepEqual(errorsOf({ title: 'T', goalAmount: 10, expiresAt: '' }), {}, 'empty means none');
});

test('date-times: ISO 8601 and YYYY-MM-DD HH:MM:SS, UTC unless an offset is given; impossible dates fail', () => {
  assert.equal(parseDateTime('2030-01-31 18:00:00'), Date.UTC(2030, 0, 31, 18));
  assert.equal(parseDateTime('2030-01-31T18:00'), Date.UTC(2030, 0, 31, 18));
  assert.equal(parseDateTime('2030-01-31T18:00:00Z'), Date.UTC(2030, 0, 31, 18));
  assert.equal(parseDateTime('2030-01-31T18:00:00.250Z'), Date.UTC(2030, 0, 31, 18, 0, 0, 250));
  assert.equal(parseDateTime('2030-01-31T20:00:00+02:00'), Date.UTC(2030, 0, 31, 18));
  assert.equal(parseDateTime('2030-01-31T13:00:00-0500'), Date.UTC(2030, 0, 31, 18));
  assert.equal(parseDateTime('2030-01-31'), Date.UTC(2030, 0, 31));
  for (const bad of ['2030-02-30 00:00:00', '2030-13-01', '2030-01-01 24:00:00', '2030-01-01 12:60', '31.01.2030', '', 'now']) {
    assert.equal(parseDateTime(bad), null, bad);
  }
});

test('editing start_amount keeps the donations already counted; expiry is at expires_at inclusive', () => {
  assert.equal(raisedAfterStartChange(5000, 1000, 0), 4000);
  assert.equal(raisedAfterStartChange(5000, 1000, 3000), 7000);
  assert.equal(isExpired(null, NOW), false);
  assert.equal(isExpired(NOW, NOW), true);
  assert.equal(isExpired(NOW + 1, NOW), false);
});
