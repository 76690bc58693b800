// One result shape for every tool: `structuredContent` parsed through the tool's output schema (so it carries no stray
// keys and conforms to what tools/list advertised), the same JSON as a text block for clients that read only text,
// and plain-word notes. A failure is an `isError` result naming the bad argument, never a transport error.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { z } from 'zod';
import { isDatabaseUnavailable } from '../db/knex.js';
import { DomainError, NotFound } from '../domain/errors.js';
import type { Logger } from '../log.js';

export interface ToolDefinition<In extends z.ZodObject, Out extends z.ZodObject> {
  name: string;
  title: string;
  /** What the tool does and when to use it, written for an agent. */
  description: string;
  annotations: ToolAnnotations;
  inputSchema: In;
  outputSchema: Out;
  /** The argument a 404 from the domain is about (the looked-up key), so the message can name it. */
  lookupArgument?: string;
  /** Sentences for the agent after the JSON, e.g. that a human must pay. */
  notes?: (output: z.output<Out>) => string[];
  run: (args: z.output<In>) => Promise<unknown>;
}

function text(value: string): { type: 'text'; text: string } {
  return { type: 'text', text: value };
}

/** A business failure in words an agent can act on: which argument, what is wrong, what to do. */
function failureMessage(error: DomainError, lookupArgument: string | undefined): string {
  const argument = error.param ?? (error instanceof NotFound ? lookupArgument : undefined);
  const resolution = error.resolution ? ` ${error.resolution}` : '';
  return `${argument ? `Argument ${argument}: ` : ''}${error.message}${resolution}`;
}

/** isError results carry no structuredContent: clients would validate it against the success schema and throw. */
function errorResult(
  error: unknown,
  definition: ToolDefinition<z.ZodObject, z.ZodObject>,
  log: Logger,
): CallToolResult {
  if (error instanceof DomainError)
    return { isError: true, content: [text(failureMessage(error, definition.lookupArgument))] };
  if (isDatabaseUnavailable(error)) {
    log.warn({ err: error, tool: definition.name }, 'MCP tool failed: database unavailable');
    return { isError: true, content: [text('The store is temporarily unavailable. Transient: retry with backoff.')] };
  }
  log.error({ err: error, tool: definition.name }, 'MCP tool failed');
  return { isError: true, content: [text('An unexpected error occurred. Retry later; if it persists, report it.')] };
}

/**
 * Where in the arguments a string holds a NUL character, as an argument path (`items[0].sku`). PostgreSQL text cannot
 * hold one: such a value must be refused before any query is built from it, as REST refuses it with a 400.
 */
function nulCharacterAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) return value.map((item, index) => nulCharacterAt(item, `${path}[${index}]`)).find(Boolean);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value)
      .map(([key, item]) => nulCharacterAt(item, path ? `${path}.${key}` : key))
      .find(Boolean);
  }
  return undefined;
}

async function runTool(
  definition: ToolDefinition<z.ZodObject, z.ZodObject>,
  args: unknown,
  log: Logger,
): Promise<CallToolResult> {
  const nul = nulCharacterAt(args, '');
  if (nul)
    return {
      isError: true,
      content: [text(`Argument ${nul}: must not contain the NUL character (U+0000). Remove it and call again.`)],
    };
  try {
    const output = definition.outputSchema.parse(await definition.run(args as z.output<z.ZodObject>)) as Record<
      string,
      unknown
    >;
    const notes = definition.notes?.(output) ?? [];
    return { structuredContent: output, content: [text(JSON.stringify(output)), ...notes.map(text)] };
  } catch (error) {
    return errorResult(error, definition, log);
  }
}

/**
 * One JSON Schema validator for every per-request server: servers and transports must be fresh for each request
 * (stateless mode), but a validator holds no request data, and building one per request cost ~10% of a tool call.
 */
export const jsonSchemaValidator = new AjvJsonSchemaValidator();

export function registerTool<In extends z.ZodObject, Out extends z.ZodObject>(
  server: McpServer,
  log: Logger,
  definition: ToolDefinition<In, Out>,
): void {
  // Typed once here, where the definition is built; the SDK's conditional callback type cannot follow a generic schema.
  const erased = definition as unknown as ToolDefinition<z.ZodObject, z.ZodObject>;
  const { name, title, description, annotations, inputSchema, outputSchema } = erased;
  server.registerTool(name, { title, description, annotations, inputSchema, outputSchema }, (args) =>
    runTool(erased, args, log),
  );
}
