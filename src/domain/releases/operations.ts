import { Type } from 'typebox';
import { defineOperation, OS_ADMIN, type OperationContext } from '../../platform/operations.js';
import { DriverUploadInput, uploadOf } from '../drivers/operations.js';
import type { ReleaseService } from './release-service.js';

const Key = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]*$' });
const Version = Type.String({ minLength: 1, maxLength: 100 });
const State = Type.Union([Type.Literal('draft'), Type.Literal('submitted'), Type.Literal('published'), Type.Literal('retired'), Type.Literal('rolled_back')]);

const ReleaseSchema = Type.Object({
  key: Type.String({ description: 'The driverKey.' }),
  name: Type.Optional(Type.String()),
  current: Type.Union([Type.String(), Type.Null()], { description: 'The published version this hub runs.' }),
  published: Type.Array(Type.String(), { description: 'Versions in the order they were published (rollback walks back along it).' }),
  versions: Type.Array(
    Type.Object({
      version: Type.String(),
      state: State,
      driverType: Type.String(),
      files: Type.Array(Type.Object({ path: Type.String(), sha256: Type.String(), bytes: Type.Integer() })),
      createdAt: Type.Integer(),
      updatedAt: Type.Integer(),
      submittedAt: Type.Optional(Type.Integer()),
      publishedAt: Type.Optional(Type.Integer()),
    }),
  ),
  history: Type.Array(
    Type.Object({ at: Type.Integer(), action: Type.String(), version: Type.String(), by: Type.Union([Type.String(), Type.Null()]), from: Type.Optional(State), to: State }),
  ),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

const view = ({ id, ...rest }: { id: string } & Record<string, unknown>) => ({ key: id, ...rest });
const by = (ctx: OperationContext) => ctx.principal?.username ?? null;

export function releaseOperations(releases: ReleaseService) {
  const transition = (name: 'releases.submit' | 'releases.unsubmit' | 'releases.publish', summary: string, run: (key: string, version: string | undefined, who: string | null) => Promise<unknown>) =>
    defineOperation({
      name,
      summary,
      description: 'Acts on `version`, or without one on the latest version in the state the move starts from. A version in another state: 409 RELEASE_STATE_CONFLICT with `details.current`.',
      access: OS_ADMIN,
      input: Type.Object({ key: Key, version: Type.Optional(Version) }),
      output: ReleaseSchema,
      async handler({ key, version }, ctx) {
        return view((await run(key, version, by(ctx))) as never) as never;
      },
    });
  return {
    list: defineOperation({
      name: 'releases.list',
      summary: 'Integration releases with their versions, states and history.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ releases: Type.Array(ReleaseSchema) }),
      async handler() {
        return { releases: releases.list().map((r) => view(r as never)) as never };
      },
    }),
    get: defineOperation({
      name: 'releases.get',
      summary: 'One integration release.',
      access: OS_ADMIN,
      input: Type.Object({ key: Key }),
      output: ReleaseSchema,
      async handler({ key }) {
        return view(releases.get(key) as never) as never;
      },
    }),
    save: defineOperation({
      name: 'releases.save',
      summary: "Create a release version as a draft from a driver package (validated as a driver upload; the key is the manifest's driverKey, the version its semantic `version`), or replace a draft's files.",
      access: OS_ADMIN,
      input: DriverUploadInput,
      output: ReleaseSchema,
      async handler(input, ctx) {
        return view((await releases.save(uploadOf(input), by(ctx))) as never) as never;
      },
    }),
    submit: transition('releases.submit', 'Submit a draft version for publishing: draft → submitted.', (k, v, w) => releases.submit(k, v, w)),
    unsubmit: transition('releases.unsubmit', 'Take a submitted version back: submitted → draft.', (k, v, w) => releases.unsubmit(k, v, w)),
    publish: transition('releases.publish', 'Publish a submitted version: submitted → published; this hub installs it, so its running driver becomes this version.', (k, v, w) => releases.publish(k, v, w)),
    rollback: defineOperation({
      name: 'releases.rollback',
      summary: 'Make the version published before the current one current again (installed on this hub); the current one becomes rolled_back.',
      access: OS_ADMIN,
      input: Type.Object({ key: Key }),
      output: ReleaseSchema,
      async handler({ key }, ctx) {
        return view((await releases.rollback(key, by(ctx))) as never) as never;
      },
    }),
    submissionPackage: defineOperation({
      name: 'releases.submission_package',
      summary: 'Build the submission package of a version (the current one by default): files, their SHA-256 checksums and the release metadata, as .tar.gz.',
      access: OS_ADMIN,
      input: Type.Object({ key: Key, version: Type.Optional(Version) }),
      output: Type.Object({ name: Type.String(), file: Type.String({ description: 'Where the package was written on the hub.' }) }),
      async handler({ key, version }) {
        return releases.submissionPackage(key, version, releases.packagesDir);
      },
    }),
    importPackage: defineOperation({
      name: 'releases.import',
      summary: "Import another hub's submission package: every file checked against its checksum; the version is stored here as a draft with the same files, byte for byte.",
      access: OS_ADMIN,
      input: Type.Object({ archive: Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'The package (.tar.gz), base64.' }) }, { additionalProperties: false }),
      output: ReleaseSchema,
      async handler({ archive }, ctx) {
        return view((await releases.importPackage(Buffer.from(archive, 'base64'), by(ctx))) as never) as never;
      },
    }),
  };
}
