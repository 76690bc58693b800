// The operator's command line (`npm run admin -- …`), as a function of its arguments: what the entry point
// (src/admin/cli.ts) runs, and what tests run against a service's own database. `clients create` talks to the database
// directly through the OAuth service (an admin client cannot be had any other way); the secret is printed once.
import { parseArgs } from 'node:util';
import type { Deps } from '../deps.js';
import { DomainError } from '../domain/errors.js';
import { createOperatorClient } from '../services/oauth.js';

export const USAGE = `usage: npm run admin -- clients create --name NAME --scope "SCOPE ..." [--json]

Creates an OAuth client_credentials client for the store's operator or its tools. Scopes: admin:orders,
admin:catalog, admin:promotions (and the agents' catalog:read, cart:write, orders:read). The client secret is shown
once and stored only as a hash. --json prints {"client_id", "client_secret", "scope"}. Docs: docs/admin.md.`;

export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

/** Runs one command; resolves to the exit code (0 done, 1 refused, 2 bad usage). */
export async function runAdminCommand(
  deps: Pick<Deps, 'db' | 'now' | 'log'>,
  argv: string[],
  io: CommandIo,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { name: { type: 'string' }, scope: { type: 'string' }, json: { type: 'boolean' } },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [area, action] = parsed.positionals;
  if (area !== 'clients' || action !== 'create' || parsed.positionals.length !== 2) {
    io.err(USAGE);
    return 2;
  }
  const { name, scope, json } = parsed.values;
  if (name === undefined || scope === undefined) {
    io.err(`--name and --scope are required.\n${USAGE}`);
    return 2;
  }
  try {
    const client = await createOperatorClient(deps, { name, scope });
    if (json) io.out(JSON.stringify(client));
    else
      io.out(
        [
          `client_id      ${client.client_id}`,
          `client_secret  ${client.client_secret}`,
          `scope          ${client.scope}`,
          '',
          'The client secret is shown only this once: store it now.',
        ].join('\n'),
      );
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    io.err(error.message);
    return 1;
  }
}
