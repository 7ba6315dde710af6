import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../../hub.js';
import type { UserView } from '../../../../domain/auth/model.js';
import { checked, defined, num, text } from '../../web/forms.js';
import { csrfField, html } from '../../web/html.js';
import { adminForm, adminSecretForm, bindPage } from '../panel-kit.js';

interface Invite {
  id: string;
  role: string;
  note: string | null;
  expiresAt: number;
  state: 'active' | 'used' | 'expired' | 'revoked';
}

interface PlayerEntry {
  record: { id: string; name: string };
  assignedUserIds: string[];
}

const BACK = '/admin/panel/users';
const roleSelect = (id: string, current: string) =>
  html`<select id="${id}" name="role">${['user', 'admin'].map((r) => html`<option${r === current ? html` selected` : ''}>${r}</option>`)}</select>`;

/** Accounts: create, disable, reset passwords, roles, invites, and which players each may use. */
export function usersPage(app: FastifyInstance, hub: Hub): void {
  const { users, invites, players } = hub.ops;
  bindPage(app, hub, {
    url: '/panel/users',
    title: 'Users',
    summary: 'Admin panel: accounts, invites and player assignments.',
    async build({ call, csrf }) {
      const { users: list } = await call<{ users: UserView[] }>(users.list);
      const { invites: pending } = await call<{ invites: Invite[] }>(invites.list);
      const roster = (await call<{ players: PlayerEntry[] }>(players.list)).players;
      return html`
<section aria-labelledby="new-user"><h2 id="new-user">New account</h2>
<form method="post" action="/admin/panel/users/create" class="row">${csrfField(csrf)}
<label>Username <input name="username" required minlength="1" autocomplete="off"></label>
<label>Password <input name="password" type="password" required autocomplete="new-password"></label>
<label>Role ${roleSelect('new-role', 'user')}</label><button>Create account</button></form></section>
<section aria-labelledby="accounts"><h2 id="accounts">Accounts</h2><div class="scroll" tabindex="0"><table>
<thead><tr><th>Username</th><th>Role and standing</th><th>Password</th><th>Players</th><th></th></tr></thead><tbody>
${list.map(
  (u) => html`<tr data-user="${u.username}"><td>${u.username}${u.disabled ? html` <span class="badge offline">disabled</span>` : ''}</td>
<td><form method="post" action="/admin/panel/users/${u.id}/update" class="row">${csrfField(csrf)}
<label>Role ${roleSelect(`role-${u.id}`, u.role)}</label>
<label class="inline"><input type="checkbox" name="disabled" value="true"${u.disabled ? html` checked` : ''}> Disabled</label><button class="secondary">Save</button></form></td>
<td><form method="post" action="/admin/panel/users/${u.id}/password" class="row">${csrfField(csrf)}
<label>New password for ${u.username} <input name="password" type="password" required autocomplete="new-password"></label><button class="secondary">Reset</button></form></td>
<td><form method="post" action="/admin/panel/users/${u.id}/players" class="row">${csrfField(csrf)}
${roster.length === 0 ? html`<span class="muted">No players yet.</span>` : ''}
${roster.map(
  (p) => html`<label class="inline"><input type="checkbox" name="player" value="${p.record.id}"${p.assignedUserIds.includes(u.id) ? html` checked` : ''}> ${p.record.name}</label>`,
)}${roster.length > 0 ? html`<button class="secondary">Assign</button>` : ''}</form></td>
<td><form method="post" action="/admin/panel/users/${u.id}/remove">${csrfField(csrf)}<button class="danger" aria-label="Delete ${u.username}">Delete</button></form></td></tr>`,
)}</tbody></table></div></section>
<section aria-labelledby="invites"><h2 id="invites">Invites</h2>
<form method="post" action="/admin/panel/invites/create" class="row">${csrfField(csrf)}
<label>For <input name="note" maxlength="200"></label><label>Role ${roleSelect('invite-role', 'user')}</label>
<label>Valid for (hours) <input name="expiresInHours" type="number" min="1" value="72"></label><button>Create invite</button></form>
<ul>${pending.map(
        (i) => html`<li>${i.note ?? '(no note)'}: ${i.role}, until ${new Date(i.expiresAt).toISOString()} (${i.state})
${i.state === 'active' ? html`<form method="post" action="/admin/panel/invites/${i.id}/revoke" style="display:inline">${csrfField(csrf)}<button class="secondary">Revoke</button></form>` : ''}</li>`,
      )}</ul></section>`;
    },
  });

  adminForm(app, hub, {
    url: '/panel/users/create',
    summary: 'Admin panel form: create an account.',
    operation: users.create,
    input: (f) => ({ json: defined({ username: text(f, 'username'), password: f.password, role: text(f, 'role') }) }),
    back: () => BACK,
    done: (r) => `Account ${(r as UserView).username} created.`,
  });
  adminForm(app, hub, {
    url: '/panel/users/:id/update',
    summary: "Admin panel form: change an account's role or standing.",
    operation: users.update,
    input: (f, p) => ({ json: defined({ role: text(f, 'role'), disabled: checked(f, 'disabled') }), text: { params: { id: p.id } } }),
    back: () => BACK,
    done: (r) => `Account ${(r as UserView).username} saved.`,
  });
  adminForm(app, hub, {
    url: '/panel/users/:id/password',
    summary: "Admin panel form: reset an account's password.",
    operation: users.setPassword,
    input: (f, p) => ({ json: { password: f.password }, text: { params: { id: p.id } } }),
    back: () => BACK,
    done: (r) => `Password of ${(r as UserView).username} reset; its sessions ended.`,
  });
  adminForm(app, hub, {
    url: '/panel/users/:id/remove',
    summary: 'Admin panel form: delete an account.',
    operation: users.remove,
    input: (_f, p) => ({ json: {}, text: { params: { id: p.id } } }),
    back: () => BACK,
    done: (r) => `Account ${(r as UserView).username} deleted.`,
  });
  adminForm(app, hub, {
    url: '/panel/users/:id/players',
    summary: 'Admin panel form: the players an account may use.',
    operation: players.setAssignments,
    input: (f, p) => ({ json: { playerIds: [f.player ?? []].flat() }, text: { params: { id: p.id } } }),
    back: () => BACK,
    done: () => 'Players assigned.',
  });
  adminSecretForm(app, hub, {
    url: '/panel/invites/create',
    summary: 'Admin panel form: issue an invite code (shown once, on the page this form answers with).',
    operation: invites.create,
    input: (f) => ({ json: defined({ note: text(f, 'note'), role: text(f, 'role'), expiresInHours: num(f, 'expiresInHours') }) }),
    back: () => BACK,
    backLabel: 'Back to the users',
    reveal: (r) => {
      const invite = r as Invite & { code: string };
      return {
        title: 'New invite',
        noun: 'the code',
        secret: invite.code,
        about: html`<p>Invite${invite.note ? html` for <strong>${invite.note}</strong>` : ''}: a new ${invite.role} account, until ${new Date(invite.expiresAt).toISOString()}. Give the code to the person; they enter it once, when they create their account in the app.</p>`,
      };
    },
  });
  adminForm(app, hub, {
    url: '/panel/invites/:id/revoke',
    summary: 'Admin panel form: revoke an invite.',
    operation: invites.revoke,
    input: (_f, p) => ({ json: {}, text: { params: { id: p.id } } }),
    back: () => BACK,
    done: () => 'Invite revoked.',
  });
}
