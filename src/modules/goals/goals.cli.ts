import { InvalidArgumentError, type Command } from 'commander';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { findUserByRef } from '../accounts/accounts.service.js';
import { closeGoal, createGoal, getGoal, listGoals } from './goals.service.js';

/** What the CLI entry point lends its command groups (cli.ts owns the database and the output). */
export interface CliKit {
  withDatabase<T>(fn: (database: { db: Kysely<DB> }) => Promise<T>): Promise<T>;
  print(value: unknown): void;
}

export function idArgument(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return Number(value);
}

/** `openalerts goal create | list | show | close` (architecture.md convention 8: JSON out, one-line errors). */
export function registerGoalCommands(program: Command, kit: CliKit): void {
  const goal = program.command('goal').description('Donation goals: donations made while a goal runs add to it (converted into its currency).');
  goal
    .command('create')
    .description('Start a goal for a streamer; prints it as JSON and publishes `created`.')
    .requiredOption('--user <user>', 'streamer: user id, e-mail or code')
    .requiredOption('--title <title>', 'goal title (at most 255 characters)')
    .requiredOption('--goal-amount <amount>', 'target amount, e.g. 500 or 99.50')
    .option('--start-amount <amount>', 'amount already raised (counts toward the goal); default 0')
    .option('--currency <code>', `goal currency (${OUTPUT_CURRENCIES.join(' ')}); default the streamer's main currency`)
    .option('--expires-at <datetime>', 'end, ISO 8601 or "YYYY-MM-DD HH:MM:SS" (UTC); default none')
    .action((opts) =>
      kit.withDatabase(async ({ db }) => {
        const user = await findUserByRef(db, opts.user);
        kit.print(await createGoal(db, user.id, { title: opts.title, goalAmount: opts.goalAmount, startAmount: opts.startAmount, currency: opts.currency, expiresAt: opts.expiresAt }));
      }),
    );
  goal
    .command('list')
    .description('List a streamer\'s goals, newest first, as JSON.')
    .requiredOption('--user <user>', 'streamer: user id, e-mail or code')
    .option('--active', 'only running goals')
    .action((opts) =>
      kit.withDatabase(async ({ db }) => {
        const user = await findUserByRef(db, opts.user);
        kit.print({ goals: await listGoals(db, user.id, { state: opts.active ? 'active' : 'all', limit: 100 }) });
      }),
    );
  goal
    .command('show')
    .description('Show one goal as JSON.')
    .argument('<id>', 'goal id', idArgument)
    .action((id: number) => kit.withDatabase(async ({ db }) => kit.print(await getGoal(db, id))));
  goal
    .command('close')
    .description('End a goal now (publishes `finished`); closing an ended goal changes nothing.')
    .argument('<id>', 'goal id', idArgument)
    .action((id: number) => kit.withDatabase(async ({ db }) => kit.print(await closeGoal(db, id))));
}
