import fs from 'node:fs';

/** The service's version, from package.json (one level above both src/ and dist/). */
export const VERSION: string = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
