import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.js';
import { WalCheckpointer } from '../src/db/wal-checkpointer.js';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hooks-dbg-'));
const database = createDatabase({ dialect: 'sqlite', file: path.join(dir, 'x.sqlite') });
const c = new WalCheckpointer(database, { error: (o, m) => console.log('ERR', m, o) });
await sql`create table t (id integer primary key, b blob)`.execute(database.db);
c.start(0);
await new Promise((r) => setTimeout(r, 500));
try {
  for (let i = 0; i < 1200; i++) await database.db.transaction().execute((tx) => sql`insert into t (b) values (randomblob(4000))`.execute(tx));
} catch (e) { console.log('write failed', e); }
await new Promise((r) => setTimeout(r, 1000));
console.log(c.stats);
await c.stop();
await database.close();
