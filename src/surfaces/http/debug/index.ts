import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { ErrorBody } from '../errors.js';

export interface RouteEntry {
  method: string;
  url: string;
  access: string;
}

/** Development-only introspection; registered only when NODE_ENV=development. */
export const debugApi: FastifyPluginAsync<{ hub: Hub; routes: RouteEntry[] }> = async (app, { hub, routes }) => {
  const common = { tags: ['debug'], security: [] as never[] };
  app.get(
    '/routes',
    {
      config: { access: 'public' },
      schema: {
        ...common,
        summary: 'Every registered route with its access rule.',
        response: { 200: Type.Object({ routes: Type.Array(Type.Object({ method: Type.String(), url: Type.String(), access: Type.String() })) }), '4xx': ErrorBody },
      },
    },
    async () => ({ routes }),
  );
  app.get(
    '/config',
    {
      config: { access: 'public' },
      schema: { ...common, summary: 'Effective configuration, secrets removed.', response: { 200: Type.Record(Type.String(), Type.Unknown()), '4xx': ErrorBody } },
    },
    async () => ({ ...hub.config, adminPassword: hub.config.adminPassword === undefined ? null : '<set>' }),
  );
};
