import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, envToConfig, type Config } from './config/config.js';
import { readEnv } from './config/env.js';
import type { Database } from './db/database.js';
import { INPUT_CURRENCIES, isInputCurrency } from './domain/currency.js';
import { DomainError, msg, ValidationError } from './domain/errors.js';
import { registerGoalCommands } from './modules/goals/goals.cli.js';
import { randomPollOption, registerPollCommands } from './modules/polls/polls.cli.js';
import { BackupError } from './db/backup-error.js';
import { registerBackupCommands } from './ops/backup.cli.js';

// Each command imports what it runs when it runs (`await import(…)` in its action), so `--help`
// and a one-row command never load the server, and `user show` loads only the database and the
// accounts module. Imports above this line are what every invocation needs to parse its arguments.

/** Commands that create or show something print one JSON object on stdout (architecture.md convention 8). */
function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

function config(): Readonly<Config> {
  return envToConfig(readEnv());
}

/** Opens the same database `serve` uses (migrating it), runs `fn`, closes it. */
async function withDatabase<T>(fn: (database: Database, cfg: Readonly<Config>) => Promise<T>, migrate = true): Promise<T> {
  const cfg = config();
  const [{ createDatabase }, { migrateToLatest }] = await Promise.all([import('./db/database.js'), import('./db/migrate.js')]);
  const database = createDatabase(cfg.database);
  try {
    if (migrate) await migrateToLatest(database.db);
    return await fn(database, cfg);
  } finally {
    await database.close();
  }
}

const accountsService = () => import('./modules/accounts/accounts.service.js');
const accountsResource = () => import('./modules/accounts/accounts.resource.js');
const appsService = () => import('./modules/apps/apps.service.js');

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return Number(value);
}

/**
 * `serve --workers <n>`: worker processes sharing the port; `auto` is one per core this process may
 * use. Cores are counted only for `auto` (node:os is loaded then), so other commands never pay for it.
 */
export function workersOption(value: string): number | 'auto' {
  const v = value.trim().toLowerCase();
  if (v === 'auto') return 'auto';
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('must be a whole number of at least 1, or "auto" (one per core).');
  if (Number(v) > 256) throw new InvalidArgumentError('must be at most 256.');
  return Number(v);
}

