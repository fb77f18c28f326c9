import { randomInt } from 'node:crypto';
import { Option, type Command } from 'commander';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { POLL_TYPES } from '../../domain/poll.js';
import { findUserByRef } from '../accounts/accounts.service.js';
import { idArgument, type CliKit } from '../goals/goals.cli.js';
import { closePoll, createPoll, getActivePoll, getPoll, listPolls } from './polls.service.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Sandbox: a random option of the streamer's active poll, or null when no poll runs. */
export async function randomPollOption(db: Kysely<DB>, userId: number): Promise<number | null> {
  const options = (await getActivePoll(db, userId))?.options ?? [];
  return options.length ? options[randomInt(options.length)]!.id : null;
}

/** `openalerts poll create | list | show | close`; donors vote with `donation simulate --poll-option…`. */
export function registerPollCommands(program: Command, kit: CliKit): void {
  const poll = program.command('poll').description('Polls: donations vote for an option; one active poll per streamer.');
  poll
    .command('create')
    .description('Start a poll for a streamer; prints it as JSON and publishes `created`.')
    .requiredOption('--user <user>', 'streamer: user id, e-mail or code')
    .requiredOption('--title <title>', 'poll title (at most 255 characters)')
    .requiredOption('--option <title>', 'an option (repeat: at least two)', collect)
    .addOption(new Option('--type <type>', 'count: most donations wins; sum: largest total wins').choices([...POLL_TYPES]).default('count'))
    .option('--allow-user-options', 'donors may add their own options')
    .option('--currency <code>', `currency sum polls count in (${OUTPUT_CURRENCIES.join(' ')}); default the streamer's main currency`)
    .action((opts) =>
      kit.withDatabase(async ({ db }) => {
        const user = await findUserByRef(db, opts.user);
        kit.print(await createPoll(db, user.id, { title: opts.title, type: opts.type, options: opts.option, allowUserOptions: Boolean(opts.allowUserOptions), currency: opts.currency }));
      }),
    );
  poll
    .command('list')
    .description('List a streamer\'s polls, newest first, as JSON.')
    .requiredOption('--user <user>', 'streamer: user id, e-mail or code')
    .action((opts) =>
      kit.withDatabase(async ({ db }) => {
        const user = await findUserByRef(db, opts.user);
        kit.print({ polls: await listPolls(db, user.id, { limit: 100 }) });
      }),
    );
  poll
    .command('show')
    .description('Show a poll with its options, tallies and winners as JSON.')
    .argument('<id>', 'poll id', idArgument)
    .action((id: number) => kit.withDatabase(async ({ db }) => kit.print(await getPoll(db, id))));
  poll
    .command('close')
    .description('End a poll (publishes `finished` with the winners); closing an ended poll changes nothing.')
    .argument('<id>', 'poll id', idArgument)
    .action((id: number) => kit.withDatabase(async ({ db }) => kit.print(await closePoll(db, id))));
}
