import { Type } from 'typebox';
import { errors } from '../../platform/errors.js';
import { ADMIN_ACCOUNT, ANY_ACCOUNT, defineOperation, type OperationContext, type Principal } from '../../platform/operations.js';
import type { AuthService } from './auth-service.js';

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

export const PrincipalOutput = Type.Object({
  userId: Type.String(),
  username: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
  scope: Type.String(),
});

export const StreamTokenOutput = Type.Object({
  accessToken: Type.String({ description: 'Short-lived token accepted only by SSE endpoints, in the `accessToken` query parameter.' }),
  expiresIn: Type.Integer({ maximum: 300 }),
});

const Empty = Type.Object({});

const UserRecord = Type.Object({
  id: Type.String(),
  username: Type.String(),
  role: Type.String(),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

export function authOperations(auth: AuthService) {
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
      async handler(_input, ctx) {
        const { userId, username, role, scope } = principalOf(ctx);
        return { userId, username, role, scope };
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
    listUsers: defineOperation({
      name: 'users.list',
      summary: 'Accounts of this hub.',
      access: ADMIN_ACCOUNT,
      input: Empty,
      output: Type.Object({ users: Type.Array(UserRecord) }),
      async handler() {
        return { users: await auth.listUsers() };
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

export type AuthOperations = ReturnType<typeof authOperations>;
