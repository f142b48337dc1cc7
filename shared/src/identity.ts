/** Synthetic email for a platform user: `<platform>_<platform user id>@<service domain>`. */
export function platformUserEmail(platform: string, platformUserId: string, serviceDomain: string): string {
  return `${platform.toLowerCase()}_${platformUserId}@${serviceDomain.toLowerCase()}`;
}
