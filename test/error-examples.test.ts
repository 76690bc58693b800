// Every 400 example in the contract is one its operation can produce: the parameter, header or body field it blames is
// one the operation takes, and a code tied to one input (an API-Version, a grant type, a body) belongs to an operation
// that has that input. A shared example that names another operation's parameter misleads every reader of the docs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../src/paths.js';

const document = JSON.parse(readFileSync(projectPath('codegen', 'openapi.json'), 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** The input each code is about, for the codes whose error bodies do not name it. */
const INPUT_OF_CODE: Record<string, string> = {
  unsupported_api_version: 'API-Version',
  invalid_body: 'body',
  invalid_content_type: 'Content-Type',
  invalid_signature: 'Stripe-Signature',
  unsupported_grant_type: 'grant_type',
  invalid_scope: 'scope',
  invalid_client_metadata: 'grant_types',
  invalid_profile_url: 'UCP-Agent',
  '-32700': 'body', // JSON-RPC parse error
  '-32022': 'MCP-Protocol-Version', // MCP 2026-07-28: unsupported protocol version (the header)
  '-32020': 'Mcp-Name', // MCP 2026-07-28: a header that does not mirror the body (the example's is Mcp-Name)
};

function resolve(node: any): any {
  if (!node?.$ref) return node;
  return resolve(
    (node.$ref as string)
      .slice(2)
      .split('/')
      .reduce((parent: any, key) => parent[key], document),
  );
}

/** The schemas a value at this point may match: the node itself and its composed branches. */
function branches(schema: any): any[] {
  const node = resolve(schema);
  if (!node) return [];
  return [node, ...['allOf', 'anyOf', 'oneOf'].flatMap((key) => (node[key] ?? []).flatMap(branches))];
}

/** Whether `items[0].quantity` (or UCP's `$.line_items[0].quantity`) names a field of the body schema. */
function bodyHasField(schema: any, path: string): boolean {
  const segments = path
    .replace(/^\$\.?/, '')
    .split(/\.|\[(\d+)\]/)
    .filter(Boolean);
  let candidates = branches(schema);
  for (const segment of segments) {
    candidates = candidates.flatMap((node) =>
      /^\d+$/.test(segment) ? branches(node.items) : branches(node.properties?.[segment]),
    );
    if (candidates.length === 0) return false;
  }
  return true;
}

function acceptsInput(operation: any, input: string): boolean {
  const parameters = (operation.parameters ?? []).map(resolve);
  if (parameters.some((parameter: any) => parameter.name.toLowerCase() === input.toLowerCase())) return true;
  const body = resolve(operation.requestBody);
  if (!body) return false;
  if (input === 'body' || input === 'Content-Type') return true;
  return Object.values(body.content).some((media: any) => bodyHasField(media.schema, input));
}

/** What an error example blames, in whichever shape its surface uses. */
function blamed(example: any): { code: string | undefined; param: string | undefined } {
  if (example.error && typeof example.error === 'object')
    return {
      code: example.error.code === undefined ? undefined : String(example.error.code),
      param: example.error.param,
    };
  return { code: example.code ?? example.error, param: example.param ?? example.path };
}

function badRequestExamples(): Array<{ operationId: string; operation: any; name: string; value: any }> {
  return Object.values(document.paths).flatMap((item: any) =>
    METHODS.filter((method) => item[method]?.responses?.['400']).flatMap((method) => {
      const operation = item[method];
      const response = resolve(operation.responses['400']);
      return Object.values(response.content ?? {})
        .flatMap((media: any) => [
          ...(media.example === undefined ? [] : [{ name: 'example', value: media.example }]),
          ...Object.entries(media.examples ?? {}).map(([name, example]) => ({ name, value: resolve(example).value })),
        ])
        .map((example) => ({ operationId: operation.operationId as string, operation, ...example }));
    }),
  );
}

describe('400 examples', () => {
  const examples = badRequestExamples();

  it('are found', () => {
    expect(examples.length).toBeGreaterThan(20);
  });

  it.each(examples.map((example) => [example.operationId, example.name, example] as const))(
    '%s: %s blames an input the operation has',
    (_operationId, _name, { operation, value }) => {
      const { code, param } = blamed(value);
      const implied = code === undefined ? undefined : INPUT_OF_CODE[code];
      expect(
        param ?? implied,
        `example ${JSON.stringify(value)} names neither a param nor a code tied to one`,
      ).toBeDefined();
      for (const input of [param, implied].filter((input) => input !== undefined))
        expect(acceptsInput(operation, input), `${code} about ${input}`).toBe(true);
    },
  );
});
