import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import { Type } from 'typebox';
import type { HttpsConfig } from '../../config.js';
import type { Clock, Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { HttpsService } from './https-service.js';
import { lanIdentity, LocalCa } from './local-ca.js';

/** The folder of the local CA and the server certificate: beside secret.key, and like it never in a backup. */
export const TLS_DIR = 'tls';

const HttpsStatusSchema = Type.Object({
  state: Type.Union([Type.Literal('off'), Type.Literal('starting'), Type.Literal('serving'), Type.Literal('failed')]),
  port: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Optional(Type.String()),
  certificate: Type.Optional(
    Type.Object({
      source: Type.Union([Type.Literal('local-ca'), Type.Literal('files')]),
      subject: Type.String(),
      issuer: Type.String(),
      notAfter: Type.Integer({ description: 'When it expires (ms since the epoch); the local CA renews it 30 days before.' }),
      names: Type.Array(Type.String(), { description: 'The DNS names and IP addresses it covers.' }),
      fingerprint256: Type.String(),
    }),
  ),
  caFingerprint256: Type.Optional(Type.String({ description: "The local CA's SHA-256 fingerprint, to compare with what a phone shows when it installs the CA." })),
});

/** HTTPS beside HTTP (docs/https.md): the local CA, the TLS server, its status. */
export function httpsModule(deps: { config: HttpsConfig; host: string; dataDir: string; clock: Clock; timers: Timers; log: ModuleLog }) {
  const localCa = new LocalCa(path.join(deps.dataDir, TLS_DIR), () => deps.clock.now());
  const service = new HttpsService({
    config: deps.config,
    host: deps.host,
    clock: deps.clock,
    timers: deps.timers,
    log: deps.log,
    identity: () => lanIdentity(os.hostname(), os.networkInterfaces(), deps.config.extraNames),
    localCa,
  });
  return defineModule({
    name: 'https',
    needs: [],
    https: {
      service,
      /** Serves `target`'s routes over TLS too; after the hub is ready, so that making the CA costs the start nothing. */
      serve: (target: http.Server) => service.serve(target),
    },
    operations: {
      https: {
        status: defineOperation({
          name: 'https.status',
          summary: 'HTTPS beside HTTP: whether it serves, on which port, its certificate (the local CA\'s or the admin\'s files) and why not when it failed.',
          access: OS_ADMIN,
          input: Type.Object({}),
          output: HttpsStatusSchema,
          handler: () => service.status() as never,
        }),
      },
    },
    async stop() {
      await service.stop();
    },
  });
}
