// A module resolution hook (node:module register): a bare specifier that Node does not find from
// the importing file is looked for again from each requirements folder (DATA_DIR/requirements/
// <integration>, installed on first use), so the hub's code imports an integration's packages by
// name wherever they were installed. Plain JavaScript: Node runs hooks on a thread of their own,
// before any TypeScript loader.
import { pathToFileURL } from 'node:url';

/** Folder paths, in the order they are tried. */
let folders = [];

export function initialize(data) {
  folders = Array.isArray(data?.folders) ? data.folders.filter((f) => typeof f === 'string') : [];
}

const isBare = (specifier) => !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !isBare(specifier)) throw err;
    for (const folder of folders) {
      try {
        // As if imported by a file in the folder: Node then searches its node_modules.
        return await nextResolve(specifier, { ...context, parentURL: pathToFileURL(`${folder}/index.js`).href });
      } catch {
        // not there either; the next folder
      }
    }
    throw err;
  }
}
