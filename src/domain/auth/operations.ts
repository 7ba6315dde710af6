import { Type } from 'typebox';
import { errors } from '../../platform/errors.js';
import { ADMIN_ACCOUNT, ANY_ACCOUNT, defineOperation, type OperationContext, type Principal } from '../../platform/operations.js';
import type { AccountService } from './accounts.js';
import type { AuthService } from './auth-service.js';
import { INVITE_DEFAULT_HOURS, INVITE_MAX_HOURS, type InviteBook } from './invites.js';
import { MIN_PASSWORD_LENGTH, USERNAME_PATTERN } from './model.js';

function principalOf(ctx: OperationContext): Principal {
  if (!ctx.principal) throw errors.AUTH_REQUIRED();
  return ctx.principal;
}

export const LoginInput = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 128, description: 'Account name.' }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: 'Account password.' }),
  },
);

export const AccessTokenOutput = Type.Object({
  accessToken: Type.String({ description: 'Opaque bearer token.' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'Seconds until the token expires.' }),
  scope: Type.String({ examples: ['os_api_admin'] }),
});

const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('user')], { description: '`admin`: the whole hub, OS API and admin panel; `user`: the App API.' });

export const PrincipalOutput = Type.Object({
  userId: Type.String(),
  username: Type.String(),
  role: RoleSchema,
  scope: Type.String(),
  mustChangePassword: Type.Boolean({ description: 'The account still has the password the hub generated at first start: ask the person to choose one (auth.change_password).' }),
});

export const StreamTokenOutput = Type.Object({
  accessToken: Type.String({ description: 'Short-lived token accepted only by SSE endpoints, in the `accessToken` query parameter.' }),
  expiresIn: Type.Integer({ maximum: 300 }),
});

const Empty = Type.Object({});

const Username = Type.String({ pattern: USERNAME_PATTERN, description: '1 to 64 letters, digits, dots, dashes, underscores or @; unique whatever the case.' });
const NewPassword = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, description: `At least ${MIN_PASSWORD_LENGTH} characters.` });
const Id = Type.String({ minLength: 1, maxLength: 128 });

