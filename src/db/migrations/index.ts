// Migrations are listed in code (not discovered on disk) so the same list runs from src/ under tsx and from dist/.
import type { Knex } from 'knex';
import * as catalog from './001_catalog.js';
import * as oauth from './002_oauth.js';
import * as checkout from './003_checkout.js';
import * as retention from './004_retention.js';
import * as orders from './005_orders.js';
import * as protocols from './006_protocols.js';
import * as catalogVersion from './007_catalog_version.js';
import * as catalogVersionTruncate from './008_catalog_version_truncate.js';
import * as paymentHolds from './009_payment_holds.js';
import * as fulfilment from './010_fulfilment.js';
import * as sessionDestination from './011_session_destination.js';
import * as webhookTrace from './012_webhook_trace.js';
import * as admin from './013_admin.js';
import * as orderEvents from './014_order_events.js';
import * as productPublished from './015_product_published.js';

interface Migration {
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

const migrations: Record<string, Migration> = {
  '001_catalog': catalog,
  '002_oauth': oauth,
  '003_checkout': checkout,
  '004_retention': retention,
  '005_orders': orders,
  '006_protocols': protocols,
  '007_catalog_version': catalogVersion,
  '008_catalog_version_truncate': catalogVersionTruncate,
  '009_payment_holds': paymentHolds,
  '010_fulfilment': fulfilment,
  '011_session_destination': sessionDestination,
  '012_webhook_trace': webhookTrace,
  '013_admin': admin,
  '014_order_events': orderEvents,
  '015_product_published': productPublished,
};

/**
 * Each migration runs in its own transaction (knex's default), without the statement timeout that bounds requests
 * (DATABASE_STATEMENT_TIMEOUT_MS): a migration may wait on locks, or build an index, for longer than a request may
 * take, and a start that fails half-way through its migrations helps nobody.
 */
function withoutStatementTimeout({ up, down }: Migration): Migration {
  return {
    async up(db) {
      await db.raw('set local statement_timeout = 0');
      await up(db);
    },
    down,
  };
}

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => withoutStatementTimeout(migrations[name]!),
};
