import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bannedSpans, linkSpans, shownText, violations, type TextRules } from '../../src/modules/moderation/rules.js';

const rules = (over: Partial<TextRules> = {}): TextRules => ({ bannedWords: [], bannedWordsMode: 'mask', links: 'allow', maxMessageLength: null, ...over });
const masked = (text: string, words: string[]) => shownText(rules({ bannedWords: words }), { username: '', message: text }).message;

describe('moderation rules: banned words', () => {
  it('matches whole words only, case-folded', () => {
    assert.equal(masked('You are a Badword!', ['badword']), 'You are a *******!');
    assert.equal(masked('badwords and notbadword stay', ['badword']), 'badwords and notbadword stay');
    assert.deepEqual(bannedSpans('BADWORD', ['badword']), [[0, 7]]);
  });

  it('sees through Cyrillic and Greek look-alikes, full-width forms and diacritics', () => {
    // Cyrillic а, е, о, р, с in place of Latin letters
    assert.equal(masked('what a сrар day', ['crap']), 'what a **** day');
    assert.equal(masked('ｃｒａｐ', ['crap']), '****');
    assert.equal(masked('crâp and CRÁP', ['crap']), '**** and ****');
    // Greek omicron
    assert.equal(masked('idiοt', ['idiot']), '*****');
  });

  it('sees through leetspeak digits and symbols', () => {
    assert.equal(masked('1d10t', ['idiot']), '*****');
    assert.equal(masked('$h!t happens', ['shit']), '**** happens');
    assert.equal(masked('5h1t', ['shit']), '****');
    // the banned word itself may be written in leetspeak or look-alikes: both sides fold alike
    assert.equal(masked('shit', ['5h!t']), '****');
  });

  it('ignores invisible characters and combining marks inside a word', () => {
    assert.equal(masked('cr\u200Bap', ['crap']), '****');
    assert.equal(masked('c\u0336r\u0336a\u0336p\u0336', ['crap']), '****');
  });

  it('works for words in other scripts and their Latin imitations', () => {
    assert.equal(masked('ты дурак', ['дурак']), 'ты *****');
    // Latin a and p standing in for Cyrillic а and р
    assert.equal(masked('ты дуpak', ['дурак']), 'ты *****');
    assert.equal(masked('ты дураки', ['дурак']), 'ты дураки');
  });

  it('matches phrases word by word and keeps the spaces', () => {
    assert.equal(masked('please go   away now', ['go away']), 'please **   **** now');
    assert.equal(masked('go on, away', ['go away']), 'go on, away');
  });

  it('punctuation around a word is not part of it', () => {
    assert.equal(masked('(crap), crap! |crap|', ['crap']), '(****), ****! |****|');
  });

  it('reject mode reports the field instead of masking', () => {
    const r = rules({ bannedWords: ['crap'], bannedWordsMode: 'reject' });
    assert.deepEqual(violations(r, { username: 'Mr Crap', message: 'hi' }), [{ field: 'username', rule: 'banned_word' }]);
    assert.deepEqual(violations(r, { username: 'ok', message: 'fine' }), []);
  });
});

describe('moderation rules: links', () => {
  it('finds URLs, bare domains, e-mails and IPs', () => {
    const text = 'see https://x.io/a?b or example.com, cheap.shop, mail a@b.de, 10.0.0.1';
    assert.equal(linkSpans(text).length, 5);
    assert.deepEqual(linkSpans('3.50 dollars, node.js rocks, no links'), []);
  });

  it('finds links written with look-alike letters', () => {
    assert.equal(linkSpans('go to ехаmрlе.соm now').length, 1);
  });

  it('remove mode drops the link and keeps the rest', () => {
    const r = rules({ links: 'remove' });
    assert.deepEqual(shownText(r, { username: 'buy.example.com', message: 'visit example.com now' }), { username: '', message: 'visit now', applied: ['link'] });
  });

  it('allow mode leaves links alone; reject mode reports them', () => {
    assert.equal(shownText(rules(), { username: '', message: 'example.com' }).message, 'example.com');
    assert.deepEqual(violations(rules({ links: 'reject' }), { username: '', message: 'https://x.io' }), [{ field: 'message', rule: 'link' }]);
  });
});

describe('moderation rules: length', () => {
  it('a message over the limit is a violation in the form and cut on stream', () => {
    const r = rules({ maxMessageLength: 5 });
    assert.deepEqual(violations(r, { username: '', message: '123456' }), [{ field: 'message', rule: 'too_long' }]);
    assert.deepEqual(violations(r, { username: '', message: '12345' }), []);
    assert.equal(shownText(r, { username: '', message: 'abcdefgh' }).message, 'abcd…');
  });

  it('counts characters, not UTF-16 units', () => {
    assert.deepEqual(violations(rules({ maxMessageLength: 2 }), { username: '', message: '😀😀' }), []);
  });
});
