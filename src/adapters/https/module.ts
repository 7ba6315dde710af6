import os from 'node:os';
import path from 'node:path';
import type http from 'node:http';
import { Type } from 'typebox';
import type { HttpsConfig } from '../../config.js';
import type { Clock, Timers } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { httpsErrors } from './errors.js';
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
  alwaysHttps: Type.Boolean({ description: 'Whether web pages on plain HTTP are sent to HTTPS (`https.settings`).' }),
});

/** The admin's choice, once the home's devices trust the CA: web pages on plain HTTP are sent to HTTPS. */
export interface HttpsSettings {
  id: 'https';
  alwaysHttps: boolean;
}

const HttpsSettingsSchema = Type.Object({ alwaysHttps: Type.Boolean({ description: 'Send browsers that open a web page (`/os`, `/admin`) over plain HTTP to the same page over HTTPS. API clients are never redirected.' }) });

/** HTTPS beside HTTP (docs/https.md): the local CA, the TLS server, its status, "always use HTTPS". */
export function httpsModule(deps: { config: HttpsConfig; host: string; dataDir: string; clock: Clock; timers: Timers; log: ModuleLog; settings: DocumentRepository<HttpsSettings> }) {
  let settings: HttpsSettings = { id: 'https', alwaysHttps: false };
  // Another instance's change (a cluster) applies here too.
  let unwatch: (() => void) | undefined;
  const localCa = new LocalCa(path.join(deps.dataDir, TLS_DIR), () => deps.clock.now());
  const service = new HttpsService({
    config: deps.config,
    host: deps.host,
    timers: deps.timers,
    log: deps.log,
    identity: () => lanIdentity(os.hostname(), os.networkInterfaces(), deps.config.extraNames),
    localCa,
  });
  return defineModule({
    name: 'https',
    needs: ['storage'],
    https: {
      service,
      /** Whether a web page asked for over plain HTTP goes to HTTPS: the admin said so, and HTTPS serves. */
      redirectsPages: () => settings.alwaysHttps && service.status().state === 'serving',
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
          handler: () => ({ ...service.status(), alwaysHttps: settings.alwaysHttps }) as never,
        }),
        settings: defineOperation({
          name: 'https.settings',
          summary: 'Turn "always use HTTPS" for the web pages on or off, once the home\'s devices trust the local CA.',
          description: 'Turning it on while HTTPS is not serving is 409 HTTPS_NOT_SERVING and changes nothing.',
          access: OS_ADMIN,
          input: HttpsSettingsSchema,
          output: HttpsSettingsSchema,
          handler: async ({ alwaysHttps }) => {
            const state = service.status().state;
            if (alwaysHttps && state !== 'serving') throw httpsErrors.HTTPS_NOT_SERVING({ state });
            settings = { id: 'https', alwaysHttps };
            await deps.settings.save(settings, deps.clock.now());
            return { alwaysHttps };
          },
        }),
      },
    },
    async start() {
      settings = (await deps.settings.get('https')) ?? settings;
      unwatch = deps.settings.watch?.((id, doc) => {
        if (id === 'https') settings = doc ?? { id: 'https', alwaysHttps: false };
      });
    },
    async stop() {
      unwatch?.();
      await service.stop();
    },
  });
}
