import type { PackageMetadata, PluginRegistry, RegistryHit } from '../../domain/accessory-hub/ports.js';

/** The npm registry's search (`/-/v1/search`) and packument APIs, bounded in time. */
export class HttpPluginRegistry implements PluginRegistry {
  constructor(private readonly timeoutMs = 10_000) {}

  async search(registry: string, text: string, size: number): Promise<RegistryHit[]> {
    const url = new URL('-/v1/search', registry.endsWith('/') ? registry : `${registry}/`);
    url.searchParams.set('text', text);
    url.searchParams.set('size', String(size));
    const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.timeoutMs) });
    if (!res.ok) throw new Error(`search answered ${res.status}`);
    const body = (await res.json()) as { objects?: Array<{ package: RegistryHit }> };
    return (body.objects ?? []).map(({ package: p }) => ({
      name: p.name,
      version: p.version,
      ...(p.description ? { description: p.description } : {}),
      ...(p.keywords ? { keywords: p.keywords } : {}),
      ...(p.date ? { date: p.date } : {}),
      ...(p.links ? { links: p.links } : {}),
    }));
  }

  async metadata(registry: string, name: string): Promise<PackageMetadata | undefined> {
    const url = new URL(name.replace('/', '%2f'), registry.endsWith('/') ? registry : `${registry}/`);
    const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.timeoutMs) });
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`the registry answered ${res.status}`);
    const body = (await res.json()) as { name: string; description?: string; 'dist-tags'?: Record<string, string>; versions?: Record<string, { engines?: Record<string, string>; peerDependencies?: Record<string, string>; keywords?: string[] }> };
    const distTags = body['dist-tags'] ?? {};
    const latest = distTags.latest ? body.versions?.[distTags.latest] : undefined;
    return {
      name: body.name,
      ...(body.description ? { description: body.description } : {}),
      distTags,
      versions: Object.keys(body.versions ?? {}),
      requires: Object.fromEntries(
        Object.entries(body.versions ?? {}).map(([version, manifest]) => {
          const homebridge = manifest.engines?.homebridge ?? manifest.peerDependencies?.homebridge;
          const node = manifest.engines?.node;
          return [version, { ...(typeof homebridge === 'string' ? { homebridge } : {}), ...(typeof node === 'string' ? { node } : {}) }];
        }),
      ),
      ...(latest && distTags.latest ? { latest: { version: distTags.latest, ...(latest.engines ? { engines: latest.engines } : {}), ...(latest.keywords ? { keywords: latest.keywords } : {}) } } : {}),
    };
  }
}
