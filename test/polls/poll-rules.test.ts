import assert from 'node:assert/strict';
import { test } from 'node:test';
import { englishText, type Message } from '../../src/domain/errors.js';
import { checkOptionTitles, cleanOptionTitle, optionTitleKey, sharePercent, standings, voteTally, type OptionTally } from '../../src/domain/poll.js';

const opts = (...rows: [votes: number, sum: number][]): OptionTally[] => rows.map(([votes, sum], i) => ({ id: i + 1, title: `Option ${i + 1}`, votes, sum }));

/** The English texts, as the API answers them. */
const english = (messages: Message[]) => messages.map(englishText);

test('count polls: amount_value is the number of votes; percentages are shares of all votes', () => {
  assert.deepEqual(standings('count', opts([3, 100], [1, 9900], [0, 0])), [
    { id: 1, title: 'Option 1', amount_value: 3, amount_percent: 75, is_winner: 1 },
    { id: 2, title: 'Option 2', amount_value: 1, amount_percent: 25, is_winner: 0 },
    { id: 3, title: 'Option 3', amount_value: 0, amount_percent: 0, is_winner: 0 },
  ]);
});

test('sum polls: amount_value is the donation total in major units; the same votes can pick another winner', () => {
  const tallies = opts([3, 100], [1, 9900], [0, 0]);
  assert.deepEqual(standings('sum', tallies), [
    { id: 1, title: 'Option 1', amount_value: 1, amount_percent: 1, is_winner: 0 },
    { id: 2, title: 'Option 2', amount_value: 99, amount_percent: 99, is_winner: 1 },
    { id: 3, title: 'Option 3', amount_value: 0, amount_percent: 0, is_winner: 0 },
  ]);
  assert.equal(standings('sum', opts([1, 1050]))[0]!.amount_value, 10.5);
});

test('ties: every option sharing the maximum wins; all zero: nobody wins and every share is 0', () => {
  const tied = standings('sum', opts([1, 500], [2, 500], [5, 200]));
  assert.deepEqual(tied.map((o) => o.is_winner), [1, 1, 0]);
  assert.deepEqual(tied.map((o) => o.amount_percent), [41.67, 41.67, 16.67]);
  const countTie = standings('count', opts([2, 0], [2, 0], [2, 0]));
  assert.deepEqual(countTie.map((o) => o.is_winner), [1, 1, 1]);
  const zero = standings('count', opts([0, 0], [0, 0]));
  assert.deepEqual(zero.map((o) => [o.amount_value, o.amount_percent, o.is_winner]), [[0, 0, 0], [0, 0, 0]]);
  assert.deepEqual(standings('count', []), []);
});

test('percentages are rounded half-up to 2 decimals each, so equal values show equal shares and the sum is within ±0.005 per option of 100', () => {
  assert.equal(sharePercent(1, 3), 33.33);
  assert.equal(sharePercent(2, 3), 66.67);
  assert.equal(sharePercent(1, 8), 12.5);
  assert.equal(sharePercent(1, 80000), 0); // 0.00125 %
  assert.equal(sharePercent(1, 20000), 0.01); // 0.005 %: the half rounds up
  assert.equal(sharePercent(1, 20001), 0);
  assert.equal(sharePercent(0, 0), 0);
  assert.equal(sharePercent(10 ** 13 - 1, 10 ** 13), 100, 'exact at the largest amounts');
  assert.equal(sharePercent(10 ** 13 / 2, 10 ** 13), 50);
  const three = standings('count', opts([1, 0], [1, 0], [1, 0]));
  assert.deepEqual(three.map((o) => o.amount_percent), [33.33, 33.33, 33.33]);
  for (const values of [[1, 1, 1], [1, 2, 3, 4, 5, 6, 7], [7, 7, 7, 7, 7, 7], [1, 999999]]) {
    const total = standings('count', opts(...values.map((v) => [v, 0] as [number, number]))).reduce((a, o) => a + o.amount_percent, 0);
    assert.ok(Math.abs(total - 100) <= 0.005 * values.length + 1e-9, `${values}: ${total}`);
  }
});

test('a vote counts once and adds the donation converted into the poll currency', () => {
  assert.deepEqual(voteTally(1000, 'USD', 'EUR', { USD: 1, EUR: 0.8 }), { votes: 1, sum: 800 });
  assert.deepEqual(voteTally(1000, 'EUR', 'EUR', { USD: 1, EUR: 0.8 }), { votes: 1, sum: 1000 });
});

test('option titles dedupe ignoring case and whitespace runs; checks at creation', () => {
  assert.equal(cleanOptionTitle('  Half   Life  2 '), 'Half Life 2');
  assert.equal(optionTitleKey('  HALF life 2'), optionTitleKey('half  LIFE 2'));
  assert.equal(optionTitleKey('Straße'), optionTitleKey('STRAßE'));
  assert.notEqual(optionTitleKey('Doom'), optionTitleKey('Doom 2'));

  assert.deepEqual(checkOptionTitles([' Doom ', 'Quake']), { titles: ['Doom', 'Quake'], errors: [] });
  assert.deepEqual(english(checkOptionTitles(['Doom']).errors), ['A poll needs at least 2 options.']);
  assert.deepEqual(english(checkOptionTitles(['Doom', 'DOOM']).errors), ['The option "DOOM" is listed twice.']);
  assert.deepEqual(english(checkOptionTitles(['Doom', '  ']).errors), ['Every option needs a title.']);
  assert.deepEqual(english(checkOptionTitles(['Doom', 'x'.repeat(101)]).errors), ['An option title must not be greater than 100 characters.']);
  assert.deepEqual(checkOptionTitles(['Doom', 'x'.repeat(100)]).errors, []);
  assert.deepEqual(english(checkOptionTitles(Array.from({ length: 51 }, (_, i) => `O${i}`)).errors), ['A poll may have at most 50 options.']);
});
