import fs from 'node:fs';
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { operationIdFor, osApiCredential, osRoutes, type OsApiOptions } from './options.js';

/** Integration releases (docs/fleet.md): the spec's routes, plus publish and import. */
export const releaseRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { releases } = hub.ops;
  const route = osRoutes(app, hub, base, ['integration-releases']);
  route('GET', '/integration-releases', releases.list);
  route('POST', '/integration-releases/save', releases.save);
  route('POST', '/integration-releases/import', releases.importPackage, { successStatus: 201 });
  route('GET', '/integration-releases/:key', releases.get);
  route('POST', '/integration-releases/:key/submit', releases.submit);
  route('POST', '/integration-releases/:key/unsubmit', releases.unsubmit);
  route('POST', '/integration-releases/:key/publish', releases.publish);
  route('POST', '/integration-releases/:key/rollback', releases.rollback);
  app.get(
    '/integration-releases/:key/submission-package',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: ['integration-releases'],
        operationId: operationIdFor(base, releases.submissionPackage.name),
        summary: 'Download the submission package of a version (`?version=`, else the current one): files/, checksums.json (SHA-256 by path) and release.json, as .tar.gz.',
        params: Type.Object({ key: Type.String() }),
        querystring: Type.Object({ version: Type.Optional(Type.String()) }),
        produces: ['application/gzip'],
        response: { 200: Type.String({ description: 'The .tar.gz.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const built = (await hub.operations.invoke(
        releases.submissionPackage.name,
        { text: { params: request.params as Record<string, unknown>, querystring: request.query as Record<string, unknown> } },
        callerOf(request, osApiCredential),
      )) as { file: string; name: string };
      const data = await fs.promises.readFile(built.file);
      return reply.type('application/gzip').header('content-disposition', `attachment; filename="${built.name}"`).send(data);
    },
  );
};
