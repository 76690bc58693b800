// Shopify's own UCP client against the service: @shopify/ucp-cli 0.9.0 (npm), with its managed platform profile at
// 2026-08-25 and the same release-snapshot profile pinned at 2026-04-08, runs discover, checkout create, get, update,
// complete and cancel against the real service behind a loopback TLS terminator (the CLI speaks only https to a
// business and trusts the test's self-signed certificate through NODE_EXTRA_CA_CERTS). Each step's JSON output is
// asserted, and the stored session is read back from the database after each change.
//
// The CLI needs Node >= 22.19 (its `engines`, and undici 8's), so it cannot be a devDependency while `npm ci
// --engine-strict` must pass on Node 20: the test installs the pinned version into a temporary prefix with npm (or
// uses UCP_CLI_BIN, a path to an installed `dist/bin.js`; test/support/node22-cli.ts). It runs where the test
// process's own Node is new enough (the PostgreSQL suite on Node 24 in .ci/run), because the service in this process
// must trust the certificate too (tls.setDefaultCACertificates, Node >= 22.19) to fetch the platform profile over
// https. On an older Node it is skipped, unless REQUIRE_NODE22_CLIS=true (.ci/run sets it for the Node 24 suite),
// when it fails instead.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProfiles, type ProfileServer } from '../src/conformance/profile.js';
import { installCli, nodeServesCli, requireNodeForCli } from './support/node22-cli.js';
import { PROTOCOL_ENV, protocolBodyProblems } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';
import {
  selfSignedCertificate,
  startTlsTerminator,
  type SelfSignedCertificate,
  type TlsTerminator,
} from './support/tls-terminator.js';

const CLI = { spec: '@shopify/ucp-cli@0.9.0', entry: 'dist/bin.js', binEnv: 'UCP_CLI_BIN' };
const TWO_PACK = 'variant_01tongue2pack';
const run = promisify(execFile);

requireNodeForCli(CLI.spec);

let cli: string;
let home: string;
let certificate: SelfSignedCertificate;
let business: TlsTerminator;
let profileTls: TlsTerminator;
let profiles: ProfileServer;
let api: TestService;
let cleanup: (() => Promise<void>)[] = [];

