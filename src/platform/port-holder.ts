import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Which program listens on a TCP port, for a status that names it ("port 8443 is held by nginx
 * (pid 812)"): Linux's /proc/net/tcp{,6} give the listening socket's inode, and /proc/<pid>/fd
 * the process that holds it. Undefined where that cannot be read (another OS, another user's
 * process): the status then says only that another program holds the port.
 */
export async function portHolder(port: number, procRoot = '/proc'): Promise<{ pid: number; command: string } | undefined> {
  const inodes = new Set<string>();
  for (const table of ['net/tcp', 'net/tcp6']) {
    const text = await fs.readFile(`${procRoot}/${table}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is the tenth field.
      const local = fields[1];
      if (!local || fields[3] !== '0A') continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && fields[9]) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  const wanted = new Set([...inodes].map((inode) => `socket:[${inode}]`));
  const pids = (await fs.readdir(procRoot).catch(() => [] as string[])).filter((name) => /^\d+$/.test(name));
  // Bounded: a small box runs a few hundred processes; each is a readdir and a readlink per fd.
  for (const pid of pids.slice(0, 5000)) {
    const fds = await fs.readdir(`${procRoot}/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await fs.readlink(`${procRoot}/${pid}/fd/${fd}`).catch(() => '');
      if (!wanted.has(target)) continue;
      return { pid: Number(pid), command: await commandOf(`${procRoot}/${pid}`) };
    }
  }
  return undefined;
}

/**
 * The program's name: the file its command line started (`/usr/sbin/nginx` → nginx; a process
 * that rewrites its title, `nginx: master process …` → nginx), else `comm`, which is a thread's
 * name and says `MainThread` for Node 24.
 */
async function commandOf(procDir: string): Promise<string> {
  const cmdline = await fs.readFile(`${procDir}/cmdline`, 'utf8').catch(() => '');
  const first = cmdline.split('\0')[0]?.trim().split(/\s/)[0] ?? '';
  const name = path.basename(first).replace(/:$/, '');
  if (name) return name;
  return (await fs.readFile(`${procDir}/comm`, 'utf8').catch(() => 'unknown')).trim();
}
