import { createRequire } from 'node:module';
import type { LinkifyIt } from 'linkify-it';

/**
 * The moderation rule engine: pure functions from a streamer's rules and what a donor typed to
 * what may be shown on stream. No I/O; the service (moderation.service.ts) loads the rules and
 * stores the outcome.
 *
 * Matching works on a "skeleton" of the text, computed one code point at a time so every match
 * maps back to the characters the donor typed:
 *   NFKD (compatibility forms, diacritics split off) → combining marks and invisible format
 *   characters dropped → look-alike characters mapped to the letter they imitate (the
 *   `confusables` package: Cyrillic/Greek/mathematical/full-width look-alikes of Latin letters
 *   and digits) → lower case → leetspeak digits and symbols to letters (LEET).
 * A banned word is reduced the same way, so "fuсk" (Cyrillic с), "ＦÚＣＫ" and "f⁠uck" (a
 * zero-width joiner inside) all meet "fuck", and a Russian banned word meets its Latin-letter
 * imitations. Both sides are folded alike, so words in any script work; the price is that two
 * different words with the same skeleton (Cyrillic "сор" and Latin "cop") are the same word here.
 */

export type WordMode = 'mask' | 'reject';
export type LinkMode = 'allow' | 'remove' | 'reject';

/** A streamer's text rules (the parts of their settings this engine needs). */
export interface TextRules {
  /** As the streamer typed them: single words or phrases of several words. */
  bannedWords: readonly string[];
  bannedWordsMode: WordMode;
  links: LinkMode;
  /** Longest message shown, in characters (code points); null: no limit of the streamer's own. */
  maxMessageLength: number | null;
}

export interface DonorText {
  username: string;
  message: string;
}

export type TextField = 'username' | 'message';
export type RuleName = 'banned_word' | 'link' | 'too_long';

/** A reject-mode rule the text breaks: the donor form refuses it before payment. */
export interface Violation {
  field: TextField;
  rule: RuleName;
}

// Leetspeak: digits and symbols donors put in place of letters. `l` and `i` are one letter here,
// as `1`, `|` and `!` stand for either. Applied to banned words too, so a banned "88" still means 88.
const LEET: Record<string, string> = { '0': 'o', '1': 'i', l: 'i', '!': 'i', '|': 'i', '3': 'e', '4': 'a', '@': 'a', '5': 's', $: 's', '7': 't', '8': 'b', '9': 'g' };
// Symbols that count as letters only inside a word: "hello!" is the word "hello".
const EDGE_SYMBOLS = new Set(['!', '|']);
const INVISIBLE = /^[\p{Cf}\p{Mn}\p{Me}]$/u;
const WORD_CHAR = /^[\p{L}\p{N}]$/u;

// The look-alike table (`confusables` builds a map of thousands of characters as it loads) and the
// link finder are required on the first text checked, not with the module: only donations to
// streamers with moderation settings and the moderation pages use them, and every server start
// would otherwise pay for both (required, so the functions below stay synchronous).
const require = createRequire(import.meta.url);
let confusables: ReadonlyMap<string, string> | null = null;
const lookalikes = (): ReadonlyMap<string, string> => (confusables ??= (require('confusables') as typeof import('confusables')).confusablesMap);
let linkFinder: LinkifyIt | null = null;
const linkify = (): LinkifyIt =>
  // Every top-level domain (the `tlds` package, from IANA's list): a bare "cheap.shop" is a link too.
  (linkFinder ??= new (require('linkify-it') as typeof import('linkify-it')).LinkifyIt().tlds(require('tlds') as string[], true).set({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true }));

/** One code point of the original text and what it folds to ('' for invisible ones). */
interface Piece {
  start: number;
  end: number;
  /** The original code point. */
  char: string;
  /** Look-alike fold without leetspeak (links). */
  shape: string;
  /** Full skeleton (words). */
  skeleton: string;
}

function shapeOf(char: string): string {
  let out = '';
  for (const c of char.normalize('NFKD')) {
    if (INVISIBLE.test(c)) continue;
    const base = lookalikes().get(c) ?? c;
    out += base.toLowerCase();
  }
  return out;
}

function skeletonOfShape(shape: string): string {
  let out = '';
  for (const c of shape) out += LEET[c] ?? c;
  return out;
}

function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  let at = 0;
  for (const char of text) {
    const shape = shapeOf(char);
    out.push({ start: at, end: at + char.length, char, shape, skeleton: skeletonOfShape(shape) });
    at += char.length;
  }
  return out;
}

/** A word of the text: its skeleton and where it is in the original. */
interface Word {
  skeleton: string;
  start: number;
  end: number;
}

function isWordPiece(p: Piece): boolean {
  return p.skeleton !== '' && [...p.skeleton].every((c) => WORD_CHAR.test(c) || LEET[c] !== undefined);
}

/**
 * The text's words: runs of letters, digits and leetspeak symbols; invisible characters inside a
 * word do not split it; `!` and `|` at either end of a word are punctuation, not letters.
 */
function wordsOf(all: Piece[]): Word[] {
  const words: Word[] = [];
  let run: Piece[] = [];
  const flush = () => {
    let from = 0;
    let to = run.length;
    while (from < to && (run[from].skeleton === '' || EDGE_SYMBOLS.has(run[from].char))) from++;
    // Combining marks after the last letter belong to it (masked with it); format characters do not.
    while (to > from && ((run[to - 1].skeleton === '' && /^\p{Cf}$/u.test(run[to - 1].char)) || EDGE_SYMBOLS.has(run[to - 1].char))) to--;
    if (from < to) {
      const kept = run.slice(from, to);
      words.push({ skeleton: kept.map((p) => p.skeleton).join(''), start: kept[0].start, end: kept[kept.length - 1].end });
    }
    run = [];
  };
  for (const p of all) {
    if (isWordPiece(p) || (p.skeleton === '' && run.length > 0)) run.push(p);
    else flush();
  }
  flush();
  return words;
}

