import SwaggerParser from '@apidevtools/swagger-parser';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';

interface Operation {
  operationId?: string;
  responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface Document {
  openapi: string;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation> & { description?: string }>;
  components: { schemas: Record<string, unknown> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

let server: TestServer;
let served: Document;

beforeAll(async () => {
  server = await startServer();
  const res = await server.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  served = (await res.json()) as Document;
});
afterAll(async () => server?.close());

function operations(doc: Document): Array<{ path: string; method: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => m in item).map((method) => ({ path, method, op: item[method] as Operation })),
  );
}

describe('the served OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (swagger-parser)', async () => {
    // validate() dereferences in place: it gets a copy, so the checks below see the document as served.
    await expect(SwaggerParser.validate(structuredClone(served) as never)).resolves.toBeDefined();
    expect(served.openapi).toBe('3.1.0');
  });

  it('lints with no error under Redocly\'s recommended rules', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-openapi-lint-'));
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(served));
      const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
      // The exit code is not awaited as such: with errors it is 1, and the report says which.
      const run = await promisify(execFile)(process.execPath, [cli, 'lint', '--extends=recommended', '--format=json', file], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names its servers and gives every operation a unique operationId', () => {
    expect(served.servers?.length).toBeGreaterThan(0);
    const ops = operations(served);
    expect(ops.length).toBeGreaterThan(100);
    const ids = ops.map(({ path, method, op }) => {
      expect(op.operationId, `${method.toUpperCase()} ${path} has an operationId`).toMatch(/^[A-Za-z0-9_.]+$/);
      return op.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents a 4XX answer in the surface error body on every operation', () => {
    for (const { path, method, op } of operations(served)) {
      const ref = op.responses?.['4XX']?.content?.['application/json']?.schema?.$ref;
      const appApi = /^\/(app|api)\//.test(path) && !/^\/(app|api)\/os\//.test(path);
      expect(ref, `${method.toUpperCase()} ${path}`).toBe(appApi ? '#/components/schemas/AppFailureEnvelope' : '#/components/schemas/ErrorBody');
    }
    expect(Object.keys(served.components.schemas)).toEqual(expect.arrayContaining(['ErrorBody', 'AppFailureEnvelope']));
  });

  it('keeps JSON Schema 2020-12 keywords: numeric exclusiveMinimum, const', () => {
    const text = JSON.stringify(served);
    expect(text).toMatch(/"exclusiveMinimum":0[,}]/);
    expect(text).not.toMatch(/"exclusiveMinimum":(true|false)/);
    expect(text).not.toContain('"nullable"');
  });

  it('hides the document and the UI, and writes no path with a trailing slash', () => {
    const paths = Object.keys(served.paths);
    expect(paths).not.toContain('/openapi.json');
    expect(paths.filter((p) => p.startsWith('/docs'))).toEqual([]);
    expect(paths.filter((p) => p.length > 1 && p.endsWith('/'))).toEqual([]);
    expect(paths).toContain('/os');
  });

  it('says which route answers a path that fits two templates', () => {
    for (const base of ['/app/os', '/api/os', '/v1/os']) {
      const note = served.paths[`${base}/programs/{id}/runs`]?.description;
      expect(note).toContain(`${base}/programs/runs/runs`);
      expect(note).toContain(`sends it to \`${base}/programs/runs/{runId}\``);
      expect(served.paths[`${base}/programs/runs/{runId}`]?.description).toContain(`${base}/programs/{id}/runs`);
    }
  });
});
