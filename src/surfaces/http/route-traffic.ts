import type { Registry } from 'prom-client';

/** What prom-client's registry asks of a metric: its name, help, type and current values. */
interface ExposedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface ExposedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: ExposedValue[] }>;
}

interface RouteFigures {
  byStatus: Map<number, number>;
  /** Requests per latency bucket (not cumulative); the last slot is past the largest bound. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * HTTP requests by route, method and status, and their latency histogram, counted with two map
 * lookups and a few additions per request: prom-client's own Counter and Histogram validated
 * and hashed their labels on every request, which cost more than the rest of a quick route's
 * bookkeeping. The figures are turned into prom-client's exposition only when scraped, as two
 * metrics of its registry (`hcs_http_requests_total`, `hcs_http_request_duration_seconds`).
 */
export class RouteTraffic {
  private readonly routes = new Map<string, Map<string, RouteFigures>>();

  constructor(private readonly bounds: readonly number[]) {}

  record(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.routes.get(route);
    if (!byMethod) this.routes.set(route, (byMethod = new Map()));
    let figures = byMethod.get(method);
    if (!figures) byMethod.set(method, (figures = { byStatus: new Map(), buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 }));
    figures.byStatus.set(status, (figures.byStatus.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    figures.buckets[bucket]!++;
    figures.sum += seconds;
    figures.count++;
  }

  /** Registers the two metrics with `register`. */
  registerWith(register: Registry, names: { requests: string; latency: string }): void {
    const each = (fn: (route: string, method: string, figures: RouteFigures) => void) => {
      for (const [route, byMethod] of this.routes) for (const [method, figures] of byMethod) fn(route, method, figures);
    };
    const exposed = (name: string, help: string, type: ExposedMetric['type'], values: () => ExposedValue[]): ExposedMetric => ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    });
    const requests = exposed(names.requests, 'HTTP requests by route pattern, method and status.', 'counter', () => {
      const values: ExposedValue[] = [];
      each((route, method, figures) => {
        for (const [status, count] of figures.byStatus) values.push({ labels: { route, method, status: String(status) }, value: count });
      });
      return values;
    });
    const latency = exposed(names.latency, 'HTTP request latency by route pattern and method.', 'histogram', () => {
      const values: ExposedValue[] = [];
      const bucket = `${names.latency}_bucket`;
      each((route, method, figures) => {
        let cumulative = 0;
        this.bounds.forEach((le, i) => {
          cumulative += figures.buckets[i]!;
          values.push({ labels: { route, method, le }, value: cumulative, metricName: bucket });
        });
        values.push({ labels: { route, method, le: '+Inf' }, value: figures.count, metricName: bucket });
        values.push({ labels: { route, method }, value: figures.sum, metricName: `${names.latency}_sum` });
        values.push({ labels: { route, method }, value: figures.count, metricName: `${names.latency}_count` });
      });
      return values;
    });
    register.registerMetric(requests as never);
    register.registerMetric(latency as never);
  }
}
