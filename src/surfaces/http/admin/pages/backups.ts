import fs from 'node:fs';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../../hub.js';
import { callerOf } from '../../credentials.js';
import { ErrorBody } from '../../errors.js';
import { file } from '../../web/forms.js';
import { csrfField, html } from '../../web/html.js';
import { adminCredential } from '../credential.js';
import { adminForm, bindPage } from '../panel-kit.js';
import { megabytes } from './system.js';

interface BackupInfo {
  name: string;
  bytes: number;
  createdAt: number;
  sha256: string;
  file: string;
}

const BACK = '/admin/panel/backups';

/** Backups: take one, download it, delete it; restore one from a file (the service restarts into it). */
export function backupsPage(app: FastifyInstance, hub: Hub): void {
  const { backups } = hub.ops;
  bindPage(app, hub, {
    url: '/panel/backups',
    title: 'Backups',
    summary: 'Admin panel: take, download and delete backups; restore one.',
    async build({ call, csrf }) {
      const { backups: list } = await call<{ backups: BackupInfo[] }>(backups.list);
      return html`
<section aria-labelledby="take"><h2 id="take">Take a backup</h2>
<p class="muted">The database (an online copy, consistent at one instant; the hub keeps running) and the drivers folder, in one <code>.tar.gz</code>.</p>
<form method="post" action="/admin/panel/backups/create">${csrfField(csrf)}<button>Back up now</button></form></section>
<section aria-labelledby="kept"><h2 id="kept">Kept on this hub</h2>
${list.length === 0 ? html`<p class="muted">None yet.</p>` : ''}
<ul>${list.map(
        (b) => html`<li data-backup="${b.name}"><a href="/admin/backups/${b.name}/download" download>${b.name}.tar.gz</a> · ${megabytes(b.bytes)} · ${new Date(b.createdAt).toISOString()}
<small class="muted">sha256 ${b.sha256.slice(0, 16)}…</small>
<form method="post" action="/admin/panel/backups/${b.name}/remove" style="display:inline">${csrfField(csrf)}<button class="secondary" aria-label="Delete ${b.name}">Delete</button></form></li>`,
      )}</ul></section>
<section aria-labelledby="restore"><h2 id="restore">Restore</h2>
<p>Restoring replaces the database and drivers folder with the backup's and restarts the service (a few seconds). The backup is checked first; a bad one changes nothing. What it replaces is kept under <code>backups/pre-restore-…</code> in the data folder.</p>
<form method="post" action="/admin/panel/backups/restore" enctype="multipart/form-data">${csrfField(csrf)}
<label>Backup file <input type="file" name="backup" accept=".tar.gz,.tgz,application/gzip" required></label><button class="danger">Restore and restart</button></form></section>`;
    },
  });

  adminForm(app, hub, {
    url: '/panel/backups/create',
    summary: 'Admin panel form: take a backup.',
    operation: backups.create,
    input: () => ({ json: {} }),
    back: () => BACK,
    done: (r) => `Backup ${(r as BackupInfo).name} taken (${megabytes((r as BackupInfo).bytes)}).`,
  });
  adminForm(app, hub, {
    url: '/panel/backups/:name/remove',
    summary: 'Admin panel form: delete a backup.',
    operation: backups.remove,
    input: (_f, p) => ({ json: {}, text: { params: { name: p.name } } }),
    back: () => BACK,
    done: (r) => `Backup ${(r as BackupInfo).name} deleted.`,
  });
  adminForm(app, hub, {
    url: '/panel/backups/restore',
    summary: 'Admin panel form: restore a backup (multipart field `backup`); the service restarts into it.',
    consumes: ['multipart/form-data'],
    operation: backups.restore,
    input: (f) => ({ json: { archive: (file(f, 'backup')?.data ?? Buffer.alloc(0)).toString('base64') } }),
    back: () => BACK,
    doneUrl: '/admin/panel/restoring',
    done: () => 'The backup checked out; the service is restarting into it.',
  });

  // While the service restarts: a page that waits for it and then goes to the panel.
  app.get(
    '/panel/restoring',
    {
      config: { access: 'authenticated' },
      schema: { tags: ['admin'], summary: 'Admin panel: waits for the service to come back from a restore.', produces: ['text/html'], response: { 200: Type.String(), '4xx': ErrorBody } },
    },
    async (request, reply) => {
      await hub.operations.invoke(hub.ops.auth.me.name, {}, callerOf(request, adminCredential));
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Restoring · Admin · Home Control</title></head>
<body><main><h1>Restoring</h1><p role="status">The backup checked out. The service is restarting into it; this page goes on when it is back.</p></main>
<script>const wait=()=>fetch('/readyz').then(r=>r.ok?location.assign('/admin/'):setTimeout(wait,500),()=>setTimeout(wait,500));setTimeout(wait,1500);</script></body></html>`;
    },
  );

  app.get(
    '/backups/:name/download',
    {
      config: { access: 'authenticated' },
      schema: {
        tags: ['admin'],
        summary: 'Download a kept backup (.tar.gz).',
        params: Type.Object({ name: Type.String() }),
        produces: ['application/gzip'],
        response: { 200: Type.String({ description: 'The .tar.gz.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const info = (await hub.operations.invoke(backups.get.name, { text: { params: request.params as Record<string, unknown> } }, callerOf(request, adminCredential))) as BackupInfo;
      return reply
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="${info.name}.tar.gz"`)
        .header('content-length', String(info.bytes))
        .header('x-content-sha256', info.sha256)
        .send(fs.createReadStream(info.file));
    },
  );
}
