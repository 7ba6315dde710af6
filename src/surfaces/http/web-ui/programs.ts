import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { programAsYaml } from '../../../domain/programs/yaml-export.js';
import { DomainError } from '../../../platform/errors.js';
import type { Program } from '../../../domain/programs/model.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { formFields, text, wantsHtml, withFlash } from '../web/forms.js';
import { csrfField, html, page, type Html } from '../web/html.js';
import { bindAreaForm, bindPage, sessionCsrf } from '../web/pages.js';
import { HOME_AREA, householdCredential } from './area.js';

type ProgramView = Program & { nextFireAt?: number | null };

const NEW_PROGRAM = `name: New program
steps:
  - delay: 1s
`;

/** The YAML with numbered lines, the line of an error marked and its message beside it. */
function annotated(yaml: string, error?: { line?: number; column?: number; message: string }): Html {
  const lines = yaml.split('\n');
  return html`<ol class="yaml" aria-label="The YAML, line by line">${lines.map((line, i) => {
    const here = error?.line === i + 1;
    return html`<li${here ? html` class="error-line" id="error-line"` : ''}><code>${line || ' '}</code>${here ? html`<strong class="err" role="alert"> ← ${error.message}</strong>` : ''}</li>`;
  })}</ol>`;
}

function editor(program: { id?: string; name?: string }, yaml: string, csrf: string, canEdit: boolean, error?: { line?: number; column?: number; message: string }): Html {
  return html`<style>ol.yaml{font:13px ui-monospace,monospace;background:var(--code);padding:.4rem .4rem .4rem 3rem;border-radius:.3rem;overflow-x:auto}ol.yaml li{white-space:pre}.error-line{background:var(--bad-bg)}.err{color:var(--bad);white-space:normal}</style>
${error ? html`<p class="flash error" role="alert">${error.line ? `Line ${error.line}${error.column ? `, column ${error.column}` : ''}: ` : ''}${error.message}</p>` : ''}
${canEdit
    ? html`<form method="post" action="/os/programs/save">${csrfField(csrf)}${program.id ? html`<input type="hidden" name="id" value="${program.id}">` : ''}
<label for="yaml">Program (YAML; see the format in the documentation)</label><textarea id="yaml" name="yaml" rows="${Math.max(10, yaml.split('\n').length + 2)}" spellcheck="false">${yaml}</textarea>
<button>Save</button></form>`
    : html`<p class="muted">Only administrators edit programs.</p>`}
${error ? annotated(yaml, error) : ''}`;
}

/** Programs: run them; edit their YAML (errors shown at their line). */
export function programsPage(app: FastifyInstance, hub: Hub): void {
  const { programs } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/programs',
    title: 'Programs',
    summary: 'Web UI: programs, to run and to edit.',
    async build({ call, csrf, role }) {
      const { programs: list } = await call<{ programs: ProgramView[] }>(programs.list);
      return html`${role === 'admin' ? html`<p><a href="/os/programs/new">New program</a></p>` : ''}
${list.length === 0 ? html`<p class="muted">No programs yet.</p>` : ''}
<div class="grid">${list.map(
        (p) => html`<article class="card" data-program="${p.id}" aria-labelledby="prog-${p.id}"><h2 id="prog-${p.id}">${p.name}</h2>
${p.description ? html`<p>${p.description}</p>` : ''}<p class="muted">${p.steps.length} steps${p.nextFireAt ? ` · next ${new Date(p.nextFireAt).toISOString()}` : ''}</p>
<form method="post" action="/os/programs/${p.id}/run" class="row">${csrfField(csrf)}<button aria-label="Run ${p.name}">Run</button><a href="/os/programs/${p.id}">YAML</a></form></article>`,
      )}</div>`;
    },
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/programs/:id',
    title: 'Program',
    summary: 'Web UI: one program as YAML, to edit (administrators) or read.',
    async build({ call, csrf, role, request }) {
      const id = (request.params as { id: string }).id;
      if (id === 'new') return editor({}, NEW_PROGRAM, csrf, role === 'admin');
      const program = await call<ProgramView>(programs.get, { text: { params: { id } } });
      const yaml = programAsYaml(program);
      // An automation with triggers, conditions or steps the YAML format lacks is edited on its own page.
      if (yaml === undefined) return html`<h2>${program.name}</h2><p>This is an automation: <a href="/os/automations/${program.id}">open it on the automations page</a>.</p>`;
      return html`<h2>${program.name}</h2>${editor(program, yaml, csrf, role === 'admin')}`;
    },
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/programs/:id/run',
    summary: 'Web UI form: run a program.',
    operation: programs.run,
    input: (_f, p) => ({ json: {}, text: { params: { id: p.id } } }),
    back: () => '/os/programs',
    done: () => 'The program is running.',
  });

  // Saving answers the editor again on failure, with the text as sent and the error at its line
  // (a redirect would lose the text).
  app.post(
    '/programs/save',
    {
      config: { access: 'authenticated' },
      validatorCompiler: () => () => true,
      schema: {
        tags: ['web-ui'],
        summary: 'Web UI form: save a program from YAML (`yaml`, and `id` to replace one); a failure shows the editor with the error at its line.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({ id: Type.Optional(Type.String()), yaml: Type.String() }),
        response: { 200: Type.Unknown(), 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const fields = formFields(request);
      const id = text(fields, 'id');
      const yaml = typeof fields.yaml === 'string' ? fields.yaml.replace(/\r\n/g, '\n') : fields.yaml;
      try {
        const saved = (await hub.operations.invoke(programs.save.name, { json: { ...(id ? { id } : {}), yaml } }, callerOf(request, householdCredential))) as Program;
        if (wantsHtml(request)) return reply.redirect(withFlash(`/os/programs/${saved.id}`, 'done', `Program ${saved.name} saved.`), 303);
        return { ok: true, result: saved };
      } catch (err) {
        if (!wantsHtml(request) || !(err instanceof DomainError) || err.kind === 'unauthenticated' || err.kind === 'internal') throw err;
        request.failureCode = err.code;
        const at = (err.details ?? {}) as { line?: number; column?: number };
        const body = editor(id ? { id } : {}, typeof yaml === 'string' ? yaml : '', sessionCsrf(request, HOME_AREA.cookie), true, {
          ...(typeof at.line === 'number' ? { line: at.line } : {}),
          ...(typeof at.column === 'number' ? { column: at.column } : {}),
          message: err.message,
        });
        return reply
          .code(err.kind === 'forbidden' ? 403 : err.kind === 'not_found' ? 404 : err.kind === 'unprocessable' ? 422 : 400)
          .type('text/html; charset=utf-8')
          .send(page({ title: 'Program not saved', area: HOME_AREA.name, nav: HOME_AREA.nav, body }));
      }
    },
  );
}
