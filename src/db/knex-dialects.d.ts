// Knex's PostgreSQL client class, which `client: 'pg'` names (extended to trace statements, src/db/statement-spans.ts).
declare module 'knex/lib/dialects/postgres/index.js' {
  import type { Knex } from 'knex';
  const Client_PG: typeof Knex.Client;
  export default Client_PG;
}