const UserRecord = Type.Object({
  id: Type.String(),
  username: Type.String(),
  role: RoleSchema,
  disabled: Type.Boolean({ description: 'A disabled account cannot log in and holds no tokens.' }),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

const InviteRecord = Type.Object({
  id: Type.String(),
  role: RoleSchema,
  note: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.String({ description: 'Id of the admin account that issued it.' }),
  createdAt: Type.Integer(),
  expiresAt: Type.Integer(),
  usedAt: Type.Union([Type.Integer(), Type.Null()]),
  usedBy: Type.Union([Type.String(), Type.Null()], { description: 'Id of the account it created.' }),
  revokedAt: Type.Union([Type.Integer(), Type.Null()]),
  state: Type.Union([Type.Literal('active'), Type.Literal('used'), Type.Literal('expired'), Type.Literal('revoked')]),
});

export function authOperations(auth: AuthService, accounts: AccountService) {
  return {
    login: defineOperation({
      name: 'auth.login',
      summary: 'Log in with a username and password; returns a bearer access token.',
      access: 'public',
      input: LoginInput,
      output: AccessTokenOutput,
      async handler(input, ctx) {
        const issued = await auth.login(input.username, input.password, ctx.clientAddress);
        return { accessToken: issued.accessToken, tokenType: 'Bearer' as const, expiresIn: issued.expiresIn, scope: issued.scope };
      },
    }),
    me: defineOperation({
      name: 'auth.me',
      summary: 'The authenticated principal.',
      access: ANY_ACCOUNT,
      input: Empty,
      output: PrincipalOutput,
      // Answers at once (no promise): apps call it on every start and poll it.
      handler(_input, ctx) {
        const { userId, username, role, scope } = principalOf(ctx);
        return { userId, username, role, scope, mustChangePassword: accounts.mustChangePassword(userId) };
      },
    }),
    streamToken: defineOperation({
      name: 'auth.stream_token',
      summary: 'Issue a short-lived token for SSE clients that cannot send headers.',
      access: ANY_ACCOUNT,
      input: Empty,
      output: StreamTokenOutput,
      async handler(_input, ctx) {
        const { accessToken, expiresIn } = await auth.issueStreamToken(principalOf(ctx));
        return { accessToken, expiresIn };
      },
    }),
    register: defineOperation({
      name: 'auth.register',
      summary: 'Create an account (when APP_REGISTRATION allows it) and sign in with it.',
      description:
        'Needs APP_REGISTRATION `open`, or `invite` and an unused, unexpired invite code (the account takes the invite\'s role; otherwise `user`). `closed`: 403 REGISTRATION_CLOSED; a bad code: 403 INVITE_INVALID, counted by the login limiter. `open`: APP_REGISTRATION_LIMIT attempts per client address per APP_REGISTRATION_WINDOW_SECONDS, then 429 TOO_MANY_REGISTRATIONS with Retry-After.',
      access: 'public',
      input: Type.Object({
        username: Username,
        password: NewPassword,
        inviteCode: Type.Optional(Type.String({ maxLength: 64, description: 'An invite code as issued (`XXXX-XXXX-XXXX`; case and dashes do not matter).' })),
      }),
      output: AccessTokenOutput,
      async handler(input, ctx) {
        const issued = await accounts.register(input, ctx.clientAddress);
        return { accessToken: issued.accessToken, tokenType: 'Bearer' as const, expiresIn: issued.expiresIn, scope: issued.scope };
      },
    }),
    changePassword: defineOperation({
      name: 'auth.change_password',
      summary: 'Change one\'s own password, proving the current one; every session of the account ends and a new one is answered.',
      description:
        'A wrong current password is 400 CURRENT_PASSWORD_WRONG (`details[0].field` `currentPassword`) and counts against the login limiter (429 past it); the same password again is 400 PASSWORD_UNCHANGED. Clears `mustChangePassword`.',
      access: ANY_ACCOUNT,
      input: Type.Object({
        currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
        newPassword: NewPassword,
      }),
      output: AccessTokenOutput,
      async handler(input, ctx) {
        const issued = await accounts.changeOwnPassword(principalOf(ctx).userId, input, ctx.clientAddress);
        return { accessToken: issued.accessToken, tokenType: 'Bearer' as const, expiresIn: issued.expiresIn, scope: issued.scope };
      },
    }),
    logout: defineOperation({
      name: 'auth.logout',
      summary: 'Revoke the presented access token.',
      access: ANY_ACCOUNT,
      input: Empty,
      output: Type.Object({ loggedOut: Type.Boolean() }),
      async handler(_input, ctx) {
        await auth.logout(principalOf(ctx));
        return { loggedOut: true };
      },
    }),
  };
}

const UserId = Type.Object({ id: Id });

/** Admin user management: the admin panel's `/admin/users`. */
export function userOperations(accounts: AccountService) {
  return {
    list: defineOperation({
      name: 'users.list',
      summary: 'Accounts of this hub.',
      access: ADMIN_ACCOUNT,
      input: Empty,
      output: Type.Object({ users: Type.Array(UserRecord) }),
      async handler() {
        return { users: await accounts.list() };
      },
    }),
    get: defineOperation({
      name: 'users.get',
      summary: 'One account.',
      access: ADMIN_ACCOUNT,
      input: UserId,
      output: UserRecord,
      async handler({ id }) {
        return accounts.get(id);
      },
    }),
    create: defineOperation({
      name: 'users.create',
      summary: 'Create an account.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ username: Username, password: NewPassword, role: Type.Optional(RoleSchema) }, { additionalProperties: false }),
      output: UserRecord,
      async handler({ username, password, role }) {
        return accounts.create({ username, password, role: role ?? 'user' });
      },
    }),
    update: defineOperation({
      name: 'users.update',
      summary: "Change an account's role or enable or disable it; either ends its sessions.",
      description: 'The last enabled admin can be neither demoted nor disabled (409 LAST_ADMIN).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: Id, role: Type.Optional(RoleSchema), disabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      output: UserRecord,
      async handler({ id, ...change }) {
        return accounts.update(id, change);
      },
    }),
    setPassword: defineOperation({
      name: 'users.set_password',
      summary: "Set an account's password; ends its sessions.",
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: Id, password: NewPassword }, { additionalProperties: false }),
      output: UserRecord,
      async handler({ id, password }) {
        return accounts.setPassword(id, password);
      },
    }),
    remove: defineOperation({
      name: 'users.remove',
      summary: 'Remove an account and end its sessions.',
      description: 'The last enabled admin cannot be removed (409 LAST_ADMIN). Modules that keep per-user records drop them (`user.removed`).',
      access: ADMIN_ACCOUNT,
      input: UserId,
      output: Type.Object({ removed: Type.Literal(true), user: UserRecord }),
      async handler({ id }) {
        return { removed: true as const, user: await accounts.remove(id) };
      },
    }),
  };
}

/** Invite codes for registration in APP_REGISTRATION `invite` mode: `/admin/invites`. */
export function inviteOperations(invites: InviteBook) {
  return {
    list: defineOperation({
      name: 'invites.list',
      summary: 'Invites issued on this hub, newest first, with their state (the codes are not kept).',
      access: ADMIN_ACCOUNT,
      input: Empty,
      output: Type.Object({ invites: Type.Array(InviteRecord) }),
      async handler() {
        return { invites: await invites.list() };
      },
    }),
    create: defineOperation({
      name: 'invites.create',
      summary: 'Issue a single-use invite code; the answer is the only time the code is shown.',
      access: ADMIN_ACCOUNT,
      input: Type.Object(
        {
          expiresInHours: Type.Optional(Type.Integer({ minimum: 1, maximum: INVITE_MAX_HOURS, default: INVITE_DEFAULT_HOURS })),
          role: Type.Optional(RoleSchema),
          note: Type.Optional(Type.String({ maxLength: 200, description: 'Who it is for, for the list.' })),
        },
        { additionalProperties: false },
      ),
      output: Type.Object({ ...InviteRecord.properties, code: Type.String({ description: 'Shown once: `XXXX-XXXX-XXXX`.' }) }),
      async handler({ expiresInHours, role, note }, ctx) {
        return invites.create({ expiresInHours: expiresInHours ?? INVITE_DEFAULT_HOURS, role: role ?? 'user', ...(note === undefined ? {} : { note }) }, principalOf(ctx).userId);
      },
    }),
    revoke: defineOperation({
      name: 'invites.revoke',
      summary: 'Revoke an invite so that its code no longer registers anyone.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: InviteRecord,
      async handler({ id }) {
        return invites.revoke(id);
      },
    }),
  };
}
