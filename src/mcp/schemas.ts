// The MCP tools' schemas. Where a REST body, parameter or response already says what a value is, the tool uses that
// very definition: the contract's component schema (or a parameter's schema), converted to zod. An MCP answer and a REST answer are then checked by
// one definition and cannot drift apart; stray keys are rejected (the components forbid additional properties).
import { z } from 'zod';
import type { components } from '../../codegen/types.js';
import { loadDocument } from '../document.js';

type JsonSchema = globalThis.Parameters<typeof z.fromJSONSchema>[0];
type Schemas = components['schemas'];
type SchemaName = keyof Schemas;
type Parameters = components['parameters'];
type ParameterName = keyof Parameters;

/** An object schema whose parsed value has the contract's type. */
export type ContractSchema<Name extends SchemaName> = z.ZodObject & z.ZodType<Schemas[Name]>;

let definitions: Record<string, unknown> | undefined;

/** The bundled document's components as JSON Schema `$defs`, so each `$ref` resolves inside one schema. */
function contractDefinitions(): Record<string, unknown> {
  if (!definitions) {
    const { components: bundled } = loadDocument() as { components: { schemas: Record<string, unknown> } };
    definitions = JSON.parse(
      JSON.stringify(bundled.schemas).replaceAll('"#/components/schemas/', '"#/$defs/'),
    ) as Record<string, unknown>;
  }
  return definitions;
}

const converted = new Map<SchemaName, z.ZodType>();

/** The contract's component `name` as a zod object schema; converted once per process (zod schemas are immutable). */
export function contractSchema<Name extends SchemaName>(name: Name): ContractSchema<Name> {
  let schema = converted.get(name);
  if (!schema) {
    const defs = contractDefinitions();
    const component = defs[name];
    if (!component) throw new Error(`The contract has no schema component ${name}; run npm run codegen`);
    const jsonSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      ...(component as object),
      $defs: defs,
    };
    schema = z.fromJSONSchema(jsonSchema as JsonSchema);
    // The SDK only lists (and validates against) object schemas; anything else would silently lose its outputSchema.
    if (!(schema instanceof z.ZodObject)) throw new Error(`Schema component ${name} is not an object schema`);
    converted.set(name, schema);
  }
  return schema as ContractSchema<Name>;
}

const parameters = new Map<ParameterName, z.ZodType>();

/**
 * The schema of the contract's parameter component `name` (its pattern, length and range limits, default), so a tool
 * argument accepts exactly what the REST parameter accepts. The MCP description, written for the tool, comes from
 * the caller.
 */
export function contractParameter<Name extends ParameterName>(name: Name): z.ZodType<Parameters[Name]> {
  let schema = parameters.get(name);
  if (!schema) {
    const { components: bundled } = loadDocument() as {
      components: { parameters: Record<string, { schema?: unknown }> };
    };
    const parameter = bundled.parameters[name];
    if (!parameter?.schema) throw new Error(`The contract has no parameter component ${name}; run npm run codegen`);
    schema = z.fromJSONSchema(parameter.schema as JsonSchema);
    parameters.set(name, schema);
  }
  return schema as z.ZodType<Parameters[Name]>;
}
