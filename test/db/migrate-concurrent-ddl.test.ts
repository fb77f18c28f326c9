import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { PG_URL, openTestDatabase, postgresAvailable } from '../helper.js';

// Kysely's pre-flight introspection reads the catalog of every schema; other sessions dropping
// schemas meanwhile (as our concurrent suites do) made it fail now and then. Here a second session
// creates and drops schemas with tables in a tight loop while fresh schemas migrate.
test('migrations on PostgreSQL succeed while other sessions drop schemas', { skip: !(await postgresAvailable()) && 'no PostgreSQL', timeout: 300_000 }, async () => {
  const churn = new pg.Client({ connectionString: PG_URL });
  await churn.connect();
  let stop = false;
  let churned = 0;
  const loop = (async () => {
    while (!stop) {
      const name = `churn_${randomBytes(5).toString('hex')}`;
      await churn.query(`create schema ${name}; create table ${name}.a (id serial primary key, x int, y text); create table ${name}.b (id serial primary key, a_id int)`);
      await churn.query(`drop schema ${name} cascade`);
      churned++;
    }
  })();
  try {
    for (let i = 0; i < 12; i++) {
      const t = await openTestDatabase('postgres');
      await t.drop();
    }
  } finally {
    stop = true;
    await loop;
    await churn.end();
  }
  assert.ok(churned > 10, `schemas were dropped while migrating (${churned})`);
});
