import type { RequestHandler } from 'express';

export interface CorsOptions {
  /** Hostnames always allowed (the service's own domains). */
  serviceDomains: string[];
  /** Brands' authorized domains; cached here and refreshed on `refresh()` or after `ttlMs`. */
  loadBrandDomains: () => Promise<string[]>;
  ttlMs?: number;
  /** The injected clock's time in ms (default: the system clock). */
  now: () => number;
}

/** Whether `hostname` is `domain` or one of its subdomains. */
export function hostMatchesDomain(hostname: string, domain: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  const base = domain.toLowerCase().replace(/\.$/, '');
  return host === base || host.endsWith(`.${base}`);
}

/**
 * CORS per spec section 5: the allowed origin is echoed only when its host is a brand's authorized domain
 * (or a subdomain) or one of the service's own domains — never `*`. Every path answers OPTIONS.
 */
export function createCors(options: CorsOptions): RequestHandler & { refresh(): void } {
  const ttlMs = options.ttlMs ?? 30_000;
  const { now } = options;
  let domains: string[] = [];
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  const ensureFresh = async () => {
    const age = now() - loadedAt;
    if (loadedAt > 0 && age >= 0 && age < ttlMs) return;
    loading ??= options
      .loadBrandDomains()
      .then((loaded) => {
        domains = loaded;
        loadedAt = now();
      })
      .finally(() => {
        loading = undefined;
      });
    await loading;
  };

  const isAllowed = (origin: string) => {
    let hostname: string;
    try {
      const url = new URL(origin);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
      hostname = url.hostname;
    } catch {
      return false;
    }
    return [...options.serviceDomains, ...domains].some((domain) => hostMatchesDomain(hostname, domain));
  };

  const middleware: RequestHandler = async (req, res, next) => {
    const origin = req.headers.origin;
    res.vary('Origin');
    if (origin) {
      try {
        await ensureFresh();
      } catch (error) {
        return next(error);
      }
      if (isAllowed(origin)) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization');
        res.setHeader('Access-Control-Max-Age', '600');
      }
    }
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next();
  };
  return Object.assign(middleware, {
    refresh: () => {
      loadedAt = 0;
    },
  });
}
