import type { FastifyInstance } from 'fastify';
import type { ActivityEntry } from '../../../../domain/activity/activity-log.js';
import type { AuditEntry } from '../../../../domain/audit/audit-trail.js';
import type { Hub } from '../../../../hub.js';
import { html } from '../../web/html.js';
import { bindPage } from '../panel-kit.js';

interface LogLine {
  time: number;
  level: string;
  msg: string;
  component?: string;
  fields: Record<string, unknown>;
}


const LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'];
const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/** Recent log lines with a level filter (a GET form, so a filter is a link), the activity log and the audit trail. */
export function logsPage(app: FastifyInstance, hub: Hub): void {
  bindPage(app, hub, {
    url: '/panel/logs',
    title: 'Logs, activity and audit',
    summary: 'Admin panel: recent log lines by level, the activity log of the home, and the audit trail of admin actions.',
    async build({ call, request }) {
      const q = request.query as Record<string, string | undefined>;
      const level = LEVELS.includes(q.level ?? '') ? q.level! : 'info';
      const contains = typeof q.contains === 'string' ? q.contains.slice(0, 200) : '';
      const logs = await call<{ lines: LogLine[]; kept: number }>(hub.ops.system.logs, { text: { querystring: { level, limit: '300', ...(contains ? { contains } : {}) } } });
      const audit = await call<{ entries: AuditEntry[] }>(hub.ops.audit.list, { text: { querystring: { limit: '100' } } });
      const activity = await call<{ entries: ActivityEntry[] }>(hub.ops.activity.list, { text: { querystring: { limit: '100' } } });
      return html`
<section aria-labelledby="log-lines"><h2 id="log-lines">Recent log lines</h2>
<form method="get" action="/admin/panel/logs" class="row">
<label>Level <select name="level">${LEVELS.map((l) => html`<option${l === level ? html` selected` : ''}>${l}</option>`)}</select></label>
<label>Containing <input name="contains" value="${contains}"></label><button class="secondary">Filter</button></form>
<p class="muted">${logs.lines.length} shown of ${logs.kept} kept in memory, newest first.</p>
<div class="scroll" tabindex="0"><table><thead><tr><th>Time</th><th>Level</th><th>Component</th><th>Message</th></tr></thead><tbody>
${logs.lines.map(
  (l) => html`<tr class="log-${l.level}"><td>${iso(l.time)}</td><td><span class="badge ${l.level === 'error' || l.level === 'fatal' ? 'offline' : ''}">${l.level}</span></td><td>${l.component ?? ''}</td>
<td>${l.msg}${Object.keys(l.fields).length > 0 ? html`<details><summary>fields</summary><pre>${JSON.stringify(l.fields, null, 1)}</pre></details>` : ''}</td></tr>`,
)}</tbody></table></div></section>
<section aria-labelledby="activity"><h2 id="activity">Activity</h2>
<p class="muted">Device commands, scene and program runs, key presses and media controls, from every account, newest first.</p>
<div class="scroll" tabindex="0"><table><thead><tr><th>Time</th><th>Who</th><th>What</th><th>Done</th><th>Outcome</th></tr></thead><tbody>
${activity.entries.map(
  (e) => html`<tr data-activity="${e.operation}"><td>${iso(e.at)}</td><td>${e.actor ?? '(no account)'}</td><td>${e.subjectName ?? e.subject ?? ''}</td>
<td>${e.operation}${e.input !== undefined ? html` <span class="muted">${JSON.stringify(e.input).slice(0, 120)}</span>` : ''}</td>
<td>${e.ok ? 'ok' : `failed: ${e.code ?? ''}`}</td></tr>`,
)}</tbody></table></div></section>
<section aria-labelledby="audit"><h2 id="audit">Audit trail</h2>
<div class="scroll" tabindex="0"><table><thead><tr><th>Time</th><th>Who</th><th>Action</th><th>Target</th><th>Outcome</th></tr></thead><tbody>
${audit.entries.map(
  (e) => html`<tr data-audit="${e.action}"><td>${iso(e.at)}</td><td>${e.actor ?? '(anonymous)'}${e.clientAddress ? html` <span class="muted">${e.clientAddress}</span>` : ''}</td><td>${e.action}</td>
<td>${e.target ? JSON.stringify(e.target) : ''}${e.input !== undefined ? html`<details><summary>input</summary><pre>${JSON.stringify(e.input, null, 1)}</pre></details>` : ''}</td>
<td>${e.ok ? 'ok' : `failed: ${e.code ?? ''}`}</td></tr>`,
)}</tbody></table></div></section>`;
    },
  });
}
