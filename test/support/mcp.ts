// MCP test helpers: an SDK client whose every HTTP exchange is validated against the contract, tool calls reduced to
// what a test asserts on, and a structural view of JSON Schemas for comparing a tool's schema with the contract's.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadDocument } from '../../src/document.js';
import { contractFetch } from './contract.js';
import type { TestService } from './service.js';

export type McpPath = '/catalog/mcp' | '/checkout/mcp';

/** An initialized SDK client on one of the MCP servers; SDK traffic goes through contractFetch. */
export async function connectMcp(api: TestService, path: McpPath): Promise<Client> {
  const client = new Client({ name: 'storefront-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, api.url), { fetch: contractFetch }));
  return client;
}

export interface ToolOutcome {
  isError: boolean;
  structured: any;
  texts: string[];
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as Array<{ type: string; text?: string }>;
  return {
    isError: result.isError === true,
    structured: result.structuredContent,
    texts: content.map((block) => block.text ?? ''),
  };
}

type Json = Record<string, any>;

function dereference(node: Json, root: Json): Json {
  while (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce((value: Json, segment: string) => value[segment], root);
  }
  return node;
}

/**
 * The structure of a JSON Schema without its annotations: for each object its property names, which are required and
 * whether others are forbidden; for each array its items. Scalars (nullable or not) are `scalar`. Two schemas with
 * equal shapes accept the same keys in the same places.
 */
export function schemaShape(schema: Json, root: Json = schema): unknown {
  const node = dereference(schema, root);
  if (node.properties) {
    return {
      required: [...(node.required ?? [])].sort(),
      closed: node.additionalProperties === false,
      properties: Object.fromEntries(
        Object.entries(node.properties as Json).map(([name, property]) => [name, schemaShape(property, root)]),
      ),
    };
  }
  if (node.items) return { items: schemaShape(node.items, root) };
  const branches = (node.anyOf ?? node.oneOf) as Json[] | undefined;
  if (branches) {
    const shapes = branches.map((branch) => schemaShape(branch, root));
    return shapes.every((shape) => shape === 'scalar') ? 'scalar' : { oneOf: shapes };
  }
  return 'scalar';
}

/** The shape of a component schema of the bundled contract. */
export function contractShape(name: string): unknown {
  const document = loadDocument() as Json;
  return schemaShape(document.components.schemas[name], document);
}