function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number (0 or more).');
  return Number(value);
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function buildCli(): Command {
  const program = new Command('openalerts')
    .description('OpenAlerts: self-hosted donation alerts. Every command reads the same environment as `serve` (see README).')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text) });

  program
    .command('serve')
    .description('Run the HTTP API, OAuth server, pages and real-time endpoint (migrates first).')
    .addOption(
      new Option('--workers <n>', 'worker processes sharing the port (node:cluster): a number, or "auto" for one per core').default(1).argParser(workersOption),
    )
    .action(async (opts: { workers: number | 'auto' }) => {
      const workers = opts.workers === 'auto' ? (await import('node:os')).availableParallelism() : opts.workers;
      if (workers === 1) {
        const { startServer } = await import('./server.js');
        await startServer(config());
        return;
      }
      // The cluster modules load only here: a one-process server never loads them.
      const { runCluster } = await import('./cluster/cluster.js');
      await runCluster(config(), workers);
    });

  program
    .command('migrate')
    .description('Bring the database schema up to date and exit.')
    .action(() =>
      withDatabase(async (database) => {
        const { migrateToLatest } = await import('./db/migrate.js');
        const results = await migrateToLatest(database.db);
        print({ applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName), dialect: database.dialect });
      }, false),
    );

  const user = program.command('user').description('Manage streamer accounts.');
  user
    .command('create')
    .description('Create an account; prints it as JSON.')
    .requiredOption('--email <email>', 'e-mail address (log-in name)')
    .requiredOption('--password <password>', 'password, at least 8 characters')
    .requiredOption('--name <name>', 'unique displayed name')
    .option('--currency <code>', 'main currency (EUR USD RUB BYN KZT UAH BRL TRY)')
    .option('--language <locale>', 'language (a spec locale such as en_US)')
    .option('--admin', 'make the account an administrator')
    .action((opts) =>
      withDatabase(async ({ db }) => {
        const [{ createAccount }, { toUserSummary }] = await Promise.all([accountsService(), accountsResource()]);
        const created = await createAccount(db, { email: opts.email, password: opts.password, name: opts.name, currency: opts.currency, language: opts.language, admin: Boolean(opts.admin) });
        print(await toUserSummary(db, created));
      }),
    );
  user
    .command('show')
    .description('Show an account (by id, e-mail or code) as JSON.')
    .argument('<user>', 'user id, e-mail or code')
    .action((ref: string) =>
      withDatabase(async ({ db }) => {
        const [{ findUserByRef }, { toUserSummary }] = await Promise.all([accountsService(), accountsResource()]);
        print(await toUserSummary(db, await findUserByRef(db, ref)));
      }),
    );

  const app = program.command('app').description('Manage OAuth applications.');
  app
    .command('create')
    .description('Register an OAuth application; prints client_id and the client_secret (shown only here).')
    .requiredOption('--owner <user>', 'owner: user id, e-mail or code')
    .requiredOption('--name <name>', 'application name shown on the consent page')
    .requiredOption('--redirect-uri <uri>', 'registered redirect URI (repeat for several)', collect)
    .action((opts) =>
      withDatabase(async ({ db }, cfg) => {
        const [{ findUserByRef }, { createApp }, { loadSecrets }] = await Promise.all([accountsService(), appsService(), import('./config/secrets.js')]);
        const owner = await findUserByRef(db, opts.owner);
        const { app: created, clientSecret } = await createApp(db, loadSecrets(cfg).encryptionKey, { ownerId: owner.id, name: opts.name, redirectUris: opts.redirectUri });
        print({ client_id: created.client_id, client_secret: clientSecret, name: created.name, owner_id: created.owner_id, redirect_uris: created.redirect_uris });
      }),
    );
  app
    .command('merchandise-access')
    .description('Grant or revoke Merchandise API access for an application (administrators).')
    .argument('<client_id>', 'application client_id', positiveInt)
    .addOption(new Option('--revoke', 'revoke instead of grant'))
    .action((clientId: number, opts) =>
      withDatabase(async ({ db }) => {
        const { setMerchandiseAccess } = await appsService();
        await setMerchandiseAccess(db, clientId, !opts.revoke);
        print({ client_id: clientId, merchandise_access: opts.revoke ? 0 : 1 });
      }),
    );

  program
    .command('merchant')
    .description('Merchandise API merchants (administrators).')
    .command('create')
    .description('Create a merchant of an application; prints it as JSON. Grant the application access with `app merchandise-access`.')
    .requiredOption('--app <client_id>', 'the application (client_id) the merchant belongs to', positiveInt)
    .requiredOption('--identifier <identifier>', 'merchant_identifier used in requests (unique)')
    .requiredOption('--name <name>', 'merchant name shown in merchandise')
    .action((opts) =>
      withDatabase(async ({ db }) => {
        const { createMerchant } = await import('./modules/merchants/merchants.service.js');
        print(await createMerchant(db, { clientId: opts.app, identifier: opts.identifier, name: opts.name }));
      }),
    );

  const donation = program.command('donation').description('Donations.');
  donation
    .command('simulate')
    .description('Sandbox: record donations for a streamer as if donors paid; omitted fields get realistic random values.')
    .requiredOption('--user <user>', 'streamer: user id, e-mail or code')
    .option('--amount <amount>', 'amount, e.g. 5 or 12.50')
    .option('--currency <code>', `currency (${INPUT_CURRENCIES.join(' ')})`)
    .option('--username <name>', 'donor name')
    .option('--message <text>', 'message (at most 300 characters)')
    .option('--count <n>', 'how many donations', positiveInt, 1)
    .option('--interval <ms>', 'pause between donations, in milliseconds', nonNegativeInt, 0)
    .addOption(new Option('--poll-option <id>', 'vote for this option of the active poll').argParser(positiveInt))
    .addOption(new Option('--poll-option-title <title>', 'vote by option title (adds it where the poll takes donor options)').conflicts('pollOption'))
    .addOption(new Option('--vote-randomly', 'vote for a random option of the active poll, if one runs').conflicts(['pollOption', 'pollOptionTitle']))
    .action((opts) =>
      withDatabase(async ({ db }) => {
        if (opts.currency !== undefined && !isInputCurrency(opts.currency)) {
          throw ValidationError.field('currency', msg('err.currency.one_of', { list: INPUT_CURRENCIES.join(', ') }));
        }
        const [{ findUserByRef }, { randomDonation, SANDBOX_PAYIN }, { createDonation }] = await Promise.all([
          accountsService(),
          import('./modules/donations/donations.sandbox.js'),
          import('./modules/donations/donations.service.js'),
        ]);
        const streamer = await findUserByRef(db, opts.user);
        const created = [];
        for (let i = 0; i < opts.count; i++) {
          if (i > 0 && opts.interval > 0) await new Promise((r) => setTimeout(r, opts.interval));
          const random = randomDonation();
          const randomVote = opts.voteRandomly ? await randomPollOption(db, streamer.id) : null;
          created.push(
            await createDonation(db, {
              userId: streamer.id,
              amount: opts.amount ?? random.amount,
              currency: opts.currency ?? random.currency,
              username: opts.username ?? random.username,
              message: opts.message ?? random.message,
              payinSystem: SANDBOX_PAYIN,
              pollOptionId: opts.pollOption ?? randomVote ?? undefined,
              pollOptionTitle: opts.pollOptionTitle,
            }),
          );
        }
        print(created.length === 1 ? created[0] : { donations: created });
      }),
    );

  registerGoalCommands(program, { withDatabase, print });
  registerPollCommands(program, { withDatabase, print });
  registerBackupCommands(program, { config, print, withDatabase });

  const rates = program.command('rates').description('Currency rates used for conversions (units per US dollar).');
  rates
    .command('show', { isDefault: true })
    .description('Print every rate as JSON.')
    .action(() =>
      withDatabase(async ({ db }) => {
        const { listRates } = await import('./modules/currencies/currencies.repository.js');
        print({ base: 'USD', rates: await listRates(db) });
      }),
    );
  rates
    .command('set')
    .description('Set how many units of a currency one US dollar buys.')
    .argument('<currency>', 'currency code')
    .argument('<per_usd>', 'units per US dollar, e.g. 0.92')
    .option('--as-of <date>', 'date the rate describes (YYYY-MM-DD); default today')
    .action((currency: string, perUsd: string, opts) =>
      withDatabase(async ({ db }) => {
        const [{ setRate }, { listRates }] = await Promise.all([
          import('./modules/currencies/currencies.service.js'),
          import('./modules/currencies/currencies.repository.js'),
        ]);
        await setRate(db, currency, perUsd, opts.asOf);
        print({ base: 'USD', rates: await listRates(db) });
      }),
    );

  return program;
}

/** One-line reasons on stderr, non-zero exit: bad input never prints a stack trace. */
export function describeError(err: unknown): string {
  if (err instanceof ValidationError) return Object.entries(err.errors).map(([field, msgs]) => `${field}: ${msgs.join(' ')}`).join('; ');
  if (err instanceof DomainError || err instanceof ConfigError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

buildCli()
  .parseAsync(process.argv)
  .catch((err) => {
    process.stderr.write(`openalerts: ${describeError(err)}\n`);
    // Backups may stop with their own code (2: use pg_dump on PostgreSQL).
    process.exit(err instanceof BackupError ? err.exitCode : 1);
  });