/** Runs the CLI with the test's state directory and trust, answering its JSON output (an error envelope too). */
async function ucp(...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, [cli, ...args, '--format', 'json'], {
    // The CLI prints whole profiles (every capability, keys, schemas' names): more than the 1 MiB default.
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      UCP_HOME: join(home, '.ucp'),
      NODE_EXTRA_CA_CERTS: certificate.certPath,
    },
    timeout: 60_000,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`ucp ${args.join(' ')} failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  return JSON.parse(stdout);
}

beforeAll(async () => {
  if (!nodeServesCli) return;
  home = await mkdtemp(join(tmpdir(), 'ucp-cli-'));
  cleanup.push(() => rm(home, { recursive: true, force: true }));
  cli = await installCli(CLI, join(home, 'prefix'));
  certificate = await selfSignedCertificate();
  cleanup.push(() => certificate.remove());
  // The service runs in this process: it fetches the platform profile over https from the terminator, so this
  // process trusts the test certificate beside the bundled roots (Node >= 22.19 / 24.5).
  const roots = tls as unknown as {
    getCACertificates(type: 'default'): string[];
    setDefaultCACertificates(certs: string[]): void;
  };
  roots.setDefaultCACertificates([...roots.getCACertificates('default'), certificate.cert]);

  // Each release's profile document exactly as the CLI writes it for that release (the managed profile's body).
  for (const version of ['2026-08-25', '2026-04-08'])
    await ucp('profile', 'init', '--name', `release-${version}`, '--version', version);
  const snapshot = async (version: string) =>
    JSON.parse(await readFile(join(home, '.ucp', 'profiles', `release-${version}`, 'profile.json'), 'utf8'));
  profiles = await serveProfiles({
    '/2026-08-25.json': await snapshot('2026-08-25'),
    '/2026-04-08.json': await snapshot('2026-04-08'),
  });
  profileTls = await startTlsTerminator(certificate, profiles.base);
  business = await startTlsTerminator(certificate);
  api = await startTestService({ env: { ...PROTOCOL_ENV, BASE_URL: business.url, UCP_NAMESPACE: 'com.example.shop' } });
  business.target(api.url);
}, 240_000);

afterAll(async () => {
  await business?.close();
  await profileTls?.close();
  await api?.close();
  await profiles?.close();
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** The stored session: its row and its lines' quantities. */
async function stored(id: string) {
  const { db } = api.service.deps;
  const cart = await db('carts').where({ id }).first();
  const lines = await db('cart_line_items').where({ cart_id: id }).orderBy('position').select('variant_id', 'quantity');
  return { status: cart?.status as string | undefined, lines };
}

/** The CLI's envelope of an operation: the answer is a UCP checkout in `version`, valid against its schemas. */
function checkoutOf(envelope: any, version: string) {
  expect(envelope.code, JSON.stringify(envelope).slice(0, 800)).toBeUndefined();
  // The CLI's envelope carries the answer's `ucp` beside the rest of it (`result`).
  const checkout = { ucp: envelope.ucp, ...envelope.result };
  expect(protocolBodyProblems('/ucp/checkout-sessions', 200, checkout)).toEqual([]);
  expect(checkout.ucp.version).toBe(version);
  return checkout;
}

const PROFILES = [
  // The managed profile (the default selection) advertising the test's copy of its document.
  {
    version: '2026-08-25',
    source: 'well-known',
    businessProfile: '/.well-known/ucp',
    selection: () => ['--profile-url', `${profileTls.url}/2026-08-25.json`],
  },
  // The CLI's own 2026-04-08 release profile, pinned as its SETUP reference says (profile init --version).
  {
    version: '2026-04-08',
    // The CLI finds the older release's business profile through /.well-known/ucp's supported_versions.
    source: 'supported_versions',
    businessProfile: '/ucp/profiles/2026-04-08',
    selection: () => ['--profile', 'release-2026-04-08', '--profile-url', `${profileTls.url}/2026-04-08.json`],
  },
];

describe.skipIf(!nodeServesCli).each(PROFILES)(
  '@shopify/ucp-cli 0.9.0 at UCP $version against the service over https',
  ({ version, source, businessProfile, selection }) => {
    it('discover, checkout create, get, update, complete and cancel, each answered in the version and stored', async () => {
      const on = () => ['--business', business.url, ...selection()];

      const discovered = await ucp('discover', ...on());
      expect(discovered.result.protocol).toMatchObject({
        version,
        source,
        agentProfileUrl: selection().at(-1),
        businessProfileUrl: `${business.url}${businessProfile}`,
      });
      expect(discovered.result.negotiated['dev.ucp.shopping']).toMatchObject({
        version,
        transport: 'mcp',
        endpoint: `${business.url}/ucp/mcp`,
      });
      expect(Object.keys(discovered.result.negotiated['dev.ucp.shopping'].tools)).toEqual(
        expect.arrayContaining([
          'create_checkout',
          'get_checkout',
          'update_checkout',
          'complete_checkout',
          'cancel_checkout',
        ]),
      );

      const created = checkoutOf(
        await ucp(
          'checkout',
          'create',
          ...on(),
          '--set',
          `/line_items/0/item/id=${TWO_PACK}`,
          '--set',
          '/line_items/0/quantity=1',
        ),
        version,
      );
      expect([created.status, created.line_items[0].item.id, created.line_items[0].quantity]).toEqual([
        'requires_escalation',
        TWO_PACK,
        1,
      ]);
      // The managed profile declares its capabilities without `spec` and `schema`: used, and told so.
      expect(created.messages.map((message: { code: string }) => message.code)).toContain(
        'profile_informative_fields_missing',
      );
      const { id } = created;
      expect(await stored(id)).toEqual({
        status: 'ready_for_payment',
        lines: [{ variant_id: TWO_PACK, quantity: 1 }],
      });

      const got = checkoutOf(await ucp('checkout', 'get', id, ...on()), version);
      expect([got.id, got.line_items[0].quantity, got.totals]).toEqual([id, 1, created.totals]);

      const updated = checkoutOf(
        await ucp(
          'checkout',
          'update',
          id,
          ...on(),
          '--input',
          JSON.stringify({ line_items: [{ item: { id: TWO_PACK }, quantity: 2 }] }),
        ),
        version,
      );
      expect(updated.line_items[0].quantity).toBe(2);
      const subtotal = (checkout: any) => checkout.totals.find((total: any) => total.type === 'subtotal').amount;
      expect(subtotal(updated)).toBe(2 * subtotal(created));
      expect(await stored(id)).toEqual({
        status: 'ready_for_payment',
        lines: [{ variant_id: TWO_PACK, quantity: 2 }],
      });

      // Payment is a human hand-off: complete answers requires_escalation with continue_url, which the CLI gives to
      // its escalation hook; nothing is charged and the session stays open for the buyer.
      const escalation = join(home, `escalation-${version}.json`);
      const completed = checkoutOf(
        await ucp(
          'checkout',
          'complete',
          id,
          ...on(),
          '--input',
          JSON.stringify({ payment: {} }),
          '--on-escalation',
          `cat > '${escalation}'`,
        ),
        version,
      );
      expect([completed.status, completed.continue_url]).toEqual(['requires_escalation', `${business.url}/pay/${id}`]);
      expect(completed.messages.map((message: { code: string }) => message.code)).toContain('payment_handoff_required');
      expect(JSON.parse(await readFile(escalation, 'utf8'))).toMatchObject({
        status: 'requires_escalation',
        url: completed.continue_url,
      });
      expect((await stored(id)).status).toBe('ready_for_payment');

      const canceled = checkoutOf(await ucp('checkout', 'cancel', id, ...on()), version);
      expect([canceled.id, canceled.status]).toEqual([id, 'canceled']);
      expect(await stored(id)).toEqual({ status: 'canceled', lines: [{ variant_id: TWO_PACK, quantity: 2 }] });
    }, 180_000);
  },
);
