import { randomInt } from 'node:crypto';
import { INPUT_CURRENCIES } from '../../domain/currency.js';

/** The sandbox's payment provider title: test alerts are labelled as such everywhere they show. */
export const SANDBOX_PAYIN = 'Sandbox';

const NAMES = ['Alex', 'StreamFan42', 'Marta', 'NightOwl', 'Pixel_Pirate', 'Jonas', 'Sakura', 'Dmitry', 'Lucía', 'CaptainCheese', 'Olek', 'Ayşe', 'João'];
const MESSAGES = [
  'Great stream, keep it up!',
  'Play the next level on hard mode!',
  'Greetings from the chat :)',
  'For the new microphone fund',
  'GG, that was an amazing clutch',
  'Hydrate!',
  '',
  'Can you say hi to my brother?',
];
// Typical donation sizes per currency (major units); amounts round to what donors actually pick.
const TYPICAL: Record<string, readonly number[]> = {
  USD: [1, 2, 3, 5, 10, 20, 50],
  EUR: [1, 2, 5, 10, 20, 50],
  RUB: [50, 100, 150, 200, 300, 500, 1000],
  BRL: [5, 10, 20, 50, 100],
  TRY: [20, 50, 100, 200, 500],
};

const pick = <T>(list: readonly T[]): T => list[randomInt(list.length)]!;

/** A realistic random donation for the sandbox (`openalerts donation simulate`). */
export function randomDonation(): { amount: string; currency: string; username: string; message: string } {
  const currency = pick(INPUT_CURRENCIES);
  const base = pick(TYPICAL[currency]!);
  // One in four donors adds cents, as card payments often do.
  const cents = randomInt(4) === 0 ? randomInt(1, 100) : 0;
  return { amount: `${base}.${String(cents).padStart(2, '0')}`, currency, username: pick(NAMES), message: pick(MESSAGES) };
}
