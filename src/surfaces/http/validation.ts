import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const common: Options = { allErrors: false, useDefaults: true, strict: false };

// Path and query values arrive as text, so they are coerced to the declared types. JSON bodies
// carry their own types: a number where a string belongs is a client error, not something to fix.
// Nor are body fields silently dropped: a closed schema (a map with a key pattern) rejects them.
const textParts = addFormats(new Ajv({ ...common, coerceTypes: 'array', removeAdditional: true }));
const jsonParts = addFormats(new Ajv({ ...common, coerceTypes: false, removeAdditional: false }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? jsonParts : textParts;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};
