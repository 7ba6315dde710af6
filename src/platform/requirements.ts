import { Type } from 'typebox';

/** `missing`: not installed yet (installed when the integration first runs); `present`: ready. */
export type RequirementsState = 'missing' | 'installing' | 'present' | 'failed';

/** An integration's npm requirements, as its status shows them. */
export interface RequirementsStatus {
  state: RequirementsState;
  /** `hub`: in the hub's own node_modules; `installed`: under DATA_DIR, installed on first use. */
  source?: 'hub' | 'installed';
  /** The packages and their pinned versions. */
  packages: Record<string, string>;
  /** The installer's newest output lines, while it runs and after it failed. */
  progress?: string[];
  error?: string;
}

/** The port an integration sees its requirements through (src/adapters/requirements implements it). */
export interface Requirements {
  status(): RequirementsStatus;
  /** Resolves once they are present (installing them first when they are not); rejects with the installer's reason. */
  ensure(onLine?: (line: string) => void): Promise<readonly string[]>;
}

export const RequirementsStatusSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('missing'), Type.Literal('installing'), Type.Literal('present'), Type.Literal('failed')], {
      description: '`missing`: a home box installed with `npm ci --omit=dev` installs them the first time this runs; `installing`; `present`; `failed` (`error` says why; the next start tries again).',
    }),
    source: Type.Optional(Type.Union([Type.Literal('hub'), Type.Literal('installed')], { description: "`hub`: the hub's own node_modules has them; `installed`: installed under DATA_DIR/requirements." })),
    packages: Type.Record(Type.String(), Type.String(), { description: 'Package → the pinned version.' }),
    progress: Type.Optional(Type.Array(Type.String(), { description: "npm's newest output lines, while it installs and after it failed." })),
    error: Type.Optional(Type.String()),
  },
  { description: 'The npm packages this integration needs, installed when it is first turned on.' },
);
