import { register } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The environment variable the child's hook registrar reads its folders from. */
const FOLDERS_VARIABLE = 'HCS_REQUIREMENT_FOLDERS';
const registered = new Set<string>();

/**
 * Makes this process's imports find packages in these requirements folders too (when the hub's
 * own node_modules lacks them). Registered once per folder: Node chains hooks, and a hook cannot
 * be taken back.
 */
export function resolveFromRequirementFolders(folders: readonly string[]): void {
  const fresh = folders.filter((folder) => !registered.has(folder));
  if (fresh.length === 0) return;
  for (const folder of fresh) registered.add(folder);
  register('./resolve-hook.mjs', import.meta.url, { data: { folders: fresh } });
}

/** What a child Node process is started with so that its imports find packages in these folders: nothing when there are none. */
export function requirementFoldersForChild(folders: readonly string[]): { args: string[]; env: Record<string, string> } {
  if (folders.length === 0) return { args: [], env: {} };
  return { args: ['--import', fileURLToPath(new URL('./register-hook.mjs', import.meta.url))], env: { [FOLDERS_VARIABLE]: JSON.stringify(folders) } };
}
