import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule } from '../../platform/module.js';
import { releaseErrors } from './errors.js';
import { releaseOperations } from './operations.js';
import { ReleaseService, type Release, type ReleaseDeps } from './release-service.js';

/** Integration releases (docs/fleet.md): versions of a driver moving draft → submitted → published, installed here when published. */
export function releasesModule(deps: Omit<ReleaseDeps, 'releases'> & { repository: DocumentRepository<Release> }) {
  const { repository, ...rest } = deps;
  const releases = new ReleaseService({ ...rest, releases: new DocumentCollection(repository, deps.clock, ({ id }) => releaseErrors.RELEASE_NOT_FOUND({ key: id })) });
  return defineModule({
    name: 'releases',
    needs: ['storage', 'drivers'],
    releases,
    operations: { releases: releaseOperations(releases) },
    async start() {
      await releases.start();
    },
  });
}
