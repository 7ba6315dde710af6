import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../../platform/errors.js';
import type { CallInput, Operation, OperationRegistry } from '../../../platform/operations.js';
import { callerOf, type CredentialReader } from '../credentials.js';
import { ErrorBody } from '../errors.js';

/** Whether the request comes from a browser page (a form post or a navigation), not an API client. */
export const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

/** A file of a multipart form. */
export interface UploadedFile {
  filename: string;
  data: Buffer;
}

interface MultipartPart {
  type: 'field' | 'file';
  value?: unknown;
  filename?: string;
}

const isPart = (v: unknown): v is MultipartPart => v !== null && typeof v === 'object' && ((v as MultipartPart).type === 'field' || (v as MultipartPart).type === 'file') && 'fieldname' in v;

function partValue(part: MultipartPart): unknown {
  if (part.type === 'field') return part.value;
  const data = Buffer.isBuffer(part.value) ? part.value : Buffer.alloc(0);
  // A file input left empty still sends a part, with no name and no bytes.
  if (!part.filename && data.length === 0) return undefined;
  return { filename: part.filename ?? '', data } satisfies UploadedFile;
}

/** The fields of a posted form: url-encoded, multipart (fields as strings, files as UploadedFile) or JSON. */
export function formFields(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === null || body === undefined) return {};
  if (typeof body !== 'object' || Array.isArray(body)) return { __invalid: body };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (key === '_csrf') continue;
    if (Array.isArray(value) && value.every(isPart)) out[key] = value.map(partValue).filter((v) => v !== undefined);
    else if (isPart(value)) {
      const v = partValue(value);
      if (v !== undefined) out[key] = v;
    } else out[key] = value;
  }
  return out;
}

/** A file field of a multipart form, when one was chosen. */
export function file(fields: Record<string, unknown>, name: string): UploadedFile | undefined {
  const value = fields[name];
  return value && typeof value === 'object' && Buffer.isBuffer((value as UploadedFile).data) ? (value as UploadedFile) : undefined;
}

/** The URL with `?done=` or `?error=` for the page to show once. */
export function withFlash(url: string, kind: 'done' | 'error', text: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${kind}=${encodeURIComponent(text.slice(0, 400))}`;
}

export interface FormAction {
  url: string;
  summary: string;
  operation: Operation;
  /** Reads the form's fields (and path params) into the operation's input. */
  input(fields: Record<string, unknown>, params: Record<string, string>): CallInput;
  /** The page a browser returns to. */
  back(params: Record<string, string>, fields: Record<string, unknown>): string;
  /** Where a browser goes after success, when not back to its page (a function: from the result and fields). */
  doneUrl?: string | ((result: unknown, fields: Record<string, unknown>) => string);
  /** The sentence shown after success. */
  done(result: unknown, fields: Record<string, unknown>): string;
  /** The media types the form posts (url-encoded, and multipart where it sends files). */
  consumes?: string[];
}

/**
 * A form's POST route: the fields become one operation's input, invoked through the registry
 * with the session's credential. A browser is sent back to its page with the outcome (303, the
 * Post/Redirect/Get pattern, so a reload does not post twice); an API client gets the operation's
 * result as JSON, or the CONTRACT error body.
 */
export function bindForm(app: FastifyInstance, registry: OperationRegistry, credential: CredentialReader, tags: string[], action: FormAction): void {
  app.route({
    method: 'POST',
    url: action.url,
    config: { access: 'authenticated' },
    validatorCompiler: () => () => true,
    schema: {
      summary: action.summary,
      description: `A form of the web panel: runs operation \`${action.operation.name}\`. A browser (Accept: text/html) is redirected (303) back to its page with \`done\` or \`error\` in the query; other clients get the result as JSON.`,
      tags,
      consumes: action.consumes ?? ['application/x-www-form-urlencoded', 'application/json'],
      body: Type.Object({ _csrf: Type.Optional(Type.String({ description: 'The CSRF token of the session (or header x-csrf-token).' })) }, { additionalProperties: true }),
      response: { 200: Type.Object({ ok: Type.Literal(true), result: Type.Unknown() }), 303: Type.Null({ description: 'Back to the page.' }), '4xx': ErrorBody, '5xx': ErrorBody },
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const params = (request.params ?? {}) as Record<string, string>;
      const fields = formFields(request);
      const html = wantsHtml(request);
      try {
        const result = await registry.invoke(action.operation.name, action.input(fields, params), callerOf(request, credential));
        if (html) {
          const next = typeof action.doneUrl === 'function' ? action.doneUrl(result, fields) : (action.doneUrl ?? action.back(params, fields));
          return reply.redirect(withFlash(next, 'done', action.done(result, fields)), 303);
        }
        return { ok: true as const, result };
      } catch (err) {
        if (!html || !(err instanceof DomainError) || err.kind === 'unauthenticated' || err.kind === 'internal') throw err;
        request.failureCode = err.code;
        const detail = Array.isArray(err.details) && err.details.length > 0 ? ` (${(err.details as Array<{ field?: string; message?: string }>).map((d) => [d.field, d.message].filter(Boolean).join(' ')).join('; ')})` : '';
        return reply.redirect(withFlash(action.back(params, fields), 'error', `${err.message}${detail}`), 303);
      }
    },
  });
}

/** A form text field, trimmed; undefined when absent or empty. */
export function text(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  if (typeof value !== 'string') return value === undefined || value === null ? undefined : (value as string);
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** A checkbox: present (any value but "false"/"0") means true. */
export const checked = (fields: Record<string, unknown>, name: string) => {
  const value = fields[name];
  if (typeof value === 'boolean') return value;
  return value !== undefined && value !== 'false' && value !== '0' && value !== '';
};

/** Only the fields that have a value. */
export function defined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
}

/** A number field: the number when the text is one, else the text as sent (so validation names it). */
export function num(fields: Record<string, unknown>, name: string): number | string | undefined {
  const value = text(fields, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}
