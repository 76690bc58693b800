// Published CLIs that need Node >= 22.19 (@shopify/ucp-cli, MCP Inspector): as devDependencies their `engines` would
// break `npm ci --engine-strict` on Node 20, so a test installs the pinned version into a temporary prefix with npm
// when it runs (or takes an installed copy from an environment variable). Such a test runs where the test process's
// own Node is new enough (the PostgreSQL suite on Node 24 in .ci/run) and is skipped on an older one, unless
// REQUIRE_NODE22_CLIS=true (.ci/run sets it for the Node 24 suite), when it fails instead.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);

/** Whether this process's Node runs the CLIs (>= 22.19). */
export const nodeServesCli = major > 22 || (major === 22 && minor >= 19);

/**
 * Throws where the CLIs are required (REQUIRE_NODE22_CLIS=true) but this Node cannot run them: called at a test
 * file's top level, so the file fails rather than skips.
 */
export function requireNodeForCli(cli: string): void {
  if (process.env.REQUIRE_NODE22_CLIS === 'true' && !nodeServesCli)
    throw new Error(`REQUIRE_NODE22_CLIS=true, but ${cli} needs Node >= 22.19 and this is ${process.version}`);
}

export interface CliInstall {
  /** The package to install, pinned (`name@version`). */
  spec: string;
  /** The entry script inside the installed package, relative to its directory. */
  entry: string;
  /** An environment variable naming an installed entry script to use instead of installing. */
  binEnv: string;
}

/** The path of the CLI's entry script: from `binEnv`, or installed under `prefix` (a fresh temporary directory). */
export async function installCli({ spec, entry, binEnv }: CliInstall, prefix: string): Promise<string> {
  const installed = process.env[binEnv];
  if (installed) return installed;
  await run('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', spec], {
    timeout: 180_000,
  });
  const name = spec.slice(0, spec.lastIndexOf('@'));
  return join(prefix, 'node_modules', ...name.split('/'), entry);
}
