/** Synthetic email for a platform user: `<platform>_<platform user id>@<service domain>`. */
export function platformUserEmail(platform: string, platformUserId: string, serviceDomain: string): string {
  return `${platform.toLowerCase()}_${platformUserId}@${serviceDomain.toLowerCase()}`;
}

/** Platforms whose users get synthetic identities (`<platform>_<id>@<service domain>`). */
export const IDENTITY_PLATFORMS = [
  'discord',
  'telegram',
  'x',
  'twitter',
  'slack',
  'github',
  'google',
  'spotify',
  'instagram',
  'tiktok',
  'apple',
  'wordpress',
] as const;

const SYNTHETIC_IDENTITY = /^([a-z]+)_([^@\s]+)@/;

/**
 * The platform and platform user id of a synthetic identity, or undefined for an ordinary email.
 * `twitter_…` is reported as `x`.
 */
export function parsePlatformIdentity(identityKey: string): { platform: string; platformUserId: string } | undefined {
  const match = SYNTHETIC_IDENTITY.exec(identityKey.toLowerCase());
  if (!match) return undefined;
  const [, platform, platformUserId] = match as unknown as [string, string, string];
  if (!(IDENTITY_PLATFORMS as readonly string[]).includes(platform)) return undefined;
  return { platform: platform === 'twitter' ? 'x' : platform, platformUserId };
}

/** Hides most of an email's local part (`jo***@example.com`), for public listings such as leaderboards. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  const local = email.slice(0, at);
  return `${local.slice(0, Math.min(2, local.length - 1 || 1))}***${email.slice(at)}`;
}
