import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { BrandCredentials, ChatPlatform, GroupStore } from '../core/types.ts';

const FILE_VERSION = 1;
const fileSchema = z.object({ v: z.literal(FILE_VERSION), iv: z.string(), tag: z.string(), data: z.string() });
const contentSchema = z.record(z.string(), z.object({ brandId: z.string(), securityKey: z.string() }));

/**
 * A `GroupStore` in one JSON file (`<dir>/groups.json`): the whole map encrypted with AES-256-GCM under the
 * master key (fresh 12-byte IV per write, auth tag checked on read), written atomically (temporary file,
 * fsync'd by writeFile, then rename). Writes are serialized in-process. Keys never reach a log.
 */
export function createFileGroupStore(options: { dir: string; masterKey: Buffer; fileName?: string }): GroupStore {
  if (options.masterKey.length !== 32) throw new Error('The group store key must be 32 bytes');
  const path = join(options.dir, options.fileName ?? 'groups.json');
  let cache: Map<string, BrandCredentials> | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  const keyOf = (platform: ChatPlatform, groupId: string) => `${platform}:${groupId}`;

  async function load(): Promise<Map<string, BrandCredentials>> {
    if (cache) return cache;
    let raw: string;
    try {
      raw = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        cache = new Map();
        return cache;
      }
      throw error;
    }
    const file = fileSchema.parse(JSON.parse(raw));
    const decipher = createDecipheriv('aes-256-gcm', options.masterKey, Buffer.from(file.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(file.tag, 'base64'));
    let plain: string;
    try {
      plain = Buffer.concat([decipher.update(Buffer.from(file.data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`${path} cannot be decrypted: BOT_MASTER_KEY is not the key it was written with`);
    }
    cache = new Map(Object.entries(contentSchema.parse(JSON.parse(plain))));
    return cache;
  }

  async function persist(map: Map<string, BrandCredentials>): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', options.masterKey, iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(Object.fromEntries(map)), 'utf8'), cipher.final()]);
    const body = JSON.stringify({
      v: FILE_VERSION,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    });
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, body, { mode: 0o600, flush: true });
    await rename(temporary, path);
  }

  function exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  }

  return {
    get: (platform, groupId) => exclusive(async () => (await load()).get(keyOf(platform, groupId))),
    list: (platform) =>
      exclusive(async () =>
        [...(await load()).keys()]
          .filter((key) => key.startsWith(`${platform}:`))
          .map((key) => key.slice(platform.length + 1)),
      ),
    set: (platform, groupId, credentials) =>
      exclusive(async () => {
        const map = new Map(await load());
        map.set(keyOf(platform, groupId), { brandId: credentials.brandId, securityKey: credentials.securityKey });
        await persist(map);
        cache = map;
      }),
    delete: (platform, groupId) =>
      exclusive(async () => {
        const map = new Map(await load());
        if (!map.delete(keyOf(platform, groupId))) return;
        await persist(map);
        cache = map;
      }),
  };
}