/** A banned entry as the sequence of word skeletons it must match (empty: nothing to match). */
export function bannedSkeleton(entry: string): string[] {
  return wordsOf(pieces(entry)).map((w) => w.skeleton);
}

/**
 * Who a donor is by the name they typed, for the per-donor rate limit: the name's skeleton, so
 * "Bob", "BOB" and "Воb" (Cyrillic В and о) are one donor. '' for no name (anonymous).
 */
export function donorNameKey(name: string): string {
  return wordsOf(pieces(name)).map((w) => w.skeleton).join(' ');
}

/** Spans [start, end) of the text where a banned word or phrase stands as whole words. */
export function bannedSpans(text: string, bannedWords: readonly string[]): Array<[number, number]> {
  const words = wordsOf(pieces(text));
  const spans: Array<[number, number]> = [];
  const patterns = bannedWords.map(bannedSkeleton).filter((p) => p.length > 0);
  for (let i = 0; i < words.length; i++) {
    for (const pattern of patterns) {
      if (i + pattern.length > words.length) continue;
      if (pattern.every((skeleton, k) => words[i + k].skeleton === skeleton)) {
        // Each word is masked on its own: the spaces between the words of a phrase stay.
        for (let k = 0; k < pattern.length; k++) spans.push([words[i + k].start, words[i + k].end]);
      }
    }
  }
  return mergeSpans(spans);
}


/**
 * Spans of links (URLs, bare domains, e-mail addresses, IP addresses) in the text, found both as
 * typed and in its look-alike fold ("ехаmрlе.соm" with Cyrillic letters is a link too).
 */
export function linkSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const m of linkify().match(text) ?? []) spans.push([m.index, m.lastIndex]);
  // The fold as one string, and for each of its UTF-16 units the piece it came from.
  const all = pieces(text);
  let folded = '';
  const origin: number[] = [];
  all.forEach((p, i) => {
    folded += p.shape;
    for (let k = 0; k < p.shape.length; k++) origin.push(i);
  });
  for (const m of linkify().match(folded) ?? []) spans.push([all[origin[m.index]].start, all[origin[m.lastIndex - 1]].end]);
  return mergeSpans(spans);
}

function mergeSpans(spans: Array<[number, number]>): Array<[number, number]> {
  const sorted = [...spans].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: Array<[number, number]> = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** One asterisk per character the reader would see (grapheme), so the mask keeps the word's length. */
function maskOf(text: string): string {
  let visible = 0;
  for (const { segment } of graphemes.segment(text)) if (!/^\p{Cf}+$/u.test(segment)) visible++;
  return '*'.repeat(visible);
}

function replaceSpans(text: string, spans: Array<[number, number]>, by: (part: string) => string): string {
  let out = '';
  let at = 0;
  for (const [s, e] of spans) {
    out += text.slice(at, s) + by(text.slice(s, e));
    at = e;
  }
  return out + text.slice(at);
}

export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The reject-mode rules the text breaks (none when every rule masks or removes). */
export function violations(rules: TextRules, text: DonorText): Violation[] {
  const found: Violation[] = [];
  for (const field of ['username', 'message'] as const) {
    const value = text[field];
    if (rules.bannedWordsMode === 'reject' && bannedSpans(value, rules.bannedWords).length > 0) found.push({ field, rule: 'banned_word' });
    if (rules.links === 'reject' && linkSpans(value).length > 0) found.push({ field, rule: 'link' });
  }
  if (rules.maxMessageLength !== null && codePointLength(text.message) > rules.maxMessageLength) found.push({ field: 'message', rule: 'too_long' });
  return found;
}

/** What a rule did to a text on its way to the stream. */
export interface ShownText extends DonorText {
  /** Rules that changed something (empty: shown exactly as typed). */
  applied: RuleName[];
}

/**
 * The text as the stream may show it. Every rule applies here whatever its mode: a reject-mode
 * rule that reaches this point (a donation paid elsewhere, recorded by the API, the sandbox or
 * the CLI) still never puts the word or the link on stream — the service holds such a donation
 * for the streamer to decide. Links are removed, banned words masked, and a message longer than
 * the limit is cut with an ellipsis.
 */
export function shownText(rules: TextRules, text: DonorText): ShownText {
  const applied = new Set<RuleName>();
  const clean = (value: string): string => {
    let out = value;
    if (rules.links !== 'allow') {
      const spans = linkSpans(out);
      if (spans.length) {
        applied.add('link');
        out = replaceSpans(out, spans, () => '').replace(/[ \t]{2,}/g, ' ').trim();
      }
    }
    const banned = bannedSpans(out, rules.bannedWords);
    if (banned.length) {
      applied.add('banned_word');
      out = replaceSpans(out, banned, maskOf);
    }
    return out;
  };
  const username = clean(text.username);
  let message = clean(text.message);
  if (rules.maxMessageLength !== null && codePointLength(message) > rules.maxMessageLength) {
    applied.add('too_long');
    const cut = [...message].slice(0, Math.max(0, rules.maxMessageLength - 1)).join('').trimEnd();
    message = rules.maxMessageLength > 0 ? `${cut}…` : '';
  }
  return { username, message, applied: [...applied] };
}
