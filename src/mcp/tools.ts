// One result shape for every tool: `structuredContent` (the REST representation of the same data, which the tool's
// advertised output schema describes), the same JSON as a text block for clients that read only text, and plain-word
// notes. A failure is an `isError` result naming the bad argument, never a transport error. A tool's arguments are
// checked against its JSON Schema (the contract's) before it runs, so a value REST refuses never reaches a query.
// A tool whose answer is the same for every caller may keep its results in the read cache, as JSON text and as its
// UTF-8 bytes: a repeated call is then answered without running, serializing or encoding anything, and can be looked up
// without awaiting (`cached`), nor checking its arguments again: the checked cache key is remembered by their text.
import type { CallToolResult, Tool as ToolListing, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { LRUCache } from 'lru-cache';
import { isDatabaseUnavailable } from '../db/knex.js';
import { DomainError, NotFound, Unavailable } from '../domain/errors.js';
import { unstorableTextAt } from '../domain/text.js';
import type { ReadCache } from '../ports.js';
import type { Logger } from '../log.js';
import { canonicalize } from '../domain/canonical-json.js';
import { argumentChecker, singleTyped, type ObjectSchema } from './schemas.js';
import type { ValidatorRegistry } from '../validators.js';

export interface ToolDefinition<In, Out> {
  name: string;
  title: string;
  /** What the tool does and when to use it, written for an agent. */
  description: string;
  annotations: ToolAnnotations;
  inputSchema: ObjectSchema<In>;
  outputSchema: ObjectSchema<Out>;
  /** The argument a 404 from the domain is about (the looked-up key), so the message can name it. */
  lookupArgument?: string;
  /**
   * What to do about a bad argument, in this server's terms (which tool lists valid values), by argument; `items`
   * covers `items[0].id` and the like. Replaces the REST advice the domain's errors carry.
   */
  advice?: Record<string, string>;
  /** The argument standing for a REST header a domain error names (`Idempotency-Key` is `idempotency_key`). */
  headerArguments?: Record<string, string>;
  /** Sentences for the agent after the JSON, e.g. that a human must pay. */
  notes?: (output: Out) => string[];
  run: (args: In) => Promise<Out>;
}

/** A tool ready to serve: its tools/list entry and its call. */
export interface Tool {
  readonly name: string;
  readonly listing: ToolListing;
  /** The result as JSON text; `log` is asked for only when something must be logged. */
  call(args: unknown, log: () => Logger): Promise<string>;
  /**
   * A cached tool's result for these arguments as UTF-8 JSON, when the read cache holds it (never runs the tool): the
   * bytes a cached call sends, encoded once when the result was stored rather than on every answer.
   */
  cached?(args: unknown): Buffer | undefined;
}

/**
 * How many arguments texts a cached tool remembers the checked cache key of, and how many characters (texts and keys)
 * at most: a few common questions are asked over and over; a flood of distinct ones must not grow the process.
 */
const CHECKED_KEYS_MAX = 1_000;
const CHECKED_KEYS_MAX_CHARACTERS = 256 * 1024;

/** A result kept in the read cache: its text for the general chain, its bytes for the cached-call path. */
interface CachedResult {
  text: string;
  bytes: Buffer;
}

function text(value: string): { type: 'text'; text: string } {
  return { type: 'text', text: value };
}

/** The advice for `argument` (`items[0].id` is advised as `items`), if the tool has any. */
function adviceFor(advice: Record<string, string> | undefined, argument: string | undefined): string | undefined {
  if (!advice || argument === undefined) return undefined;
  return advice[argument] ?? advice[argument.split(/[.[]/)[0]!];
}

/** A business failure in words an agent can act on: which argument, what is wrong, what to do with these tools. */
function failureMessage(error: DomainError, definition: ToolDefinition<never, never>): string {
  const param = error.param === undefined ? undefined : (definition.headerArguments?.[error.param] ?? error.param);
  const argument = param ?? (error instanceof NotFound ? definition.lookupArgument : undefined);
  const advice = adviceFor(definition.advice, argument);
  return `${argument ? `Argument ${argument}: ` : ''}${error.message}${advice ? ` ${advice}` : ''}`;
}

/** isError results carry no structuredContent: clients would validate it against the success schema and throw. */
function errorResult(error: unknown, definition: ToolDefinition<never, never>, log: () => Logger): CallToolResult {
  if (error instanceof Unavailable) {
    // The REST Retry-After, in words: a tool result has no header.
    return {
      isError: true,
      content: [text(`${error.message} Transient: retry after ${error.retryAfterSeconds} seconds.`)],
    };
  }
  if (error instanceof DomainError) return { isError: true, content: [text(failureMessage(error, definition))] };
  if (isDatabaseUnavailable(error)) {
    log().warn({ err: error, tool: definition.name }, 'MCP tool failed: database unavailable');
    return { isError: true, content: [text('The store is temporarily unavailable. Transient: retry with backoff.')] };
  }
  log().error({ err: error, tool: definition.name }, 'MCP tool failed');
  return { isError: true, content: [text('An unexpected error occurred. Retry later; if it persists, report it.')] };
}

function invalidArgument(argument: string, message: string): CallToolResult {
  return { isError: true, content: [text(`Argument ${argument}: ${message}`)] };
}

/** An argument path (`items[0].sku`) from the segments of unstorableTextAt. */
function argumentPath(segments: Array<string | number>): string {
  return segments.reduce<string>(
    (path, segment) => (typeof segment === 'number' ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment),
    '',
  );
}

type CheckedArguments<In> = { ok: true; value: In } | { ok: false; result: CallToolResult };

/**
 * Compiles a tool's input schema once (with the process's validators) and builds its tools/list entry once. With `readCache`, its
 * results are kept there as JSON text, keyed by its name and its validated arguments (defaults applied, so equal
 * questions share one entry); a failure is not kept. Only for tools whose answer is the same for every caller.
 */
export function defineTool<In, Out>(
  definition: ToolDefinition<In, Out>,
  validators: ValidatorRegistry,
  readCache?: ReadCache,
): Tool {
  const { name, title, description, annotations, inputSchema, outputSchema } = definition;
  const check = argumentChecker(validators, name, inputSchema);
  const erased = definition as unknown as ToolDefinition<never, never>;

  function checkArguments(args: unknown): CheckedArguments<In> {
    const given = args ?? {};
    const unstorable = unstorableTextAt(given);
    if (unstorable)
      return {
        ok: false,
        result: invalidArgument(
          argumentPath(unstorable),
          'must not contain a NUL character (U+0000) or an unpaired surrogate. Remove it and call again.',
        ),
      };
    const checked = check(given);
    if (!checked.ok)
      return {
        ok: false,
        result: { isError: true, content: [text(`Invalid arguments: ${checked.message} Fix it and call again.`)] },
      };
    return { ok: true, value: checked.value };
  }

  async function succeed(args: In): Promise<string> {
    const output = await definition.run(args);
    const notes = definition.notes?.(output) ?? [];
    const result: CallToolResult = {
      structuredContent: output as Record<string, unknown>,
      content: [text(JSON.stringify(output)), ...notes.map(text)],
    };
    return JSON.stringify(result);
  }

  const storable = (text: string): CachedResult => ({ text, bytes: Buffer.from(text) });
  const cacheKey = (args: In) => `tools/call ${name} ${canonicalize(args)}`;

  /**
   * The cache key of arguments the tool accepts, remembered by their JSON text as parsed: a repeated question is not
   * checked nor canonicalized again (each allocated ~1.3 kB per cached call). Equal texts are equal values, since
   * JSON.stringify writes every string, key and key order as it is, except for numbers JSON cannot hold (1e400 parses
   * as Infinity, written null): a text with null in it is never remembered. -0 is written 0, which every check and
   * canonicalize take for 0 already. Arguments refused are not remembered: they are checked again on every call.
   */
  const checkedKeys = new LRUCache<string, string>({
    max: CHECKED_KEYS_MAX,
    maxSize: CHECKED_KEYS_MAX_CHARACTERS,
    sizeCalculation: (checkedKey, argumentsText) => argumentsText.length + checkedKey.length,
  });
  function cachedKey(args: unknown): string | undefined {
    const argumentsText = JSON.stringify(args ?? {});
    const remembered = checkedKeys.get(argumentsText);
    if (remembered !== undefined) return remembered;
    const checked = checkArguments(args);
    if (!checked.ok) return undefined;
    const key = cacheKey(checked.value);
    if (!argumentsText.includes('null')) checkedKeys.set(argumentsText, key);
    return key;
  }

  return {
    name,
    listing: singleTyped({ name, title, description, annotations, inputSchema, outputSchema }) as ToolListing,
    async call(args, log) {
      const checked = checkArguments(args);
      if (!checked.ok) return JSON.stringify(checked.result);
      const { value } = checked;
      try {
        if (!readCache) return await succeed(value);
        return (await readCache.fetchValue(cacheKey(value), () => succeed(value).then(storable))).text;
      } catch (error) {
        return JSON.stringify(errorResult(error, erased, log));
      }
    },
    ...(readCache && {
      cached(args: unknown) {
        const key = cachedKey(args);
        return key === undefined ? undefined : readCache.peekValue<CachedResult>(key)?.bytes;
      },
    }),
  };
}
