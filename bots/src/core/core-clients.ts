import { type Clock, type CoreClient, createCoreClient } from '@pts/shared';
import type { BrandCredentials } from './types.ts';

/**
 * One core-api client per brand and key, for every adapter. A client spreads its signature timestamps so
 * that two distinct calls with identical bodies never share a signature (core-api answers a repeated
 * signature with the first call's answer); that only holds when the same client signs them all. A client
 * built per call made ten simultaneous "gm"s collide.
 */
export function createCoreClients(options: {
  baseUrl: string;
  clock: Clock;
  fetch?: typeof fetch | undefined;
}): (credentials: BrandCredentials) => CoreClient {
  const clients = new Map<string, CoreClient>();
  return (credentials) => {
    const key = `${credentials.brandId.toLowerCase()}\u0000${credentials.securityKey}`;
    let client = clients.get(key);
    if (!client) {
      client = createCoreClient({
        baseUrl: options.baseUrl,
        brandId: credentials.brandId,
        securityKey: credentials.securityKey,
        clock: options.clock,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      clients.set(key, client);
    }
    return client;
  };
}
