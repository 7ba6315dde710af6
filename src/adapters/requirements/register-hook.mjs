// Run with `node --import <this file>`: registers resolve-hook.mjs in a child process (the Matter
// bridge's) for the requirements folders the hub names in HCS_REQUIREMENT_FOLDERS (a JSON array).
import { register } from 'node:module';

let folders = [];
try {
  folders = JSON.parse(process.env.HCS_REQUIREMENT_FOLDERS ?? '[]');
} catch {
  folders = [];
}
if (Array.isArray(folders) && folders.length > 0) register('./resolve-hook.mjs', import.meta.url, { data: { folders } });
